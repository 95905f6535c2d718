"""The transition service: the allowed-transition table, what each transition writes, the
refusals, and the review history it appends. Portable (PostgreSQL and SQLite)."""

import re

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from catalog.models import Runway, RunwayImage, StreetSnapImage
from catalog.services import RecordWriteRefused, StaleRecord, record_update
from review.models import ReviewEvent
from review.selectors import record_review_history
from review.services import (
    TRANSITIONS,
    Action,
    TransitionRefused,
    image_attach_to_previous,
    image_delete,
    image_detach,
    image_make_cover,
    images_attach,
    record_approve,
    record_edit,
    record_reject,
    record_transition,
)
from tests.factories import BrandFactory, RunwayFactory
from tests.review.support import make_runway, make_street_snap
from tests.support import curator

pytestmark = pytest.mark.django_db

ALL_STATUSES = ["pending", "published", "rejected"]
ALLOWED = {("approve", "pending"), ("reject", "pending"), ("unpublish", "published")}
KINDS = [
    pytest.param(make_runway, id="runway"),
    pytest.param(make_street_snap, id="street"),
]


def image_rows(record) -> list[tuple]:
    """Every column of every image row of the record (live or not): what must never change."""
    model = RunwayImage if isinstance(record, Runway) else StreetSnapImage
    field = "runway" if isinstance(record, Runway) else "street_snap"
    return sorted(model.objects.filter(**{field: record}).values_list())


class TestTheTable:
    def test_the_table_is_exactly_the_editor_transitions(self):
        table = {(action, t.source, t.target, t.needs_reason) for action, t in TRANSITIONS.items()}

        assert table == {
            ("approve", "pending", "published", False),
            ("reject", "pending", "rejected", True),
            # a rejection as a duplicate of the album it repeats: the one an editor can undo
            ("reject_repeat", "pending", "rejected", True),
            ("unpublish", "published", "rejected", True),
        }

    @pytest.mark.parametrize("make", KINDS)
    @pytest.mark.parametrize("status", ALL_STATUSES)
    @pytest.mark.parametrize("action", ["approve", "reject", "unpublish"])
    def test_each_action_from_each_status(self, make, status, action, editor):
        record = make(status=status)
        before = type(record).objects.values().get(pk=record.pk)

        if (action, status) in ALLOWED:
            event = record_transition(
                record=record, action=action, actor=editor, reason="Blurry photos"
            )
            record.refresh_from_db()
            assert record.status == TRANSITIONS[action].target
            assert (event.from_status, event.to_status) == (status, record.status)
        else:
            with pytest.raises(TransitionRefused, match=f"Cannot {action} .*it is"):
                record_transition(
                    record=record, action=action, actor=editor, reason="Blurry photos"
                )
            assert type(record).objects.values().get(pk=record.pk) == before
            assert not ReviewEvent.objects.exists()

    def test_an_unknown_action_is_refused(self, editor):
        with pytest.raises(TransitionRefused, match="Unknown action"):
            record_transition(record=RunwayFactory(), action="publish", actor=editor)

    @pytest.mark.parametrize("make", KINDS)
    def test_a_deleted_record_is_refused(self, make, editor):
        record = make(deleted_at=timezone.now())

        with pytest.raises(RecordWriteRefused, match="deleted"):
            record_approve(record=record, actor=editor)


