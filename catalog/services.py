"""Writes to the catalog.

Every write to a record goes through a function here (or in an app's own services built on
the helpers below), runs in a transaction, locks the record row first and bumps `version`,
so the admin can refuse an edit made on a page that was loaded before the write.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from catalog.models import Record, RecordImage, Runway, RunwayImage, StreetSnap, StreetSnapImage

# --- Curation: the editors' field edits and image operations ---------------------------------
# Used by the review admin. The ingest pipeline has its own writes below this block; both
# follow the same rule: lock the record row before touching the record or its images, so
# two writers of one album (two editors, an editor and a re-crawl) take turns.


class RecordWriteRefused(Exception):
    """A write the record's current state does not allow. The message is for the editor."""


class StaleRecord(RecordWriteRefused):
    """The record changed since the version the caller loaded; nothing was written.

    Carries the current (locked) record so the caller can say what changed.
    """

    def __init__(self, record: Record, expected_version: int):
        self.record = record
        self.expected_version = expected_version
        super().__init__(
            f"“{record}” changed since you opened it (version {expected_version}, now "
            f"{record.version}). Nothing was saved: reload it and try again."
        )


# What an editor may edit on a record, per kind. Everything else (status, review fields,
# source, counts, cover) changes only through a service.
EDITABLE_FIELDS: dict[type[Record], tuple[str, ...]] = {
    Runway: ("title", "description", "brand", "season_code", "season", "year", "collection_type"),
    StreetSnap: ("title", "description", "city", "year", "month"),
}

ENTITY_KEY_TAKEN = {
    Runway: "Another live runway already has this brand, season code and collection type.",
    StreetSnap: "Another live street album already has this city, year, month and title.",
}


def record_lock(*, record: Record, expected_version: int | None = None) -> Record:
    """Re-read `record` under a row lock (the caller is in a transaction) and check it.

    Refuses a soft-deleted record, and a record whose version is not `expected_version`
    (None: the caller has no loaded version to compare, e.g. a bulk action on a list).
    """
    locked = type(record).objects.select_for_update().get(pk=record.pk)
    if locked.deleted_at is not None:
        raise RecordWriteRefused(f"“{locked}” is deleted; it cannot be changed.")
    if expected_version is not None and locked.version != expected_version:
        raise StaleRecord(locked, expected_version)
    return locked


def record_apply_edits(*, record: Record, changes: dict[str, Any]) -> dict[str, list[str]]:
    """Set the editor's field edits on a locked record (not saved yet).

    Returns what actually changed as {field: [old, new]} in display form, for the history.
    """
    allowed = EDITABLE_FIELDS[type(record)]
    unknown = set(changes) - set(allowed)
    if unknown:
        # A programming error (a form offering a field it should not), not an editor's.
        raise ValueError(f"Not editable on {type(record).__name__}: {sorted(unknown)}")
    diff: dict[str, list[str]] = {}
    for name, value in changes.items():
        field = record._meta.get_field(name)
        old = getattr(record, field.attname)
        new = value.pk if field.is_relation and value is not None else value
        if old == new:
            continue
        old_shown = str(getattr(record, name)) if field.is_relation else str(old)
        setattr(record, name, value)
        diff[name] = [old_shown, str(value)]
    return diff


def record_save(*, record: Record, fields: list[str] | tuple[str, ...]) -> Record:
    """Save `fields` of a locked record and bump its version.

    An entity-key collision (another live album already has the edited key) is refused with
    a message instead of an IntegrityError; the savepoint keeps the caller's transaction
    usable so nothing else of it is half-applied.
    """
    record.version = F("version") + 1
    try:
        with transaction.atomic():
            record.save(update_fields=[*fields, "version", "updated_at"])
    except IntegrityError as error:
        raise RecordWriteRefused(ENTITY_KEY_TAKEN[type(record)]) from error
    if not isinstance(record.version, int):  # backends without UPDATE ... RETURNING
        record.refresh_from_db(fields=["version"])
    return record


@transaction.atomic
def record_update(
    *, record: Record, changes: dict[str, Any], expected_version: int | None = None
) -> tuple[Record, dict[str, list[str]]]:
    """An editor's field edits, without a status change. Returns the record and the diff."""
    locked = record_lock(record=record, expected_version=expected_version)
    diff = record_apply_edits(record=locked, changes=changes)
    if diff:
        record_save(record=locked, fields=list(diff))
    return locked, diff


def _image_model(record: Record) -> type[RecordImage]:
    return RunwayImage if isinstance(record, Runway) else StreetSnapImage


def _record_of(image: RecordImage) -> Record:
    # Only the id is needed: record_lock re-reads the row under the lock.
    if isinstance(image, RunwayImage):
        return Runway(pk=image.runway_id)
    return StreetSnap(pk=image.street_snap_id)


def _image_of(record: Record, image_id: int, *, live: bool = True) -> RecordImage:
    """The current row of an image of `record` (the record is locked: images hold still)."""
    image = record.images.filter(pk=image_id).first()
    if image is None:
        raise RecordWriteRefused(f"Image {image_id} is not an image of “{record}”.")
    if live and image.deleted_at is not None:
        raise RecordWriteRefused(f"Image {image_id} has been deleted.")
    return image


