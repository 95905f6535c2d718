"""catalog.services.curation: field edits, soft-deleting images with cover and image_count
repair, setting the cover, and street grouping, whose invariants a hypothesis state machine
checks after every step. Portable."""

import pytest
from django.utils import timezone
from hypothesis import settings as machine_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from catalog.models import RunwayImage, StreetSnap, StreetSnapImage
from catalog.services import (
    RecordWriteRefused,
    StaleRecord,
    image_delete,
    record_set_cover,
    record_update,
    street_image_attach,
    street_image_attach_to_previous,
    street_image_detach,
    street_images_attach,
)
from tests.catalog.services.support import album
from tests.factories import (
    RunwayFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
    images_of,
)
from tests.support import curator, rollback_each_example

pytestmark = pytest.mark.django_db


def groups(snap: StreetSnap) -> dict[int, list[int]]:
    """{main id: [detail ids]} over live images."""
    live = list(snap.images.live().order_by("sort_order", "pk"))
    result = {i.pk: [] for i in live if not i.is_detail}
    for image in live:
        if image.is_detail:
            result[image.parent_id].append(image.pk)
    return result


def assert_street_invariants(snap: StreetSnap) -> None:
    snap.refresh_from_db()
    everything = {i.pk: i for i in StreetSnapImage.objects.filter(street_snap=snap)}
    live = {pk: i for pk, i in everything.items() if i.deleted_at is None}
    for image in everything.values():
        assert image.is_detail == (image.parent_id is not None)
        if image.parent_id is not None:
            parent = everything.get(image.parent_id)
            # A parent is a main image of the same album: never a detail of a detail.
            assert parent is not None and not parent.is_detail
            if image.deleted_at is None:
                assert parent.deleted_at is None  # a live detail has a live parent
    assert snap.image_count == len(live)
    assert snap.cover_id is None or snap.cover_id in live


class TestThePublishedAlbumsLastImage:
    @pytest.mark.parametrize("layout", ["runway", "Md"])
    def test_it_cannot_be_deleted_even_by_a_superuser(self, layout):
        # Given a published album with two images, one deleted already
        record, images = album(layout, "published")
        image_delete(image=images[0], actor=curator())

        # When the last one is deleted
        with pytest.raises(RecordWriteRefused) as refused:
            image_delete(image=images[1], actor=curator())

        # Then it is refused, and the message says to unpublish first
        assert f"Image {images[1].pk} is the last image of" in str(refused.value)
        assert "unpublish the album first" in str(refused.value)
        record.refresh_from_db()
        assert (record.image_count, record.cover_id) == (1, images[1].pk)
        assert type(images[1]).objects.get(pk=images[1].pk).deleted_at is None

    @pytest.mark.parametrize("status", ["pending", "rejected"])
    def test_an_album_not_on_the_site_may_lose_its_last_image(self, status):
        record, images = album("runway", status)

        image_delete(image=images[0], actor=curator())
        image_delete(image=images[1], actor=curator())

        record.refresh_from_db()
        assert (record.image_count, record.cover_id) == (0, None)


class TestRecordUpdate:
    def test_edits_are_saved_and_the_version_bumped(self):
        runway = RunwayFactory(images=1)

        record, diff = record_update(
            actor=curator(), record=runway, changes={"title": "New", "year": 2025}
        )

        runway.refresh_from_db()
        assert (runway.title, runway.year, runway.version) == ("New", 2025, 2)
        assert record.version == 2
        assert set(diff) == {"title", "year"}

    def test_an_edit_that_changes_nothing_writes_nothing(self):
        runway = RunwayFactory(images=1)

        _, diff = record_update(actor=curator(), record=runway, changes={"title": runway.title})

        runway.refresh_from_db()
        assert diff == {} and runway.version == 1

    def test_a_stale_edit_is_refused(self):
        runway = RunwayFactory(images=1)
        record_update(actor=curator(), record=runway, changes={"title": "First"})

        with pytest.raises(StaleRecord):
            record_update(
                actor=curator(), record=runway, changes={"title": "Second"}, expected_version=1
            )

        runway.refresh_from_db()
        assert runway.title == "First"

    def test_a_street_edit_onto_a_taken_entity_key_is_refused(self):
        StreetSnapFactory(city="Paris", year=2026, month=3, title="Day One")
        snap = StreetSnapFactory(city="Paris", year=2026, month=3, title="Day Two")

        with pytest.raises(RecordWriteRefused, match="Another live street album"):
            record_update(actor=curator(), record=snap, changes={"title": "Day  One"})

        snap.refresh_from_db()
        assert (snap.title, snap.version) == ("Day Two", 1)


