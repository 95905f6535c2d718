"""catalog.services.ingest_writes: create a record with its images, reopen a rejected one."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.models import Runway, RunwayImage, StreetSnap, StreetSnapImage
from catalog.services import (
    NewImage,
    RecordStateError,
    RecordWriteRefused,
    RunwayContent,
    StreetSnapContent,
    runway_create,
    runway_reopen,
    street_snap_create,
    street_snap_reopen,
)
from catalog.storage import image_key
from tests.factories import (
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
)

pytestmark = pytest.mark.django_db


def new_image(n: int, **fields) -> NewImage:
    sha1 = f"{n:040x}"
    return NewImage(
        storage_key=image_key(sha1=sha1, mime_type="image/jpeg"),
        sha1=sha1,
        width=800,
        height=1200,
        byte_size=1000 + n,
        mime_type="image/jpeg",
        original_url=f"https://example.com/{n}.jpg",
        sort_order=n,
        phash=n,
        phash_algorithm="phash-draft128-v1",
        **fields,
    )


def runway_fields(brand, images, **overrides):
    fields = {
        "brand": brand,
        "season_code": "FW24",
        "season": "Fall/Winter 2024",
        "year": 2024,
        "collection_type": "ready-to-wear",
        "title": "Acme FW24",
        "description": "",
        "source": "vogue",
        "source_url": "https://example.com/shows/acme-fw24",
        "ingest_job_id": 7,
        "content_checksum": "c" * 64,
    }
    fields.update(overrides)
    return {"content": RunwayContent(**fields), "images": images}


def street_fields(images, **overrides):
    fields = {
        "city": "Copenhagen",
        "year": 2026,
        "month": 8,
        "title": "Street Style",
        "description": "",
        "source": "theimpression",
        "source_url": "https://example.com/street/cph",
        "ingest_job_id": 8,
        "content_checksum": "d" * 64,
    }
    fields.update(overrides)
    return {"content": StreetSnapContent(**fields), "images": images}


# --- Create --------------------------------------------------------------------------------------


def test_runway_create_writes_a_pending_record_with_cover_and_count():
    brand = BrandFactory()
    existing = RunwayImageFactory()

    runway = runway_create(
        **runway_fields(
            brand,
            [
                new_image(0, look_index=1),
                new_image(1, look_index=1, dup_of_position=0),
                new_image(2, look_index=2, dup_of_id=existing.pk),
            ],
        )
    )

    runway.refresh_from_db()
    first, second, third = runway.images.order_by("sort_order")
    assert (runway.status, runway.version, runway.image_count) == ("pending", 1, 3)
    assert runway.cover == first
    assert (runway.ingest_job_id, runway.content_checksum) == (7, "c" * 64)
    assert (second.is_duplicate, second.dup_of) == (True, first)
    assert (third.is_duplicate, third.dup_of) == (True, existing)
    assert not first.is_duplicate
    assert [i.look_index for i in (first, second, third)] == [1, 1, 2]


def test_street_snap_create_attaches_details_listed_before_their_main():
    snap = street_snap_create(
        **street_fields([new_image(0, parent_position=2), new_image(1), new_image(2)])
    )

    detail, main, other = snap.images.order_by("sort_order")
    assert (detail.is_detail, detail.parent) == (True, other)
    assert not main.is_detail and not other.is_detail
    assert snap.cover == main


@pytest.mark.parametrize(
    "images",
    [
        [new_image(0), new_image(1, parent_position=0), new_image(2, parent_position=1)],
        [new_image(0, parent_position=0)],
        [new_image(0, parent_position=5)],
        [new_image(0, dup_of_position=0)],
    ],
    ids=["detail of a detail", "own parent", "out of range", "duplicate of itself"],
)
def test_street_snap_create_refuses_broken_structure_and_writes_nothing(images):
    with pytest.raises(ValueError):
        street_snap_create(**street_fields(images))

    assert not StreetSnap.objects.exists()
    assert not StreetSnapImage.objects.exists()


def test_a_runway_image_has_no_parent():
    with pytest.raises(ValueError):
        runway_create(
            **runway_fields(BrandFactory(), [new_image(0), new_image(1, parent_position=0)])
        )

    assert not Runway.objects.exists()


# --- Reopen ---------------------------------------------------------------------------------------


def test_runway_reopen_reuses_the_row_and_replaces_the_images():
    brand = BrandFactory()
    rejected = RunwayFactory(
        brand=brand,
        status="rejected",
        reviewer="ed",
        reviewed_at=timezone.now(),
        reject_reason="blurry",
        version=3,
        published_at=timezone.now() - timedelta(days=3),
        images=1,
    )
    old = rejected.cover

    reopened = runway_reopen(
        runway=rejected, **runway_fields(brand, [new_image(0), new_image(1)], title="New")
    )

    reopened.refresh_from_db()
    old.refresh_from_db()
    assert reopened.pk == rejected.pk
    assert (reopened.status, reopened.reviewer, reopened.reviewed_at) == ("pending", "", None)
    assert reopened.reject_reason == ""
    assert reopened.version == 4
    assert reopened.title == "New"
    assert reopened.published_at is not None  # first publication is history, kept
    assert old.deleted_at is not None
    assert reopened.image_count == 2
    assert reopened.cover.original_url == "https://example.com/0.jpg"
    assert RunwayImage.objects.live().filter(runway=reopened).count() == 2


@pytest.mark.parametrize("state", ["pending", "published", "deleted"])
def test_only_a_live_rejected_record_can_be_reopened(state):
    snap = StreetSnapFactory(
        status="rejected" if state == "deleted" else state,
        deleted_at=timezone.now() if state == "deleted" else None,
    )

    with pytest.raises(RecordStateError):
        street_snap_reopen(street_snap=snap, **street_fields([new_image(0)]))

    assert not snap.images.exists()


def test_a_refused_reopen_is_a_refusal_like_any_other():
    published = RunwayFactory(status="published")

    with pytest.raises(RecordWriteRefused, match="Cannot reopen a published runway"):
        runway_reopen(runway=published, **runway_fields(published.brand, [new_image(0)]))


@pytest.mark.parametrize("taken", ["entity key", "source key"])
def test_a_reopen_onto_a_taken_key_raises_the_integrity_error_to_the_pipeline(taken):
    # The pipeline turns exactly this IntegrityError into a lost race (skipped, not failed);
    # the editors' refusal message would make it fail the job instead.
    brand = BrandFactory()
    other = RunwayFactory(brand=brand, season_code="SS25", source_url="https://example.com/b")
    rejected = RunwayFactory(brand=brand, status="rejected", version=3)
    key = (
        {"season_code": "SS25", "collection_type": other.collection_type}
        if taken == "entity key"
        else {"source": other.source, "source_url": other.source_url}
    )

    with pytest.raises(IntegrityError), transaction.atomic():
        runway_reopen(runway=rejected, **runway_fields(brand, [new_image(0)], **key))

    rejected.refresh_from_db()
    assert (rejected.status, rejected.version) == ("rejected", 3)
    assert not rejected.images.exists()


@pytest.mark.parametrize("kind", ["runway", "street"])
def test_an_albums_images_are_written_in_a_fixed_number_of_queries(kind):
    # Insert every image, then link details and in-album duplicates: the same statements for
    # 4 images as for 60 (the job's final transaction holds its locks meanwhile).
    def album(size: int) -> list[NewImage]:
        images = []
        for n in range(size):
            if kind == "street" and n % 2:
                images.append(new_image(n, parent_position=n - 1))
            elif n == 2:
                images.append(new_image(n, dup_of_position=0))
            else:
                images.append(new_image(n))
        return images

    def queries_for(size: int, n: int) -> int:
        with CaptureQueriesContext(connection) as queries:
            if kind == "street":
                street_snap_create(
                    **street_fields(album(size), source_url=f"https://e.x/{n}", title=str(n))
                )
            else:
                runway_create(
                    **runway_fields(
                        BrandFactory(), album(size), source_url=f"https://e.x/{n}", title=str(n)
                    )
                )
        return len(queries)

    few, many = queries_for(4, 1), queries_for(60, 2)

    assert few == many
    record = (StreetSnap if kind == "street" else Runway).objects.latest("pk")
    images = list(record.images.order_by("sort_order"))
    assert len(images) == 60
    assert images[2].dup_of_id == images[0].pk
    if kind == "street":
        assert [i.parent_id for i in images[:2]] == [None, images[0].pk]
        assert all(i.is_detail == (i.parent_id is not None) for i in images)