def _first_main_image(record: Record) -> RecordImage | None:
    images = record.images.live().order_by("sort_order", "pk")
    if isinstance(record, StreetSnap):
        images = images.filter(is_detail=False)
    return images.first()


def _repair_cover(record: Record) -> None:
    """Cover is null or a live image of the record: if it no longer is, move it to the first
    live main image (by sort_order) or clear it. Call under the record lock."""
    if record.cover_id is not None and record.images.live().filter(pk=record.cover_id).exists():
        return
    record.cover = _first_main_image(record)


@transaction.atomic
def image_soft_delete(*, image: RecordImage, expected_version: int | None = None) -> Record:
    """Soft-delete an image; repair the cover and image_count.

    Deleting a street main image that has details keeps its group together: its first live
    detail (by sort_order) becomes the main image and the other details move under it, so
    no live detail is left under a deleted parent.
    """
    record = record_lock(record=_record_of(image), expected_version=expected_version)
    image = _image_of(record, image.pk)
    image.deleted_at = timezone.now()
    image.save(update_fields=["deleted_at"])
    if isinstance(image, StreetSnapImage) and not image.is_detail:
        details = list(record.images.live().filter(parent=image).order_by("sort_order", "pk"))
        if details:
            new_main, *others = details
            StreetSnapImage.objects.filter(pk=new_main.pk).update(parent=None, is_detail=False)
            StreetSnapImage.objects.filter(pk__in=[d.pk for d in others]).update(parent=new_main)
    record.image_count = record.images.live().count()
    _repair_cover(record)
    return record_save(record=record, fields=["image_count", "cover"])


@transaction.atomic
def record_set_cover(
    *, record: Record, image: RecordImage, expected_version: int | None = None
) -> Record:
    """Make a live image of the record its cover."""
    record = record_lock(record=record, expected_version=expected_version)
    image = _image_of(record, image.pk)
    if record.cover_id == image.pk:
        raise RecordWriteRefused(f"Image {image.pk} is already the cover.")
    record.cover = image
    return record_save(record=record, fields=["cover"])


def _attach(record: StreetSnap, image: StreetSnapImage, main: StreetSnapImage) -> StreetSnap:
    """Make `image` a detail of `main` (both current rows of the locked record).

    If `image` is a main image with details of its own, the groups merge: its details move to
    `main` with it, so there is never a detail of a detail. Deleted details move too, so no
    row at all points at a detail.
    """
    if image.pk == main.pk:
        raise RecordWriteRefused("An image cannot be a detail of itself.")
    if main.is_detail:
        raise RecordWriteRefused(
            f"Image {main.pk} is itself a detail of image {main.parent_id}: choose a main image."
        )
    if image.parent_id == main.pk:
        raise RecordWriteRefused(f"Image {image.pk} is already a detail of image {main.pk}.")
    record.images.filter(parent=image).update(parent=main)
    StreetSnapImage.objects.filter(pk=image.pk).update(parent=main, is_detail=True)
    return record_save(record=record, fields=[])


@transaction.atomic
def street_image_attach(
    *, image: StreetSnapImage, main: StreetSnapImage, expected_version: int | None = None
) -> StreetSnap:
    """Attach a street image as a detail of a chosen main image of the same album."""
    record = record_lock(record=_record_of(image), expected_version=expected_version)
    image = _image_of(record, image.pk)
    main = _image_of(record, main.pk)
    return _attach(record, image, main)


@transaction.atomic
def street_image_attach_to_previous(
    *, image: StreetSnapImage, expected_version: int | None = None
) -> StreetSnap:
    """Attach a street image as a detail of the nearest live main image before it (by
    sort_order, then id): the usual case of a detail shot crawled right after its look."""
    record = record_lock(record=_record_of(image), expected_version=expected_version)
    image = _image_of(record, image.pk)
    before = Q(sort_order__lt=image.sort_order) | Q(sort_order=image.sort_order, pk__lt=image.pk)
    previous = (
        record.images.live()
        .filter(before, is_detail=False)
        .exclude(pk=image.pk)
        .order_by("-sort_order", "-pk")
        .first()
    )
    if previous is None:
        raise RecordWriteRefused(f"There is no main image before image {image.pk}.")
    return _attach(record, image, previous)


@transaction.atomic
def street_image_detach(
    *, image: StreetSnapImage, expected_version: int | None = None
) -> StreetSnap:
    """Make a detail a main image again (its own group, in its place in the order)."""
    record = record_lock(record=_record_of(image), expected_version=expected_version)
    image = _image_of(record, image.pk)
    if not image.is_detail:
        raise RecordWriteRefused(f"Image {image.pk} is already a main image.")
    StreetSnapImage.objects.filter(pk=image.pk).update(parent=None, is_detail=False)
    return record_save(record=record, fields=[])


# --- End of curation ---------------------------------------------------------------------------
