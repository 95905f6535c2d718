"""The ingest pipeline's writes: create a record with its images, reopen a rejected one.

The pipeline calls these inside its own transaction (the one that also finishes the job), so a
unique-constraint violation here - another worker created the same album first - raises
IntegrityError, rolls everything back together, and the pipeline ends its job as skipped. A
reopen of a record that is no longer a live rejected one raises RecordStateError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, cast

from django.db import transaction
from django.utils import timezone

from catalog.models import Brand, Record, RecordImage, Runway, StreetSnap
from catalog.services.records import RecordStateError, first_main_image, record_lock, record_save


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordContent:
    """What an ingest write sets on a record row of any kind: the album's fields every kind
    has, where it came from, and the job that wrote it."""

    title: str
    description: str
    source: str
    source_url: str
    ingest_job_id: int | None
    content_checksum: str
    # The crawler's embargo: the record's go-live (a reopened record's expiry is cleared).
    go_live_at: datetime | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RunwayContent(RecordContent):
    """What an ingest write sets on a runway row."""

    brand: Brand
    season_code: str
    season: str
    year: int
    collection_type: str


@dataclass(frozen=True, kw_only=True, slots=True)
class StreetSnapContent(RecordContent):
    """What an ingest write sets on a street snap row."""

    city: str
    year: int
    month: int


type Content = RunwayContent | StreetSnapContent


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


def record_create[R: Record](*, model: type[R], content: Content, images: Sequence[NewImage]) -> R:
    """A new pending record of ``model`` (the content's kind) with its images, cover and
    image_count. The ingest pipeline writes any kind through this; the kinds' own forms below
    say which content goes with which model."""
    return _record_create(model, content=content, images=images)


def record_reopen[R: Record](*, record: R, content: Content, images: Sequence[NewImage]) -> R:
    """Put a rejected record back in front of editors with the re-crawled content (any kind:
    :func:`runway_reopen` says what it does)."""
    return _record_reopen(record, content=content, images=images)


def runway_create(*, content: RunwayContent, images: Sequence[NewImage]) -> Runway:
    """A new pending runway with its images, cover and image_count."""
    return _record_create(Runway, content=content, images=images)


def runway_reopen(*, runway: Runway, content: RunwayContent, images: Sequence[NewImage]) -> Runway:
    """Put a rejected runway back in front of editors with the re-crawled content.

    The row (and so its id, its URLs in the admin and its review history) is kept; its old
    images are soft-deleted, the new ones added; review fields are cleared.
    """
    return _record_reopen(runway, content=content, images=images)


def street_snap_create(*, content: StreetSnapContent, images: Sequence[NewImage]) -> StreetSnap:
    """A new pending street snap with its images (details attached to their mains)."""
    return _record_create(StreetSnap, content=content, images=images)


def street_snap_reopen(
    *, street_snap: StreetSnap, content: StreetSnapContent, images: Sequence[NewImage]
) -> StreetSnap:
    """The street-snap twin of :func:`runway_reopen`."""
    return _record_reopen(street_snap, content=content, images=images)


def _columns(content: Content) -> dict[str, Any]:
    # Not dataclasses.asdict: it deep-copies values, the brand's model instance included.
    return {field.name: getattr(content, field.name) for field in fields(content)}


def _record_create[R: Record](model: type[R], *, content: Content, images: Sequence[NewImage]) -> R:
    with transaction.atomic():
        # A row of model's own (the stubs type the manager of the abstract base).
        record = cast(R, model.objects.create(status=model.Status.PENDING, **_columns(content)))
        _images_add(record, images)
        record.cover = first_main_image(record)
        record.image_count = len(images)
        # A new record stays at version 1: no page can have loaded an older one.
        record.save(update_fields=["cover", "image_count", "updated_at"])
    return record


def _record_reopen[R: Record](record: R, *, content: Content, images: Sequence[NewImage]) -> R:
    columns: dict[str, Any] = _columns(content)
    with transaction.atomic():
        locked = record_lock(record=record)
        if locked.status != locked.Status.REJECTED:
            raise RecordStateError(
                f"Cannot reopen a {locked.status} {locked._meta.verbose_name}: only a "
                "rejected one goes back to review."
            )
        locked.images.live().update(deleted_at=timezone.now())
        _images_add(locked, images)
        for name, value in columns.items():
            setattr(locked, name, value)
        locked.status = locked.Status.PENDING
        locked.reviewer = ""
        locked.reviewed_at = None
        locked.reject_reason = ""
        locked.expires_at = None
        locked.cover = first_main_image(locked)
        locked.image_count = len(images)
        return record_save(
            record=locked,
            fields=[
                *columns,
                "status",
                "reviewer",
                "reviewed_at",
                "reject_reason",
                "expires_at",
                "cover",
                "image_count",
            ],
            # A key violation is a lost race for the pipeline, not an editor's mistake.
            refuse_taken_key=False,
        )


def _images_add(record: Record, images: Sequence[NewImage]) -> list[RecordImage]:
    """Insert ``images`` in list order, then link the in-list references by id: two
    statements whatever the album's size (bulk inserts return ids on PostgreSQL and SQLite).

    Details and in-list duplicates refer to positions that may come later in the list, so rows
    are inserted first as plain main images and linked in a second pass; the check constraint
    (detail <=> parent) holds at every statement.
    """
    # Either image model: Any, as each model's bulk methods take only rows of their own.
    model: Any = record.image_model()
    for position, image in enumerate(images):
        if image.dup_of_position is not None and not 0 <= image.dup_of_position < position:
            raise ValueError(f"image {position}: dup_of_position must name an earlier image")
        if image.parent_position is not None:
            if not model.has_details:
                raise ValueError(f"image {position}: only street images have a parent")
            parent = _at(images, image.parent_position, position)
            if parent.parent_position is not None or image.parent_position == position:
                # No detail of a detail: the parent must be a main image of this album.
                raise ValueError(f"image {position}: the parent must be a main image")

    rows = model.objects.bulk_create(
        [
            model(
                **{model.record_field: record},
                **({"look_index": image.look_index} if model.has_looks else {}),
                **{name: getattr(image, name) for name in model.ORIGINAL_FIELDS},
                sort_order=image.sort_order,
                is_duplicate=image.is_duplicate,
                dup_of_id=image.dup_of_id,
            )
            for image in images
        ]
    )

    linked = []
    for image, row in zip(images, rows, strict=True):
        if image.dup_of_position is not None:
            row.dup_of = rows[image.dup_of_position]
        if image.parent_position is not None:
            row.parent = rows[image.parent_position]
            row.is_detail = True
        if image.dup_of_position is not None or image.parent_position is not None:
            linked.append(row)
    if linked:
        # One UPDATE: a row's parent and is_detail change together, so the check holds.
        model.objects.bulk_update(
            linked, ["dup_of", "parent", "is_detail"] if model.has_details else ["dup_of"]
        )
    return rows


def _at(images: Sequence[NewImage], index: int, position: int) -> NewImage:
    if not 0 <= index < len(images):
        raise ValueError(f"image {position}: position {index} is not in the list")
    return images[index]
