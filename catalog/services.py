"""Writes to the catalog. Every write to a record goes through a function here and bumps
`version`, so an admin form loaded before it is refused instead of applied over it."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from catalog.models import Brand, Runway, RunwayImage, StreetSnap, StreetSnapImage

# --- Ingest writes: create a record with its images, reopen a rejected one -------------------
#
# The ingest pipeline calls these inside its own transaction (the one that also finishes the
# job), so a unique-constraint violation here - another worker created the same album first -
# rolls everything back together and the pipeline ends its job as skipped.


class RecordStateError(Exception):
    """A write was asked of a record that is not in the state it requires."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NewImage:
    """One downloaded, stored and hashed image to attach to a record.

    Positions refer to this image's place in the list passed to the service (not to ids), so
    the caller can point at images that do not exist yet.
    """

    storage_key: str
    sha1: str
    width: int
    height: int
    byte_size: int
    mime_type: str
    original_url: str
    sort_order: int
    phash: int | None  # signed 64-bit, as stored
    phash_algorithm: str
    # Near-duplicate of an existing image of the same kind, or of an earlier image in the list.
    dup_of_id: int | None = None
    dup_of_position: int | None = None
    look_index: int = 0  # runway images
    parent_position: int | None = None  # street images: the position of its main image

    @property
    def is_duplicate(self) -> bool:
        return self.dup_of_id is not None or self.dup_of_position is not None


def runway_create(
    *,
    brand: Brand,
    season_code: str,
    season: str,
    year: int,
    collection_type: str,
    title: str,
    description: str,
    source: str,
    source_url: str,
    images: Sequence[NewImage],
    ingest_job_id: int | None,
    content_checksum: str,
) -> Runway:
    """A new pending runway with its images, cover and image_count."""
    with transaction.atomic():
        runway = Runway.objects.create(
            brand=brand,
            season_code=season_code,
            season=season,
            year=year,
            collection_type=collection_type,
            title=title,
            description=description,
            source=source,
            source_url=source_url,
            status=Runway.Status.PENDING,
            ingest_job_id=ingest_job_id,
            content_checksum=content_checksum,
        )
        created = _images_add(runway, images)
        runway.cover = _first_main(created)
        runway.image_count = len(created)
        runway.save(update_fields=["cover", "image_count", "updated_at"])
    return runway


def runway_reopen(
    *,
    runway: Runway,
    brand: Brand,
    season_code: str,
    season: str,
    year: int,
    collection_type: str,
    title: str,
    description: str,
    source: str,
    source_url: str,
    images: Sequence[NewImage],
    ingest_job_id: int | None,
    content_checksum: str,
) -> Runway:
    """Put a rejected runway back in front of editors with the re-crawled content.

    The row (and so its id, its URLs in the admin and its review history) is kept; its old
    images are soft-deleted, the new ones added; review fields are cleared.
    """
    with transaction.atomic():
        locked = _lock_rejected(Runway, runway.pk)
        locked.brand = brand
        locked.season_code = season_code
        locked.season = season
        locked.year = year
        locked.collection_type = collection_type
        return _reopen(
            locked,
            title=title,
            description=description,
            source=source,
            source_url=source_url,
            images=images,
            ingest_job_id=ingest_job_id,
            content_checksum=content_checksum,
            fields=["brand", "season_code", "season", "year", "collection_type"],
        )


def street_snap_create(
    *,
    city: str,
    year: int,
    month: int,
    title: str,
    description: str,
    source: str,
    source_url: str,
    images: Sequence[NewImage],
    ingest_job_id: int | None,
    content_checksum: str,
) -> StreetSnap:
    """A new pending street snap with its images (details attached to their mains)."""
    with transaction.atomic():
        street_snap = StreetSnap.objects.create(
            city=city,
            year=year,
            month=month,
            title=title,
            description=description,
            source=source,
            source_url=source_url,
            status=StreetSnap.Status.PENDING,
            ingest_job_id=ingest_job_id,
            content_checksum=content_checksum,
        )
        created = _images_add(street_snap, images)
        street_snap.cover = _first_main(created)
        street_snap.image_count = len(created)
        street_snap.save(update_fields=["cover", "image_count", "updated_at"])
    return street_snap