class TestApprove:
    def test_approve_sets_the_review_fields_and_first_publication(self, editor):
        runway = make_runway()
        before = timezone.now()

        record_approve(record=runway, actor=editor)

        runway.refresh_from_db()
        assert runway.status == "published"
        assert runway.reviewer == "anna"
        assert before <= runway.reviewed_at <= timezone.now()
        assert runway.published_at == runway.reviewed_at
        assert runway.version == 2

    def test_approve_applies_the_editors_field_edits(self, editor):
        runway = make_runway(title="Acme  fall", season="Fall")
        brand = BrandFactory(name="Acme Paris")

        event = record_approve(
            record=runway,
            actor=editor,
            changes={"title": "Acme Fall 2024", "brand": brand, "year": 2024, "season": "Fall"},
        )

        runway.refresh_from_db()
        assert (runway.title, runway.brand_id, runway.year) == ("Acme Fall 2024", brand.pk, 2024)
        assert runway.status == "published"
        # Only what actually changed is recorded.
        assert set(event.changes) == {"title", "brand"}
        assert event.changes["title"] == ["Acme  fall", "Acme Fall 2024"]
        assert event.changes["brand"][1] == "Acme Paris"

    def test_approve_of_a_street_title_keeps_the_entity_key_in_step(self, editor):
        snap = make_street_snap(title="Day  one")

        record_approve(record=snap, actor=editor, changes={"title": " Street   Day One "})

        snap.refresh_from_db()
        assert snap.title_key == "Street Day One"

    def test_an_edit_that_takes_another_albums_entity_key_is_refused(self, editor):
        taken = RunwayFactory(season_code="FW24", collection_type="couture")
        runway = make_runway(brand=taken.brand, season_code="SS25", collection_type="couture")

        with pytest.raises(RecordWriteRefused, match="Another live runway"):
            record_approve(record=runway, actor=editor, changes={"season_code": "FW24"})

        runway.refresh_from_db()
        assert (runway.status, runway.season_code, runway.version) == ("pending", "SS25", 1)
        assert not ReviewEvent.objects.exists()

    def test_a_field_that_is_not_editable_is_a_programming_error(self, editor):
        with pytest.raises(ValueError, match="Not editable"):
            record_approve(record=make_runway(), actor=editor, changes={"status": "published"})

    def test_published_at_keeps_the_first_publication(self, editor):
        runway = make_runway()
        record_approve(record=runway, actor=editor)
        runway.refresh_from_db()
        first = runway.published_at
        record_reject(record=runway, actor=editor, reason="Wrong season", action=Action.UNPUBLISH)
        # A re-crawl reopens it (the ingest pipeline's write, simulated here).
        Runway.objects.filter(pk=runway.pk).update(status="pending", reject_reason="")

        record_approve(record=runway, actor=editor)

        runway.refresh_from_db()
        assert runway.published_at == first
        assert runway.reviewed_at > first
        assert runway.reject_reason == ""

    @pytest.mark.parametrize("make", KINDS)
    def test_image_rows_are_untouched_across_approve_edit_approve(self, make, editor):
        record = make(images=6)
        rows = image_rows(record)
        assert rows

        record_approve(record=record, actor=editor, changes={"title": "First title"})
        record_update(
            actor=curator(), record=record, changes={"title": "Second title", "description": "x"}
        )
        record_reject(record=record, actor=editor, reason="Re-check", action=Action.UNPUBLISH)
        type(record).objects.filter(pk=record.pk).update(status="pending")
        record_approve(record=record, actor=editor, changes={"title": "Third title"})

        assert image_rows(record) == rows


class TestRejectAndUnpublish:
    @pytest.mark.parametrize("make", KINDS)
    def test_reject_needs_a_reason(self, make, editor):
        record = make()

        for blank in ["", "   \n"]:
            with pytest.raises(TransitionRefused, match="reason is required"):
                record_reject(record=record, actor=editor, reason=blank)

        record.refresh_from_db()
        assert record.status == "pending"

    def test_reject_records_reviewer_and_reason(self, editor):
        snap = make_street_snap()

        record_reject(record=snap, actor=editor, reason="  Not street style  ")

        snap.refresh_from_db()
        assert (snap.status, snap.reviewer, snap.reject_reason) == (
            "rejected",
            "anna",
            "Not street style",
        )
        assert snap.published_at is None

    def test_unpublish_needs_a_reason_and_keeps_published_at(self, editor):
        runway = make_runway(published=True)
        published_at = runway.published_at

        with pytest.raises(TransitionRefused, match="reason is required"):
            record_reject(record=runway, actor=editor, reason="", action=Action.UNPUBLISH)
        record_reject(
            record=runway, actor=editor, reason="Rights withdrawn", action=Action.UNPUBLISH
        )

        runway.refresh_from_db()
        assert (runway.status, runway.reject_reason) == ("rejected", "Rights withdrawn")
        assert runway.published_at == published_at

    def test_field_edits_come_only_with_approve(self, editor):
        runway = make_runway()

        with pytest.raises(TransitionRefused, match="applied with approve"):
            record_transition(
                record=runway, action="reject", actor=editor, reason="x", changes={"title": "t"}
            )


