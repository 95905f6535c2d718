"""The review history is append-only, names exactly one record, and outlives nothing it
describes. Portable."""

import pytest
from django.db import IntegrityError, transaction
from django.db.models.deletion import ProtectedError
from django.utils import formats, timezone

from review.models import ReviewEvent, ReviewHistoryIsAppendOnly
from review.services import record_approve
from tests.factories import RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def event(editor):
    return record_approve(record=RunwayFactory(), actor=editor)


def test_a_row_cannot_be_saved_again(event):
    event.reason = "rewritten"

    with pytest.raises(ReviewHistoryIsAppendOnly):
        event.save()

    assert ReviewEvent.objects.get().reason == ""


def test_a_row_cannot_be_deleted(event):
    with pytest.raises(ReviewHistoryIsAppendOnly):
        event.delete()

    assert ReviewEvent.objects.count() == 1


@pytest.mark.parametrize(
    "bulk",
    [
        lambda qs: qs.update(reason="x"),
        lambda qs: qs.delete(),
        lambda qs: ReviewEvent.objects.bulk_update(list(qs), ["reason"]),
    ],
    ids=["update", "delete", "bulk_update"],
)
def test_bulk_paths_are_shut_too(event, bulk):
    with pytest.raises(ReviewHistoryIsAppendOnly), transaction.atomic():
        bulk(ReviewEvent.objects.all())

    assert ReviewEvent.objects.values_list("reason", flat=True).get() == ""


def test_an_event_names_exactly_one_record(editor):
    runway, snap = RunwayFactory(), StreetSnapFactory()
    common = {
        "action": "approve",
        "from_status": "pending",
        "to_status": "published",
        "actor": editor,
        "at": timezone.now(),
        "record_version": 2,
    }

    for records in [{}, {"runway": runway, "street_snap": snap}]:
        with pytest.raises(IntegrityError), transaction.atomic():
            ReviewEvent.objects.create(**records, **common)

    assert not ReviewEvent.objects.exists()


def test_a_record_or_an_editor_with_history_cannot_be_hard_deleted(event, editor):
    with pytest.raises(ProtectedError):
        event.runway.delete()
    with pytest.raises(ProtectedError):
        editor.delete()

    assert ReviewEvent.objects.get().record == event.runway


def test_a_row_names_its_time_as_the_admin_writes_times(event):
    shown = formats.date_format(timezone.localtime(event.at), "DATETIME_FORMAT")

    assert str(event) == f"Approved by {event.actor_id} at {shown}"
