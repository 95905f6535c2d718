"""catalog.services.records: the refusals and the row lock every catalog write shares, and who
may curate a record (checked by every curation write under the lock). Portable."""

import pytest
from django.contrib.auth.models import Permission, User
from django.utils import timezone

from catalog.models import Runway, RunwayImage, StreetSnap
from catalog.services import (
    RecordStateError,
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
from tests.factories import RunwayFactory, images_of
from tests.support import curator

pytestmark = pytest.mark.django_db


class TestRefusals:
    def test_one_hierarchy_a_state_error_is_a_refusal(self):
        # The ingest pipeline catches RecordStateError, the admin RecordWriteRefused: one
        # family, so a refusal never escapes a caller that reports refusals.
        assert issubclass(RecordStateError, RecordWriteRefused)
        assert issubclass(StaleRecord, RecordWriteRefused)

    @pytest.mark.parametrize(
        "operation",
        [
            lambda runway, images: record_update(
                actor=curator(), record=runway, changes={"title": "x"}
            ),
            lambda runway, images: record_set_cover(
                actor=curator(), record=runway, image=images[1]
            ),
            lambda runway, images: image_delete(actor=curator(), image=images[1]),
        ],
        ids=["update", "cover", "delete image"],
    )
    def test_a_deleted_record_is_a_state_error_and_nothing_is_written(self, operation):
        runway = RunwayFactory(images=2)
        images = images_of(runway)
        Runway.objects.filter(pk=runway.pk).update(deleted_at=timezone.now())

        with pytest.raises(RecordStateError, match="is deleted"):
            operation(runway, images)

        runway.refresh_from_db()
        assert (runway.version, runway.image_count, runway.cover_id) == (1, 2, images[0].pk)
        assert not RunwayImage.objects.filter(deleted_at__isnull=False).exists()


def editor_with(*codenames: str) -> User:
    """An editor with exactly these catalog permissions (fresh: no cached permissions)."""
    user = User.objects.create_user(f"editor{User.objects.count()}", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="catalog", codename__in=codenames)
    )
    return User.objects.get(pk=user.pk)


CURATE = ["change_runway", "change_runwayimage", "change_streetsnap", "change_streetsnapimage"]
PUBLISH = ["publish_runway", "publish_streetsnap"]

# Every curation write, on an album of the layout given, as `actor`.
CURATIONS = [
    pytest.param(
        "runway", lambda r, im, actor: record_update(record=r, actor=actor, changes={"title": "x"}),
        id="edit fields",
    ),
    pytest.param(
        "runway", lambda r, im, actor: record_set_cover(record=r, image=im[1], actor=actor),
        id="set cover",
    ),
    pytest.param(
        "runway", lambda r, im, actor: image_delete(image=im[1], actor=actor),
        id="delete image",
    ),
    pytest.param(
        "MM", lambda r, im, actor: street_image_attach_to_previous(image=im[1], actor=actor),
        id="attach to previous",
    ),
    pytest.param(
        "MM", lambda r, im, actor: street_image_attach(image=im[1], main=im[0], actor=actor),
        id="attach",
    ),
    pytest.param(
        "MM", lambda r, im, actor: street_images_attach(images=[im[1]], main=im[0], actor=actor),
        id="attach selected",
    ),
    pytest.param(
        "Md", lambda r, im, actor: street_image_detach(image=im[1], actor=actor), id="detach"
    ),
]  # fmt: skip


def image_rows(record) -> list[tuple]:
    grouping = "parent_id" if isinstance(record, StreetSnap) else "look_index"
    return sorted(record.images.values_list("pk", "deleted_at", grouping))


class TestWhoMayCurate:
    @pytest.mark.parametrize(("layout", "curate"), CURATIONS)
    def test_a_published_album_is_changed_only_by_an_editor_who_may_publish(self, layout, curate):
        # Given a published album, and an editor who may edit but not publish
        record, images = album(layout, "published")
        before = (type(record).objects.values().get(pk=record.pk), image_rows(record))

        # Then every curation is refused, saying why and what to do, and nothing changes
        with pytest.raises(RecordWriteRefused) as refused:
            curate(record, images, editor_with(*CURATE))

        assert "is published, so it is on the public site" in str(refused.value)
        assert "Ask an editor who can publish" in str(refused.value)
        assert (type(record).objects.values().get(pk=record.pk), image_rows(record)) == before

        # And an editor who may publish too makes it
        curate(record, images, editor_with(*CURATE, *PUBLISH))
        assert type(record).objects.get(pk=record.pk).version == 2

    @pytest.mark.parametrize(("layout", "curate"), CURATIONS)
    @pytest.mark.parametrize("status", ["pending", "rejected"])
    def test_an_album_not_on_the_site_needs_no_publish_permission(self, layout, curate, status):
        record, images = album(layout, status)

        curate(record, images, editor_with(*CURATE))

        assert type(record).objects.get(pk=record.pk).version == 2

    @pytest.mark.parametrize(("layout", "curate"), CURATIONS)
    def test_without_the_change_permission_nothing_is_curated(self, layout, curate):
        record, images = album(layout, "pending")

        with pytest.raises(RecordWriteRefused, match="You do not have permission to change"):
            curate(record, images, editor_with(*PUBLISH))

        assert type(record).objects.get(pk=record.pk).version == 1

    def test_a_stale_page_is_said_before_a_missing_permission(self):
        # The editor's page was loaded while the album was pending; it is published now.
        runway, _ = album("runway", "published")

        with pytest.raises(StaleRecord):
            record_update(
                record=runway,
                actor=editor_with(*CURATE),
                changes={"title": "x"},
                expected_version=0,
            )