class TestVersion:
    def test_every_transition_bumps_the_version(self, editor):
        runway = make_runway()

        record_approve(record=runway, actor=editor)
        record_reject(record=runway, actor=editor, reason="r", action=Action.UNPUBLISH)

        runway.refresh_from_db()
        assert runway.version == 3

    def test_a_stale_version_is_refused_and_nothing_is_written(self, editor):
        runway = make_runway()
        record_update(actor=curator(), record=runway, changes={"title": "Edited by someone else"})

        with pytest.raises(StaleRecord) as refused:
            record_approve(
                record=runway, actor=editor, changes={"title": "Mine"}, expected_version=1
            )

        runway.refresh_from_db()
        assert (runway.status, runway.title, runway.version) == (
            "pending",
            "Edited by someone else",
            2,
        )
        assert refused.value.record.version == 2
        assert not ReviewEvent.objects.exists()


class TestPermissions:
    @pytest.mark.parametrize("make", KINDS)
    def test_without_publish_permission_approve_and_unpublish_are_refused(self, make, make_editor):
        junior = make_editor("junior", publish=False)
        pending, published = make(), make(published=True)

        with pytest.raises(TransitionRefused, match="permission to approve"):
            record_approve(record=pending, actor=junior)
        with pytest.raises(TransitionRefused, match="permission to unpublish"):
            record_reject(record=published, actor=junior, reason="r", action=Action.UNPUBLISH)
        record_reject(record=pending, actor=junior, reason="Off topic")

        assert type(pending).objects.get(pk=published.pk).status == "published"
        assert type(pending).objects.get(pk=pending.pk).status == "rejected"

    @pytest.mark.parametrize("make", KINDS)
    def test_approving_with_field_edits_needs_the_change_permission_too(self, make, editor):
        # A publisher who may not edit: approve publishes the album as it stands; edits
        # carried by the approve are refused like a plain save of them would be.
        publisher = User.objects.create_user("pia", is_staff=True)
        publisher.user_permissions.set(
            editor.groups.get().permissions.exclude(codename__startswith="change_")
        )
        publisher = User.objects.get(pk=publisher.pk)
        record, other = make(title="As crawled"), make()

        plural = re.escape(str(type(record)._meta.verbose_name_plural))
        with pytest.raises(
            RecordWriteRefused, match=rf"^You do not have permission to change {plural}\.$"
        ):
            record_approve(record=record, actor=publisher, changes={"title": "Edited"})
        record_approve(record=other, actor=publisher)

        record.refresh_from_db()
        assert (record.status, record.title, record.version) == ("pending", "As crawled", 1)
        assert type(record).objects.get(pk=other.pk).status == "published"

    def test_a_user_outside_the_editors_group_can_do_nothing(self):
        stranger = User.objects.create_user("stranger", is_staff=True)
        runway = make_runway()

        for action in ["approve", "reject"]:
            with pytest.raises(TransitionRefused, match="permission"):
                record_transition(record=runway, action=action, actor=stranger, reason="r")

    def test_an_inactive_editor_can_do_nothing(self, editor):
        editor.is_active = False
        editor.save()

        with pytest.raises(TransitionRefused, match="permission"):
            record_approve(record=make_runway(), actor=editor)