def street_snap_reopen(
    *,
    street_snap: StreetSnap,
    city: str,
    year: int,
    month: int,
    title: str,
    description: str,
    source: str,
    source_url: str,
    images: Sequence[NewImage],
    ingest_job_id: int | None,
    content_checksum: str,
) -> StreetSnap:
    """The street-snap twin of :func:`runway_reopen`."""
    with transaction.atomic():
        locked = _lock_rejected(StreetSnap, street_snap.pk)
        locked.city = city
        locked.year = year
        locked.month = month
        return _reopen(
            locked,
            title=title,
            description=description,
            source=source,
            source_url=source_url,
            images=images,
            ingest_job_id=ingest_job_id,
            content_checksum=content_checksum,
            fields=["city", "year", "month"],
        )


def _lock_rejected[R: (Runway, StreetSnap)](model: type[R], pk: int) -> R:
    record = model.objects.select_for_update().get(pk=pk)
    if record.deleted_at is not None or record.status != model.Status.REJECTED:
        state = "deleted" if record.deleted_at is not None else record.status
        raise RecordStateError(f"Cannot reopen a {state} {model._meta.verbose_name}.")
    return record


def _reopen[R: (Runway, StreetSnap)](
    record: R,
    *,
    title: str,
    description: str,
    source: str,
    source_url: str,
    images: Sequence[NewImage],
    ingest_job_id: int | None,
    content_checksum: str,
    fields: list[str],
) -> R:
    # Should be called while holding a SELECT FOR UPDATE lock on the record.
    record.images.live().update(deleted_at=timezone.now())
    created = _images_add(record, images)
    record.title = title
    record.description = description
    record.source = source
    record.source_url = source_url
    record.status = record.Status.PENDING
    record.reviewer = ""
    record.reviewed_at = None
    record.reject_reason = ""
    record.ingest_job_id = ingest_job_id
    record.content_checksum = content_checksum
    record.cover = _first_main(created)
    record.image_count = len(created)
    record.version = F("version") + 1
    record.save(
        update_fields=[
            *fields,
            "title",
            "description",
            "source",
            "source_url",
            "status",
            "reviewer",
            "reviewed_at",
            "reject_reason",
            "ingest_job_id",
            "content_checksum",
            "cover",
            "image_count",
            "version",
            "updated_at",
        ]
    )
    record.refresh_from_db(fields=["version"])
    return record


def _images_add(
    record: Runway | StreetSnap, images: Sequence[NewImage]
) -> list[RunwayImage | StreetSnapImage]:
    """Insert ``images`` in list order, then link the in-list references by id.

    Details and in-list duplicates refer to positions that may come later in the list, so rows
    are inserted first as plain main images and linked in a second pass; the check constraint
    (detail <=> parent) holds at every statement.
    """
    is_street = isinstance(record, StreetSnap)
    for position, image in enumerate(images):
        if image.dup_of_position is not None and not 0 <= image.dup_of_position < position:
            raise ValueError(f"image {position}: dup_of_position must name an earlier image")
        if image.parent_position is not None:
            if not is_street:
                raise ValueError(f"image {position}: only street images have a parent")
            parent = _at(images, image.parent_position, position)
            if parent.parent_position is not None or image.parent_position == position:
                # No detail of a detail: the parent must be a main image of this album.
                raise ValueError(f"image {position}: the parent must be a main image")

    rows = []
    for image in images:
        common = {
            "storage_key": image.storage_key,
            "sha1": image.sha1,
            "width": image.width,
            "height": image.height,
            "byte_size": image.byte_size,
            "mime_type": image.mime_type,
            "original_url": image.original_url,
            "sort_order": image.sort_order,
            "phash": image.phash,
            "phash_algorithm": image.phash_algorithm,
            "is_duplicate": image.is_duplicate,
            "dup_of_id": image.dup_of_id,
        }
        if is_street:
            rows.append(StreetSnapImage.objects.create(street_snap=record, **common))
        else:
            rows.append(
                RunwayImage.objects.create(runway=record, look_index=image.look_index, **common)
            )

    for image, row in zip(images, rows, strict=True):
        update_fields = []
        if image.dup_of_position is not None:
            row.dup_of = rows[image.dup_of_position]
            update_fields.append("dup_of")
        if image.parent_position is not None:
            row.parent = rows[image.parent_position]
            row.is_detail = True
            update_fields += ["parent", "is_detail"]
        if update_fields:
            row.save(update_fields=update_fields)
    return rows


def _at(images: Sequence[NewImage], index: int, position: int) -> NewImage:
    if not 0 <= index < len(images):
        raise ValueError(f"image {position}: position {index} is not in the list")
    return images[index]


def _first_main(
    rows: Sequence[RunwayImage | StreetSnapImage],
) -> RunwayImage | StreetSnapImage | None:
    mains = [row for row in rows if not getattr(row, "is_detail", False)]
    return min(mains, key=lambda row: (row.sort_order, row.pk), default=None)