class TestDeleteImage:
    def test_delete_is_soft_and_the_count_follows(self):
        runway = RunwayFactory(images=3)
        images = images_of(runway)
        before = timezone.now()

        record = image_delete(actor=curator(), image=images[1])

        assert RunwayImage.objects.filter(runway=runway).count() == 3
        assert RunwayImage.objects.get(pk=images[1].pk).deleted_at >= before
        assert (record.image_count, record.cover_id, record.version) == (2, images[0].pk, 2)

    def test_deleting_the_cover_moves_it_to_the_first_surviving_image(self):
        runway = RunwayFactory(images=3)
        images = images_of(runway)
        RunwayImage.objects.filter(pk=images[2].pk).update(sort_order=-1)  # now first in order

        image_delete(actor=curator(), image=images[0])

        runway.refresh_from_db()
        assert runway.cover_id == images[2].pk

    def test_deleting_the_last_image_clears_the_cover(self):
        runway = RunwayFactory(images=1)
        images = images_of(runway)

        image_delete(actor=curator(), image=images[0])

        runway.refresh_from_db()
        assert (runway.cover_id, runway.image_count) == (None, 0)

    def test_a_street_cover_moves_to_a_main_image_not_a_detail(self):
        snap = StreetSnapFactory(images="MddM")
        images = images_of(snap)

        image_delete(actor=curator(), image=images[1])  # a detail: cover stays
        snap.refresh_from_db()
        assert snap.cover_id == images[0].pk

        StreetSnapImage.objects.filter(pk=images[3].pk).update(sort_order=-1)
        image_delete(
            actor=curator(), image=images[0]
        )  # the cover, a main with one live detail left

        snap.refresh_from_db()
        # images[2] became the main of the old group, but images[3] comes first by order.
        assert snap.cover_id == images[3].pk
        assert_street_invariants(snap)

    def test_deleting_a_main_image_keeps_its_group_under_its_first_detail(self):
        snap = StreetSnapFactory(images="MdddM")
        images = images_of(snap)

        image_delete(actor=curator(), image=images[0])

        assert groups(snap) == {images[1].pk: [images[2].pk, images[3].pk], images[4].pk: []}
        assert_street_invariants(snap)

    def test_deleting_twice_is_refused(self):
        runway = RunwayFactory(images=2)
        images = images_of(runway)
        image_delete(actor=curator(), image=images[0])

        with pytest.raises(RecordWriteRefused, match="has been deleted"):
            image_delete(actor=curator(), image=images[0])

    def test_an_image_of_another_album_is_refused(self):
        runway = RunwayFactory(images=1)
        others = images_of(RunwayFactory(images=1))
        stranger = RunwayImage(pk=others[0].pk, runway_id=runway.pk)

        with pytest.raises(RecordWriteRefused, match="not an image of"):
            image_delete(actor=curator(), image=stranger)

        assert RunwayImage.objects.get(pk=others[0].pk).deleted_at is None


class TestSetCover:
    def test_any_live_image_of_the_album_can_be_the_cover(self):
        runway = RunwayFactory(images=3)
        images = images_of(runway)

        record_set_cover(actor=curator(), record=runway, image=images[2])

        runway.refresh_from_db()
        assert (runway.cover_id, runway.version) == (images[2].pk, 2)

    def test_a_deleted_or_foreign_image_cannot(self):
        runway = RunwayFactory(images=2)
        images = images_of(runway)
        others = images_of(RunwayFactory(images=1))
        image_delete(actor=curator(), image=images[1])

        with pytest.raises(RecordWriteRefused, match="has been deleted"):
            record_set_cover(actor=curator(), record=runway, image=images[1])
        with pytest.raises(RecordWriteRefused, match="not an image of"):
            record_set_cover(actor=curator(), record=runway, image=others[0])

        runway.refresh_from_db()
        assert runway.cover_id == images[0].pk