class TestHistory:
    def test_one_row_per_transition_in_order_with_actor_and_reason(self, make_editor):
        anna, bob = make_editor("anna"), make_editor("bob")
        runway = make_runway()

        record_approve(record=runway, actor=anna, changes={"title": "Better"})
        record_reject(record=runway, actor=bob, reason="Wrong brand", action=Action.UNPUBLISH)
        Runway.objects.filter(pk=runway.pk).update(status="pending")  # a re-crawl reopens it
        record_reject(record=runway, actor=anna, reason="Still wrong")

        rows = list(
            ReviewEvent.objects.filter(runway=runway).values_list(
                "actor__username", "action", "from_status", "to_status", "reason", "record_version"
            )
        )
        assert rows == [
            ("anna", "approve", "pending", "published", "", 2),
            ("bob", "unpublish", "published", "rejected", "Wrong brand", 3),
            ("anna", "reject", "pending", "rejected", "Still wrong", 4),
        ]

    def test_history_belongs_to_its_record_and_kind(self, editor):
        runway, snap = make_runway(), make_street_snap()

        record_approve(record=runway, actor=editor)
        record_reject(record=snap, actor=editor, reason="r")

        assert list(runway.review_events.values_list("action", flat=True)) == ["approve"]
        assert list(snap.review_events.values_list("action", flat=True)) == ["reject"]

    def test_refusals_and_edits_before_publication_write_no_history(self, editor):
        pending, published = make_runway(), make_runway(published=True)

        record_edit(record=pending, actor=editor, changes={"title": "Edited"})
        with pytest.raises(TransitionRefused):
            record_approve(record=published, actor=editor)
        with pytest.raises(TransitionRefused):
            record_reject(record=published, actor=editor, reason="")

        assert not ReviewEvent.objects.exists()


class TestEditsWhilePublished:
    @pytest.mark.parametrize("make", KINDS)
    def test_an_edit_of_a_published_album_is_a_history_row(self, make, make_editor):
        # Given a published album
        anna, bob = make_editor("anna"), make_editor("bob")
        record = make(title="Acme")
        record_approve(record=record, actor=anna)

        # When an editor who may publish renames it
        locked, diff = record_edit(record=record, actor=bob, changes={"title": "Acme FW24"})

        # Then the history says who changed the public album, and what
        event = ReviewEvent.objects.get(action="edit")
        assert (event.actor, event.from_status, event.to_status) == (bob, "published", "published")
        assert event.changes == {"title": ["Acme", "Acme FW24"]} == diff
        assert event.record_version == locked.version == 3
        assert event.get_action_display() == "Edited while published"
        assert type(record).objects.get(pk=record.pk).status == "published"

    def test_an_edit_that_changes_nothing_writes_no_row(self, editor):
        runway = make_runway(title="Same", published=True)

        record_edit(record=runway, actor=editor, changes={"title": "Same"})

        assert not ReviewEvent.objects.exists()

    def test_an_editor_who_may_not_publish_is_refused_and_nothing_is_written(self, make_editor):
        junior = make_editor("junior", publish=False)
        runway = make_runway(title="Public", published=True)

        with pytest.raises(RecordWriteRefused, match="is published"):
            record_edit(record=runway, actor=junior, changes={"title": "Renamed"})

        runway.refresh_from_db()
        assert (runway.title, runway.version) == ("Public", 1)
        assert not ReviewEvent.objects.exists()

    def test_an_image_operation_is_logged_with_its_note_only_on_a_published_album(self, editor):
        published, pending = make_runway(images=2, published=True), make_runway(images=2)

        for runway in [published, pending]:
            last = runway.images.order_by("sort_order").last()
            record, note = image_delete(image=last, actor=editor)
            assert (record.pk, record.image_count) == (runway.pk, 1)
            assert note == f"Deleted image 2 (id {last.pk})."

        [event] = ReviewEvent.objects.all()
        assert (event.runway_id, event.action, event.reason, event.changes) == (
            published.pk,
            "edit",
            f"Deleted image 2 (id {published.images.order_by('sort_order').last().pk}).",
            {},
        )

    def test_an_image_operation_and_its_history_row_commit_together(self, editor, monkeypatch):
        runway = make_runway(images=2, published=True)

        def broken_create(**kwargs):
            raise RuntimeError("history write failed")

        monkeypatch.setattr(ReviewEvent.objects, "create", broken_create)
        with pytest.raises(RuntimeError):
            image_delete(image=runway.images.order_by("sort_order").last(), actor=editor)

        runway.refresh_from_db()
        assert (runway.image_count, runway.version, runway.images.live().count()) == (2, 1, 2)

    def test_the_history_reads_in_order_with_the_edits(self, make_editor):
        anna, bob = make_editor("anna"), make_editor("bob")
        runway = make_runway(title="Acme")
        record_approve(record=runway, actor=anna)
        record_edit(record=runway, actor=bob, changes={"title": "Acme FW"})
        record_reject(record=runway, actor=anna, reason="Wrong season", action=Action.UNPUBLISH)

        lines = record_review_history(record=Runway.objects.get(pk=runway.pk))

        assert [(line.who, line.action, line.from_status, line.to_status) for line in lines] == [
            ("anna", "Approved", "pending", "published"),
            ("bob", "Edited while published", "published", "published"),
            ("anna", "Unpublished", "published", "rejected"),
        ]
        assert lines[1].changes == {"Title": ["Acme", "Acme FW"]}

    def test_the_transition_and_its_history_row_commit_together(self, editor, monkeypatch):
        runway = make_runway(title="Original")

        def broken_create(**kwargs):
            raise RuntimeError("history write failed")

        monkeypatch.setattr(ReviewEvent.objects, "create", broken_create)
        with pytest.raises(RuntimeError):
            record_approve(record=runway, actor=editor, changes={"title": "Lost"})

        runway.refresh_from_db()
        assert (runway.status, runway.title, runway.version) == ("pending", "Original", 1)


