"""A record's review history as its page shows it: the transitions, with the re-crawls that
reopened a rejected album merged in (ingest cannot write review's history). Portable."""

from datetime import timedelta

import pytest
from django.utils import timezone

from catalog.models import Runway
from catalog.services import StreetSnapContent, runway_reopen, street_snap_reopen
from review.selectors import record_review_history
from review.services import Action, history_append, record_approve, record_reject
from tests.review.support import make_runway, make_street_snap, recrawl, recrawled_image

pytestmark = pytest.mark.django_db


def summary(record) -> list[tuple]:
    return [
        (line.who, line.action, line.from_status, line.to_status)
        for line in record_review_history(record=current(record))
    ]


def current(record):
    """The record as the admin reads it (the services write through locked copies)."""
    return type(record).objects.get(pk=record.pk)


def test_transitions_alone_are_the_history_rows_in_order(make_editor):
    anna, bob = make_editor("anna"), make_editor("bob")
    runway = make_runway()
    record_approve(record=runway, actor=anna, changes={"title": "Better"})
    record_reject(record=runway, actor=bob, reason="Takedown", action=Action.UNPUBLISH)

    lines = record_review_history(record=current(runway))

    assert summary(runway) == [
        ("anna", "Approved", "pending", "published"),
        ("bob", "Unpublished", "published", "rejected"),
    ]
    assert lines[0].changes["Title"][1] == "Better"
    assert lines[1].reason == "Takedown"
    assert not any(line.recrawl for line in lines)


def test_the_order_is_the_records_own_not_the_web_servers_clocks(make_editor, monkeypatch):
    # Two web servers whose clocks disagree by minutes: the later decision, taken on the
    # server whose clock is behind, is stamped earlier than the one before it.
    anna, bob = make_editor("anna"), make_editor("bob")
    runway = make_runway()
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    record_approve(record=runway, actor=anna)
    monkeypatch.setattr(timezone, "now", lambda: now - timedelta(minutes=5))
    record_reject(record=runway, actor=bob, reason="Takedown", action=Action.UNPUBLISH)

    assert summary(runway) == [
        ("anna", "Approved", "pending", "published"),
        ("bob", "Unpublished", "published", "rejected"),
    ]
    assert list(current(runway).review_events.values_list("action", flat=True)) == [
        "approve",
        "unpublish",
    ]


def test_field_edits_are_named_as_the_admin_names_the_field_or_as_stored(editor):
    # An edit of a field the model has since lost keeps the name it was stored under.
    runway = make_runway()
    record_approve(record=runway, actor=editor, changes={"title": "Better"})
    history_append(
        current(runway),
        action=Action.EDIT,
        from_status="published",
        actor=editor,
        changes={"catwalk_notes": ["old", "new"]},
    )

    lines = record_review_history(record=current(runway))

    assert [list(line.changes) for line in lines] == [["Title"], ["catwalk_notes"]]


def test_a_recrawl_after_a_rejection_is_a_line_naming_its_job_and_time(editor):
    runway = make_runway()
    rejection = record_reject(record=runway, actor=editor, reason="Blurry")
    reopened = runway_reopen(runway=runway, **recrawl(runway, ingest_job_id=17))

    rejected, recrawled = record_review_history(record=reopened)

    assert rejected.reason == "Blurry"
    assert (recrawled.who, recrawled.action, recrawled.ingest_job_id) == (
        "ingest job 17",
        "Re-crawled",
        17,
    )
    assert (recrawled.from_status, recrawled.to_status) == ("rejected", "pending")
    # When the re-crawl's images were written, in the reopen's transaction.
    image = reopened.images.live().get()
    assert recrawled.at == image.created_at
    assert rejection.at < recrawled.at <= reopened.updated_at


def test_the_line_keeps_its_time_when_editors_work_on_the_album_afterwards(editor):
    snap = make_street_snap(images=2, details=False)
    record_reject(record=snap, actor=editor, reason="Wrong city")
    content = StreetSnapContent(
        city=snap.city,
        year=snap.year,
        month=snap.month,
        title="New crawl",
        description="",
        source="vogue",
        source_url="https://example.com/street/1",
        ingest_job_id=5,
        content_checksum="5" * 64,
    )
    reopened = street_snap_reopen(street_snap=snap, content=content, images=[recrawled_image(5)])
    written = reopened.images.live().get().created_at
    record_approve(record=reopened, actor=editor)

    lines = record_review_history(record=current(reopened))

    assert [line.action for line in lines] == ["Rejected", "Re-crawled", "Approved"]
    # Still the re-crawl's own time, not the record's later updated_at.
    assert lines[1].at == written < lines[2].at
    assert lines[1].ingest_job_id == 5  # the latest reopen: the job the record names


def test_every_reopen_shows_and_only_the_latest_names_its_job(make_editor):
    anna = make_editor("anna")
    runway = make_runway()
    record_reject(record=runway, actor=anna, reason="One")
    runway = runway_reopen(runway=runway, **recrawl(runway, ingest_job_id=5))
    record_reject(record=runway, actor=anna, reason="Two")
    runway = runway_reopen(runway=runway, **recrawl(runway, ingest_job_id=9))

    lines = record_review_history(record=runway)

    assert summary(runway) == [
        ("anna", "Rejected", "pending", "rejected"),
        ("ingest", "Re-crawled", "rejected", "pending"),
        ("anna", "Rejected", "pending", "rejected"),
        ("ingest job 9", "Re-crawled", "rejected", "pending"),
    ]
    # The first re-crawl's time is its own images', though the second deleted them.
    assert lines[0].at < lines[1].at < lines[2].at < lines[3].at


def test_a_rejected_album_that_was_not_recrawled_has_no_such_line(editor):
    runway = make_runway()
    record_reject(record=runway, actor=editor, reason="No")

    assert summary(runway) == [("anna", "Rejected", "pending", "rejected")]


def test_a_reopen_without_images_to_date_it_still_shows_undated(editor):
    # Data written outside the services (an operator's SQL): the line is still true, its
    # time unknown.
    runway = make_runway(images=0)
    record_reject(record=runway, actor=editor, reason="No")
    Runway.objects.filter(pk=runway.pk).update(status="pending", ingest_job_id=3)
    runway.refresh_from_db()

    [_, recrawled] = record_review_history(record=runway)

    assert (recrawled.who, recrawled.at) == ("ingest job 3", None)


@pytest.mark.parametrize("reopens", [0, 1, 3])
def test_two_queries_at_most_whatever_the_history(reopens, editor, django_assert_num_queries):
    runway = make_runway()
    for n in range(reopens):
        record_reject(record=runway, actor=editor, reason=f"Round {n}")
        runway = runway_reopen(runway=runway, **recrawl(runway, ingest_job_id=n + 1))
    record_approve(record=runway, actor=editor)
    runway = current(runway)

    with django_assert_num_queries(2 if reopens else 1):
        lines = record_review_history(record=runway)

    assert len(lines) == 2 * reopens + 1