class TestStreetGroups:
    def test_attach_to_previous_main(self):
        snap = StreetSnapFactory(images="MMM")
        images = images_of(snap)

        street_image_attach_to_previous(actor=curator(), image=images[2])

        assert groups(snap) == {images[0].pk: [], images[1].pk: [images[2].pk]}

    def test_attaching_a_main_with_details_merges_the_groups(self):
        snap = StreetSnapFactory(images="MdMdd")
        images = images_of(snap)

        street_image_attach_to_previous(actor=curator(), image=images[2])

        assert groups(snap) == {
            images[0].pk: [images[1].pk, images[2].pk, images[3].pk, images[4].pk]
        }
        assert_street_invariants(snap)

    def test_attach_to_a_chosen_main_merges_too(self):
        snap = StreetSnapFactory(images="MdMM")
        images = images_of(snap)

        street_image_attach(actor=curator(), image=images[0], main=images[3])

        assert groups(snap) == {images[2].pk: [], images[3].pk: [images[0].pk, images[1].pk]}
        assert_street_invariants(snap)

    def test_a_detail_can_move_to_another_main(self):
        snap = StreetSnapFactory(images="MdM")
        images = images_of(snap)

        street_image_attach(actor=curator(), image=images[1], main=images[2])

        assert groups(snap) == {images[0].pk: [], images[2].pk: [images[1].pk]}

    def test_detach_makes_a_detail_a_main_image(self):
        snap = StreetSnapFactory(images="Mdd")
        images = images_of(snap)

        street_image_detach(actor=curator(), image=images[1])

        assert groups(snap) == {images[0].pk: [images[2].pk], images[1].pk: []}

    @pytest.mark.parametrize(
        ("layout", "operation", "message"),
        [
            (
                "MM",
                lambda im: street_image_attach_to_previous(actor=curator(), image=im[0]),
                "no main image before",
            ),
            (
                "Md",
                lambda im: street_image_attach(actor=curator(), image=im[0], main=im[1]),
                "choose a main",
            ),
            (
                "MM",
                lambda im: street_image_attach(actor=curator(), image=im[0], main=im[0]),
                "itself",
            ),
            (
                "Md",
                lambda im: street_image_attach(actor=curator(), image=im[1], main=im[0]),
                "already a detail",
            ),
            ("MM", lambda im: street_image_detach(actor=curator(), image=im[1]), "already a main"),
        ],
    )
    def test_refusals_change_nothing(self, layout, operation, message):
        snap = StreetSnapFactory(images=layout)
        images = images_of(snap)
        before = groups(snap)

        with pytest.raises(RecordWriteRefused, match=message):
            operation(images)

        snap.refresh_from_db()
        assert groups(snap) == before and snap.version == 1

    def test_a_deleted_main_cannot_receive_details(self):
        snap = StreetSnapFactory(images="MM")
        images = images_of(snap)
        image_delete(actor=curator(), image=images[0])

        with pytest.raises(RecordWriteRefused, match="has been deleted"):
            street_image_attach(actor=curator(), image=images[1], main=images[0])

    def test_an_image_of_another_album_cannot_be_a_parent(self):
        snap = StreetSnapFactory(images="MM")
        images = images_of(snap)
        others = images_of(StreetSnapFactory(images="M"))

        with pytest.raises(RecordWriteRefused, match="not an image of"):
            street_image_attach(actor=curator(), image=images[1], main=others[0])

    def test_a_stale_version_is_refused(self):
        snap = StreetSnapFactory(images="MMM")
        images = images_of(snap)
        street_image_attach_to_previous(actor=curator(), image=images[1])

        with pytest.raises(StaleRecord):
            street_image_attach_to_previous(actor=curator(), image=images[2], expected_version=1)

    def test_attach_selected_moves_a_main_image_together_with_its_own_details(self):
        # Ingest puts details right after their main image: selecting a group and attaching
        # it elsewhere is the natural way to move it, whatever order the ids come in.
        snap = StreetSnapFactory(images="MdMdd")
        images = images_of(snap)
        group = [images[2], images[3], images[4]]

        for selection in [group, group[::-1]]:
            with rollback_each_example():
                record = street_images_attach(
                    actor=curator(), images=selection, main=images[0], expected_version=1
                )

                assert groups(snap) == {
                    images[0].pk: [images[1].pk, images[2].pk, images[3].pk, images[4].pk]
                }
                assert record.version == 2  # one change, one version
                assert_street_invariants(snap)

    def test_attach_selected_leaves_an_image_already_under_the_main_as_it_is(self):
        snap = StreetSnapFactory(images="MdMM")
        images = images_of(snap)

        street_images_attach(actor=curator(), images=[images[1], images[3]], main=images[0])

        assert groups(snap) == {images[0].pk: [images[1].pk, images[3].pk], images[2].pk: []}

    def test_attach_selected_merges_several_groups_at_once(self):
        snap = StreetSnapFactory(images="MdMdMdM")
        images = images_of(snap)

        street_images_attach(
            actor=curator(), images=[images[2], images[4], images[5]], main=images[6]
        )

        assert groups(snap) == {
            images[0].pk: [images[1].pk],
            images[6].pk: [images[2].pk, images[3].pk, images[4].pk, images[5].pk],
        }
        assert_street_invariants(snap)

    @pytest.mark.parametrize(
        ("layout", "selected", "main", "message"),
        [
            ("MdM", [2, 0], 0, "cannot be a detail of itself"),
            ("MdM", [2], 1, "itself a detail of image"),
            ("MdM", [1], 0, "Image .* is already a detail of image"),
            ("MddM", [1, 2], 0, "Images .* are already details of image"),
            ("MdM", [], 0, "Select the images"),
        ],
        ids=["main selected", "main is a detail", "already there", "all there", "nothing"],
    )
    def test_attach_selected_refusals_change_nothing(self, layout, selected, main, message):
        snap = StreetSnapFactory(images=layout)
        images = images_of(snap)
        before = groups(snap)

        with pytest.raises(RecordWriteRefused, match=message):
            street_images_attach(
                actor=curator(), images=[images[i] for i in selected], main=images[main]
            )

        snap.refresh_from_db()
        assert groups(snap) == before and snap.version == 1

    def test_attach_selected_refuses_an_image_of_another_album_or_a_deleted_one(self):
        snap = StreetSnapFactory(images="MdMM")
        images = images_of(snap)
        others = images_of(StreetSnapFactory(images="M"))
        image_delete(actor=curator(), image=images[3])
        before = groups(snap)

        with pytest.raises(RecordWriteRefused, match="not an image of"):
            street_images_attach(actor=curator(), images=[images[2], others[0]], main=images[0])
        with pytest.raises(RecordWriteRefused, match="has been deleted"):
            street_images_attach(actor=curator(), images=[images[2], images[3]], main=images[0])
        with pytest.raises(RecordWriteRefused, match="not an image of"):
            street_images_attach(actor=curator(), images=[images[2]], main=others[0])

        snap.refresh_from_db()
        assert groups(snap) == before and snap.version == 2  # the delete only
        assert StreetSnapImage.objects.get(pk=others[0].pk).parent_id is None

    def test_attach_selected_checks_the_loaded_version(self):
        snap = StreetSnapFactory(images="MMM")
        images = images_of(snap)
        street_image_attach_to_previous(actor=curator(), image=images[1])

        with pytest.raises(StaleRecord):
            street_images_attach(
                actor=curator(), images=[images[2]], main=images[0], expected_version=1
            )

    def test_grouping_never_rewrites_or_recreates_image_rows_beyond_their_parent(self):
        snap = StreetSnapFactory(images="MdMdM")
        images = images_of(snap)
        columns = ["id", "storage_key", "sha1", "sort_order", "phash", "created_at"]
        before = list(StreetSnapImage.objects.order_by("pk").values_list(*columns))

        street_image_attach_to_previous(actor=curator(), image=images[2])
        street_image_detach(actor=curator(), image=images[3])
        street_image_attach(actor=curator(), image=images[4], main=images[3])
        street_images_attach(actor=curator(), images=[images[3], images[4]], main=images[0])
        image_delete(actor=curator(), image=images[0])

        assert list(StreetSnapImage.objects.order_by("pk").values_list(*columns)) == before


