"""Deciding repeats in bulk (review.services and review.selectors): reject an album as a
repeat of the published album it repeats, undo that rejection from the history, and the
re-posts of a source that repeats itself, read off the near-duplicate flags and decided with
the album they repeat. Portable."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from catalog.models import Runway, RunwayImage
from catalog.services import record_update
from review.models import ReviewEvent
from review.selectors import records_reposts
from review.services import (
    TransitionRefused,
    record_reject,
    record_reject_as_repeat,
    record_reject_undo,
    record_reposts_reject,
)
from tests.factories import BrandFactory, RunwayFactory, images_of
from tests.support import curator

pytestmark = pytest.mark.django_db

Action = ReviewEvent.Action


def show(title: str, images: int, **fields) -> Runway:
    return RunwayFactory(title=title, images=images, images__shots=1, **fields)


def repeating(album: Runway, of: Runway, *, count: int | None = None) -> Runway:
    """Flag `count` (default all) of `album`'s images as near-duplicates of `of`'s."""
    pairs = list(zip(images_of(album), images_of(of), strict=False))[:count]
    for image, twin in pairs:
        RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=twin)
    return album


def older(album: Runway, minutes: int) -> Runway:
    Runway.objects.filter(pk=album.pk).update(
        created_at=album.created_at - timedelta(minutes=minutes)
    )
    return Runway.objects.get(pk=album.pk)


@pytest.fixture
def acme():
    return BrandFactory(name="Acme")


class TestRejectAsRepeat:
    def test_an_album_repeating_a_published_one_is_rejected_as_its_duplicate(self, acme, editor):
        original = show("Acme Fall 2024", 4, brand=acme, season_code="FW24", published=True)
        again = repeating(show("Acme AW24", 5, brand=acme, season_code="AW24"), original)

        event = record_reject_as_repeat(record=again, actor=editor)

        again.refresh_from_db()
        assert (again.status, event.action) == ("rejected", Action.REJECT_REPEAT)
        assert again.reject_reason == (
            f"Duplicate of “Acme Fall 2024” (runway {original.pk}), which it repeats."
        )

    def test_an_album_repeating_only_a_pending_one_is_left_as_it_is(self, acme, editor):
        first = show("Acme Fall 2024", 3, brand=acme, season_code="FW24")
        again = repeating(show("Acme AW24", 3, brand=acme, season_code="AW24"), first)

        with pytest.raises(TransitionRefused, match="repeats no published album"):
            record_reject_as_repeat(record=again, actor=editor)

        assert Runway.objects.get(pk=again.pk).status == "pending"
        assert not ReviewEvent.objects.exists()


class TestUndo:
    @pytest.fixture
    def rejected(self, acme, editor):
        original = show("Acme Fall 2024", 3, brand=acme, season_code="FW24", published=True)
        again = repeating(show("Acme AW24", 3, brand=acme, season_code="AW24"), original)
        return again, record_reject_as_repeat(record=again, actor=editor)

    def test_a_rejection_as_a_repeat_is_undone_with_a_row_of_its_own(self, rejected, editor):
        again, rejection = rejected

        row = record_reject_undo(event=rejection, actor=editor)

        again.refresh_from_db()
        assert (again.status, again.reject_reason) == ("pending", "")
        assert (row.action, row.from_status, row.to_status) == (
            Action.RESTORE,
            "rejected",
            "pending",
        )
        assert rejection.reason in row.reason
        # the history keeps both: the rejection and who undid it
        assert list(again.review_events.values_list("action", flat=True)) == [
            Action.REJECT_REPEAT,
            Action.RESTORE,
        ]

    def test_it_is_refused_once_the_album_changed_since(self, rejected, editor):
        again, rejection = rejected
        record_update(record=again, actor=curator(), changes={"title": "Renamed"})

        with pytest.raises(TransitionRefused, match="changed since it was rejected"):
            record_reject_undo(event=rejection, actor=editor)

        assert Runway.objects.get(pk=again.pk).status == "rejected"

    def test_it_is_refused_twice_and_for_any_other_row(self, rejected, editor, acme):
        again, rejection = rejected
        record_reject_undo(event=rejection, actor=editor)
        plain = record_reject(record=show("Other", 1, brand=acme), actor=editor, reason="No")

        with pytest.raises(TransitionRefused, match="changed since"):
            record_reject_undo(event=rejection, actor=editor)
        with pytest.raises(TransitionRefused, match="Only a rejection as a repeat"):
            record_reject_undo(event=plain, actor=editor)

    def test_it_needs_the_permission_to_reject(self, rejected):
        _, rejection = rejected
        viewer = User.objects.create_user("viewer", is_staff=True)

        with pytest.raises(TransitionRefused, match="permission"):
            record_reject_undo(event=rejection, actor=viewer)


class TestReposts:
    def test_a_source_reposting_an_album_folds_under_the_first_chains_included(self, acme):
        first = older(show("Acme FW24", 3, brand=acme, season_code="FW24", source="vogue"), 30)
        second = older(
            repeating(
                show("Acme FW24 again", 3, brand=acme, season_code="AW24", source="vogue"), first
            ),
            20,
        )
        # the third repeats the second (its nearest), which repeats the first
        third = repeating(
            show("Acme FW24 third", 3, brand=acme, season_code="F24", source="vogue"), second
        )

        folded = records_reposts(records=[first])

        assert folded == {first.pk: [second, third]}

    @pytest.mark.parametrize("case", ["other source", "one image new", "older than it"])
    def test_an_album_that_is_not_a_repost_stays_on_its_own(self, acme, case):
        first = older(show("Acme FW24", 3, brand=acme, season_code="FW24", source="vogue"), 30)
        source = "wwd" if case == "other source" else "vogue"
        again = show("Acme again", 3, brand=acme, season_code="AW24", source=source)
        repeating(again, first, count=2 if case == "one image new" else None)
        if case == "older than it":
            older(again, 60)

        assert records_reposts(records=[first]) == {}

    def test_deciding_the_first_album_rejects_its_reposts_as_its_duplicates(self, acme, editor):
        first = older(show("Acme FW24", 3, brand=acme, season_code="FW24", source="vogue"), 30)
        again = repeating(
            show("Acme FW24 again", 3, brand=acme, season_code="AW24", source="vogue"), first
        )
        record_reject(record=first, actor=editor, reason="Wrong season")

        events, refused = record_reposts_reject(head=first, actor=editor)

        again.refresh_from_db()
        assert (refused, [event.action for event in events]) == ([], [Action.REJECT_REPEAT])
        assert again.status == "rejected"
        assert again.reject_reason.startswith(f"Duplicate of “Acme FW24” (runway {first.pk})")