# --- image operations: one service each, with its note and history row ------------------------


def _street_images(snap) -> list:
    """main 1, its detail 2, main 3, its detail 4 (make_street_snap's layout)."""
    return list(snap.images.order_by("sort_order"))


IMAGE_OPERATIONS = [
    pytest.param(
        lambda images, **who: image_delete(image=images[0], **who),
        "Deleted image 1 (id {0}); the cover moved to image 2 (id {1}).",
        id="delete-the-cover",
    ),
    pytest.param(
        lambda images, **who: image_delete(image=images[3], **who),
        "Deleted image 4 (id {3}).",
        id="delete",
    ),
    pytest.param(
        lambda images, **who: image_make_cover(image=images[2], **who),
        "Image 3 (id {2}) is now the cover.",
        id="cover",
    ),
    pytest.param(
        lambda images, **who: images_attach(images=[images[2]], main=images[0], **who),
        "Image 3 (id {2}) attached to main image 1 (id {0}).",
        id="attach",
    ),
    pytest.param(
        lambda images, **who: images_attach(images=[images[3], images[2]], main=images[0], **who),
        "Images 3 (id {2}), 4 (id {3}) attached to main image 1 (id {0}).",
        id="attach-several",
    ),
    pytest.param(
        lambda images, **who: image_attach_to_previous(image=images[2], **who),
        "Image 3 (id {2}) is now a detail of image 1 (id {0}).",
        id="attach-previous",
    ),
    pytest.param(
        lambda images, **who: image_detach(image=images[3], **who),
        "Image 4 (id {3}) is now a main image.",
        id="detach",
    ),
]


class TestImageOperations:
    @pytest.mark.parametrize(("operate", "said"), IMAGE_OPERATIONS)
    def test_each_says_what_it_did_and_a_published_album_keeps_it(self, editor, operate, said):
        # Given a published street album and a pending one
        published, pending = make_street_snap(published=True), make_street_snap()

        # When the operation runs on each
        for snap in [published, pending]:
            images = _street_images(snap)
            record, note = operate(images, actor=editor, expected_version=1)

            # Then it says what it did, in the words the admin shows
            assert note == said.format(*(image.pk for image in images))
            assert (record.pk, record.version) == (snap.pk, 2)

        # And only the published album's history has a row for it, at the version it made
        [event] = ReviewEvent.objects.all()
        assert (event.street_snap_id, event.action, event.record_version) == (
            published.pk,
            "edit",
            2,
        )
        assert event.reason == said.format(*(image.pk for image in _street_images(published)))

    @pytest.mark.parametrize(("operate", "said"), IMAGE_OPERATIONS)
    def test_a_stale_page_is_refused_and_nothing_is_written(self, editor, operate, said):
        snap = make_street_snap(published=True)
        images = _street_images(snap)
        before = image_rows(snap)

        with pytest.raises(StaleRecord):
            operate(images, actor=editor, expected_version=0)

        assert image_rows(snap) == before
        assert not ReviewEvent.objects.exists()

    def test_a_refused_operation_writes_no_history(self, editor):
        snap = make_street_snap(published=True)
        images = _street_images(snap)

        with pytest.raises(RecordWriteRefused, match="already a main image"):
            image_detach(image=images[0], actor=editor)

        assert not ReviewEvent.objects.exists()