class StreetGroupingMachine(RuleBasedStateMachine):
    """Random sequences of attach / attach selected / attach to previous / detach / delete /
    set cover on one street album: after every step the album keeps its invariants (no
    detail of a detail, live details under live mains of the same album, is_detail = has a
    parent, cover live, image_count right), no image row is created or removed, and an
    operation is refused exactly when its target does not allow it."""

    def __init__(self):
        super().__init__()
        self._example = rollback_each_example()
        self._example.__enter__()
        self.snap = StreetSnapFactory()
        self.other = StreetSnapImageFactory()  # an image of another album
        self.ids = [
            StreetSnapImageFactory(street_snap=self.snap, sort_order=n % 4).pk for n in range(7)
        ]
        StreetSnap.objects.filter(pk=self.snap.pk).update(cover_id=self.ids[0], image_count=7)

    def teardown(self):
        self._example.__exit__(None, None, None)

    def image(self, index: int) -> StreetSnapImage:
        return StreetSnapImage.objects.get(pk=self.ids[index])

    def attempt(self, operation, *, allowed: bool) -> None:
        version = StreetSnap.objects.get(pk=self.snap.pk).version
        if allowed:
            operation()
            assert StreetSnap.objects.get(pk=self.snap.pk).version == version + 1
        else:
            with pytest.raises(RecordWriteRefused):
                operation()
            assert StreetSnap.objects.get(pk=self.snap.pk).version == version

    indexes = st.integers(0, 6)

    @rule(i=indexes)
    def attach_to_previous(self, i):
        image = self.image(i)
        live_mains_before = self.snap.images.live().filter(is_detail=False).exclude(pk=image.pk)
        previous = [
            m for m in live_mains_before if (m.sort_order, m.pk) < (image.sort_order, image.pk)
        ]
        target = max(previous, key=lambda m: (m.sort_order, m.pk)) if previous else None
        allowed = image.deleted_at is None and target is not None and image.parent_id != target.pk
        self.attempt(
            lambda: street_image_attach_to_previous(actor=curator(), image=image), allowed=allowed
        )

    @rule(i=indexes, j=indexes)
    def attach(self, i, j):
        image, main = self.image(i), self.image(j)
        allowed = (
            image.deleted_at is None
            and main.deleted_at is None
            and i != j
            and not main.is_detail
            and image.parent_id != main.pk
        )
        self.attempt(
            lambda: street_image_attach(actor=curator(), image=image, main=main), allowed=allowed
        )

    @rule(selection=st.lists(indexes, min_size=1, max_size=4, unique=True), j=indexes)
    def attach_selected(self, selection, j):
        images, main = [self.image(i) for i in selection], self.image(j)
        before = groups(self.snap)
        allowed = (
            all(image.deleted_at is None for image in images)
            and main.deleted_at is None
            and j not in selection
            and not main.is_detail
            # An image already under the main image is left as it is; a selection made only
            # of those changes nothing and is refused.
            and any(image.parent_id != main.pk for image in images)
        )
        self.attempt(
            lambda: street_images_attach(actor=curator(), images=images, main=main), allowed=allowed
        )
        if allowed:
            # The selected images, and the details of the selected main images, are now
            # details of the main image; every other group lost exactly those.
            moved = {image.pk for image in images}
            moved |= {d for image in images for d in before.get(image.pk, [])}
            expected = {
                m: [d for d in details if d not in moved]
                for m, details in before.items()
                if m not in moved
            }
            expected[main.pk] = sorted({*before[main.pk], *moved})
            after = groups(self.snap)
            assert {m: sorted(d) for m, d in after.items()} == {
                m: sorted(d) for m, d in expected.items()
            }

    @rule(selection=st.lists(indexes, min_size=0, max_size=3, unique=True), j=indexes)
    def attach_selected_with_another_albums_image(self, selection, j):
        images = [self.image(i) for i in selection] + [self.other]
        self.attempt(
            lambda: street_images_attach(actor=curator(), images=images, main=self.image(j)),
            allowed=False,
        )

    @rule(i=indexes)
    def attach_to_another_albums_image(self, i):
        self.attempt(
            lambda: street_image_attach(actor=curator(), image=self.image(i), main=self.other),
            allowed=False,
        )

    @rule(i=indexes)
    def detach(self, i):
        image = self.image(i)
        allowed = image.deleted_at is None and image.is_detail
        self.attempt(lambda: street_image_detach(actor=curator(), image=image), allowed=allowed)

    @rule(i=indexes)
    def delete(self, i):
        image = self.image(i)
        snap = StreetSnap.objects.get(pk=self.snap.pk)
        was_cover = snap.cover_id == image.pk
        self.attempt(
            lambda: image_delete(actor=curator(), image=image),
            allowed=image.deleted_at is None,
        )
        if was_cover and image.deleted_at is None:
            snap.refresh_from_db()
            first_main = (
                snap.images.live().filter(is_detail=False).order_by("sort_order", "pk").first()
            )
            assert snap.cover_id == (first_main.pk if first_main else None)

    @rule(i=indexes)
    def set_cover(self, i):
        image = self.image(i)
        snap = StreetSnap.objects.get(pk=self.snap.pk)
        allowed = image.deleted_at is None and snap.cover_id != image.pk
        self.attempt(
            lambda: record_set_cover(actor=curator(), record=snap, image=image), allowed=allowed
        )

    @invariant()
    def invariants_hold(self):
        assert_street_invariants(self.snap)
        assert sorted(
            StreetSnapImage.objects.filter(street_snap=self.snap).values_list("pk", flat=True)
        ) == sorted(self.ids)


def test_street_grouping_invariants_hold_after_every_step(db):
    run_state_machine_as_test(
        StreetGroupingMachine, settings=machine_settings(stateful_step_count=20)
    )
