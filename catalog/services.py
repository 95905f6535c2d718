"""Writes to the catalog: the editors' curation (field edits, the cover, deleting and grouping
images) and the ingest pipeline's writes (create a record with its images, reopen a rejected
one). Review transitions (review.services) are built on the helpers here.

Every write to an existing record runs in a transaction, locks the record row first
(`record_lock`) and saves through `record_save`, which bumps `version`: two writers of one
album (two editors, an editor and a re-crawl) take turns, and the admin can refuse an edit
made on a page that was loaded before the write.

The curation services take the editor (`actor`) and check, under the lock, that they may
make the change (`record_check_may_curate`): a published album is on the public site, so
changing it needs the permission to publish, like approving and unpublishing do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from catalog.models import (
    Brand,
    Record,
    RecordImage,
    Runway,
    RunwayImage,
    StreetSnap,
    StreetSnapImage,
)

# --- Refusals ----------------------------------------------------------------------------------


class RecordWriteRefused(Exception):
    """A write the record's current state does not allow; nothing was written.

    The message is for the editor. Every refusal of a catalog write is one of these, so a
    caller that only reports refusals catches this class alone.
    """


class RecordStateError(RecordWriteRefused):
    """The record is not in the state the write requires: it is deleted, or (a reopen) it is
    not rejected. The ingest pipeline catches this one: for a job it means that the record
    changed between the job's lookup and its lock."""


class StaleRecord(RecordWriteRefused):
    """The record changed since the version the caller loaded; nothing was written.

    Carries the current (locked) record so the caller can say what changed.
    """

    def __init__(self, record: Record, expected_version: int):
        self.record = record
        self.expected_version = expected_version
        super().__init__(
            f"“{record}” changed since you opened it. Nothing was saved: reload the page to see "
            "it as it is now, then make your changes again."
        )


# What an editor may edit on a record, per kind. Everything else (status, review fields,
# source, counts, cover) changes only through a service.
EDITABLE_FIELDS: dict[type[Record], tuple[str, ...]] = {
    Runway: ("title", "description", "brand", "season_code", "season", "year", "collection_type"),
    StreetSnap: ("title", "description", "city", "year", "month"),
}

IMAGE_MODEL: dict[type[Record], type[RecordImage]] = {
    Runway: RunwayImage,
    StreetSnap: StreetSnapImage,
}

ENTITY_KEY_TAKEN = {
    Runway: "Another live runway already has this brand, season code and collection type.",
    StreetSnap: "Another live street album already has this city, year, month and title.",
}


# --- Lock and save: what every write to an existing record goes through -----------------------


def record_lock[R: Record](*, record: R, expected_version: int | None = None) -> R:
    """Re-read `record` under a row lock (the caller is in a transaction) and check it.

    Refuses a soft-deleted record, and a record whose version is not `expected_version`
    (None: the caller has no loaded version to compare, e.g. a bulk action on a list or an
    ingest job). Only the primary key of `record` is used.
    """
    locked = type(record).objects.select_for_update().get(pk=record.pk)
    if locked.deleted_at is not None:
        raise RecordStateError(f"“{locked}” is deleted; it cannot be changed.")
    if expected_version is not None and locked.version != expected_version:
        raise StaleRecord(locked, expected_version)
    return locked


def record_save[R: Record](*, record: R, fields: Iterable[str], refuse_taken_key: bool = True) -> R:
    """Save `fields` of a locked record and bump its version.

    With `refuse_taken_key` (the editors' writes), an entity-key collision (another live
    album already has the edited key) is refused with a message instead of an IntegrityError;
    the savepoint keeps the caller's transaction usable so nothing else of it is
    half-applied. The ingest pipeline passes False: for a job, a key violation means another
    job won the race, and the pipeline needs the IntegrityError itself to end as skipped.
    """
    record.version = F("version") + 1
    update_fields = [*fields, "version", "updated_at"]
    if refuse_taken_key:
        try:
            with transaction.atomic():
                record.save(update_fields=update_fields)
        except IntegrityError as error:
            raise RecordWriteRefused(ENTITY_KEY_TAKEN[type(record)]) from error
    else:
        record.save(update_fields=update_fields)
    if not isinstance(record.version, int):  # backends without UPDATE ... RETURNING
        record.refresh_from_db(fields=["version"])
    return record


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


# --- Who may curate -------------------------------------------------------------------------


def permission_name(model: type[Record] | type[RecordImage], action: str) -> str:
    """The full name of a model permission, e.g. `catalog.change_runway`,
    `catalog.publish_streetsnap`."""
    opts = model._meta
    return f"{opts.app_label}.{action}_{opts.model_name}"


def record_check_may_curate(*, record: Record, actor: AbstractBaseUser, images: bool) -> None:
    """Refuse `actor` a curation write to a locked `record`: its fields (`images` False) or
    its images (True).

    Editing needs the change permission of what is edited. A published album is on the
    public site: changing it needs, besides, the permission to publish (approve and
    unpublish) the kind, or an editor kept from publishing could still rename a published
    album or empty it of its images. Checked under the lock, on the status the write finds.
    """
    model = type(record)
    plural = model._meta.verbose_name_plural
    if not actor.has_perm(permission_name(IMAGE_MODEL[model] if images else model, "change")):
        what = f"the images of {plural}" if images else f"{plural}"
        raise RecordWriteRefused(f"You do not have permission to change {what}.")
    if record.status == Record.Status.PUBLISHED and not actor.has_perm(
        permission_name(model, "publish")
    ):
        raise RecordWriteRefused(
            f"“{record}” is published, so it is on the public site: changing its fields or "
            f"images needs the permission to approve and unpublish {plural}, which your "
            "account does not have. Nothing was changed. Ask an editor who can publish to "
            "make the change."
        )


def _lock_to_curate[R: Record](
    record: R, actor: AbstractBaseUser, expected_version: int | None, *, images: bool = True
) -> R:
    locked = record_lock(record=record, expected_version=expected_version)
    record_check_may_curate(record=locked, actor=actor, images=images)
    return locked


# --- Images of a locked record -----------------------------------------------------------------


def _record_of(image: RecordImage) -> Record:
    # Only the id is needed: record_lock re-reads the row under the lock.
    if isinstance(image, RunwayImage):
        return Runway(pk=image.runway_id)
    return StreetSnap(pk=image.street_snap_id)


def _images_of(record: Record, image_ids: Sequence[int]) -> list[Any]:
    """The current rows of live images of `record`, in the order of `image_ids` (one query;
    the record is locked, so its images hold still)."""
    found = {image.pk: image for image in record.images.filter(pk__in=image_ids)}
    for image_id in image_ids:
        if image_id not in found:
            raise RecordWriteRefused(f"Image {image_id} is not an image of “{record}”.")
        if found[image_id].deleted_at is not None:
            raise RecordWriteRefused(f"Image {image_id} has been deleted.")
    return [found[image_id] for image_id in image_ids]


def _image_of(record: Record, image_id: int) -> Any:
    return _images_of(record, [image_id])[0]


def _first_main_image(record: Record) -> RecordImage | None:
    """The record's first live main image by (sort_order, id): where the cover goes when a
    record is written with new images or loses its cover. (The legacy import applies the
    same rule to legacy rows in catalog.legacy.plan.choose_cover.)"""
    images = record.images.live().order_by("sort_order", "pk")
    if isinstance(record, StreetSnap):
        images = images.filter(is_detail=False)
    return images.first()


def _repair_cover(record: Record) -> None:
    """Cover is null or a live image of the record: if it no longer is, move it to the first
    live main image or clear it. Call under the record lock."""
    if record.cover_id is not None and record.images.live().filter(pk=record.cover_id).exists():
        return
    record.cover = _first_main_image(record)


# --- Curation: the editors' field edits and image operations ----------------------------------


@transaction.atomic
def record_update(
    *,
    record: Record,
    actor: AbstractBaseUser,
    changes: dict[str, Any],
    expected_version: int | None = None,
) -> tuple[Record, dict[str, list[str]]]:
    """An editor's field edits, without a status change. Returns the record and the diff.

    (The admin calls it through review.services.record_edit, which adds a history row to
    the edits of a published album.)"""
    locked = _lock_to_curate(record, actor, expected_version, images=False)
    diff = record_apply_edits(record=locked, changes=changes)
    if diff:
        record_save(record=locked, fields=list(diff))
    return locked, diff


@transaction.atomic
def image_soft_delete(
    *, image: RecordImage, actor: AbstractBaseUser, expected_version: int | None = None
) -> Record:
    """Soft-delete an image; repair the cover and image_count.

    Deleting a street main image that has details keeps its group together: its first live
    detail (by sort_order) becomes the main image and the other details move under it, so
    no live detail is left under a deleted parent.

    The last live image of a published album is refused, whoever asks: the site would show
    an album with no pictures and no cover. The album is unpublished first.
    """
    record = _lock_to_curate(_record_of(image), actor, expected_version)
    image = _image_of(record, image.pk)
    if (
        record.status == Record.Status.PUBLISHED
        and not record.images.live().exclude(pk=image.pk).exists()
    ):
        raise RecordWriteRefused(
            f"Image {image.pk} is the last image of “{record}”, which is published: a "
            "published album keeps at least one image. Nothing was deleted. To remove this "
            "image, unpublish the album first (Unpublish… on its page), then delete the image."
        )
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
    *,
    record: Record,
    image: RecordImage,
    actor: AbstractBaseUser,
    expected_version: int | None = None,
) -> Record:
    """Make a live image of the record its cover."""
    record = _lock_to_curate(record, actor, expected_version)
    image = _image_of(record, image.pk)
    if record.cover_id == image.pk:
        raise RecordWriteRefused(f"Image {image.pk} is already the cover.")
    record.cover = image
    return record_save(record=record, fields=["cover"])


def _attach(
    record: StreetSnap, images: Sequence[StreetSnapImage], main: StreetSnapImage
) -> StreetSnap:
    """Make `images` details of `main`, all at once (current rows of the locked record).

    A main image among `images` that has details of its own takes them along: the groups
    merge, so there is never a detail of a detail. An image that is already under `main`
    (before, or once the groups merge: a detail selected together with its own main image)
    is left as it is; only a selection that would change nothing at all is refused.
    """
    if any(image.pk == main.pk for image in images):
        raise RecordWriteRefused(
            f"Image {main.pk} cannot be a detail of itself: it is the main image chosen."
        )
    if main.is_detail:
        raise RecordWriteRefused(
            f"Image {main.pk} is itself a detail of image {main.parent_id}: choose a main image."
        )
    moving = [image.pk for image in images if image.parent_id != main.pk]
    if not moving:
        listed = ", ".join(str(image.pk) for image in images)
        verb = "is already a detail" if len(images) == 1 else "are already details"
        noun = "Image" if len(images) == 1 else "Images"
        raise RecordWriteRefused(f"{noun} {listed} {verb} of image {main.pk}.")
    # The details of moving main images go first, so no statement leaves a detail under a
    # detail. Deleted details move too: no row at all points at a detail.
    record.images.filter(parent__in=moving).update(parent=main)
    StreetSnapImage.objects.filter(pk__in=moving).update(parent=main, is_detail=True)
    return record_save(record=record, fields=[])


@transaction.atomic
def street_image_attach(
    *,
    image: StreetSnapImage,
    main: StreetSnapImage,
    actor: AbstractBaseUser,
    expected_version: int | None = None,
) -> StreetSnap:
    """Attach a street image as a detail of a chosen main image of the same album."""
    record = _lock_to_curate(_record_of(image), actor, expected_version)
    image = _image_of(record, image.pk)
    main = _image_of(record, main.pk)
    return _attach(record, [image], main)


@transaction.atomic
def street_images_attach(
    *,
    images: Sequence[StreetSnapImage],
    main: StreetSnapImage,
    actor: AbstractBaseUser,
    expected_version: int | None = None,
) -> StreetSnap:
    """Attach a selection of street images as details of a chosen main image of the same
    album, under one lock, as one change.

    The selection may hold a main image together with its own details (the natural way to
    move a group): they all end up under `main`. Refused, with nothing changed: an empty
    selection, `main` among the selection, `main` a detail, an image of another album or a
    deleted one, and a selection already entirely under `main`.
    """
    image_ids = list(dict.fromkeys(image.pk for image in images))
    if not image_ids:
        raise RecordWriteRefused("Select the images to attach first.")
    record = _lock_to_curate(_record_of(main), actor, expected_version)
    main = _image_of(record, main.pk)
    return _attach(record, _images_of(record, image_ids), main)


@transaction.atomic
def street_image_attach_to_previous(
    *, image: StreetSnapImage, actor: AbstractBaseUser, expected_version: int | None = None
) -> StreetSnap:
    """Attach a street image as a detail of the nearest live main image before it (by
    sort_order, then id): the usual case of a detail shot crawled right after its look."""
    record = _lock_to_curate(_record_of(image), actor, expected_version)
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
    return _attach(record, [image], previous)


@transaction.atomic
def street_image_detach(
    *, image: StreetSnapImage, actor: AbstractBaseUser, expected_version: int | None = None
) -> StreetSnap:
    """Make a detail a main image again (its own group, in its place in the order)."""
    record = _lock_to_curate(_record_of(image), actor, expected_version)
    image = _image_of(record, image.pk)
    if not image.is_detail:
        raise RecordWriteRefused(f"Image {image.pk} is already a main image.")
    StreetSnapImage.objects.filter(pk=image.pk).update(parent=None, is_detail=False)
    return record_save(record=record, fields=[])


# --- Ingest writes: create a record with its images, reopen a rejected one --------------------
#
# The ingest pipeline calls these inside its own transaction (the one that also finishes the
# job), so a unique-constraint violation here - another worker created the same album first -
# raises IntegrityError, rolls everything back together, and the pipeline ends its job as
# skipped. A reopen of a record that is no longer a live rejected one raises RecordStateError.


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
    return _record_create(
        Runway,
        images=images,
        brand=brand,
        season_code=season_code,
        season=season,
        year=year,
        collection_type=collection_type,
        title=title,
        description=description,
        source=source,
        source_url=source_url,
        ingest_job_id=ingest_job_id,
        content_checksum=content_checksum,
    )


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
    return _record_reopen(
        runway,
        images=images,
        brand=brand,
        season_code=season_code,
        season=season,
        year=year,
        collection_type=collection_type,
        title=title,
        description=description,
        source=source,
        source_url=source_url,
        ingest_job_id=ingest_job_id,
        content_checksum=content_checksum,
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
    return _record_create(
        StreetSnap,
        images=images,
        city=city,
        year=year,
        month=month,
        title=title,
        description=description,
        source=source,
        source_url=source_url,
        ingest_job_id=ingest_job_id,
        content_checksum=content_checksum,
    )


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
    return _record_reopen(
        street_snap,
        images=images,
        city=city,
        year=year,
        month=month,
        title=title,
        description=description,
        source=source,
        source_url=source_url,
        ingest_job_id=ingest_job_id,
        content_checksum=content_checksum,
    )


def _record_create[R: (Runway, StreetSnap)](
    model: type[R], *, images: Sequence[NewImage], **content: Any
) -> R:
    with transaction.atomic():
        record = model.objects.create(status=model.Status.PENDING, **content)
        _images_add(record, images)
        record.cover = _first_main_image(record)
        record.image_count = len(images)
        # A new record stays at version 1: no page can have loaded an older one.
        record.save(update_fields=["cover", "image_count", "updated_at"])
    return record


def _record_reopen[R: (Runway, StreetSnap)](
    record: R, *, images: Sequence[NewImage], **content: Any
) -> R:
    with transaction.atomic():
        locked = record_lock(record=record)
        if locked.status != locked.Status.REJECTED:
            raise RecordStateError(
                f"Cannot reopen a {locked.status} {locked._meta.verbose_name}: only a "
                "rejected one goes back to review."
            )
        locked.images.live().update(deleted_at=timezone.now())
        _images_add(locked, images)
        for name, value in content.items():
            setattr(locked, name, value)
        locked.status = locked.Status.PENDING
        locked.reviewer = ""
        locked.reviewed_at = None
        locked.reject_reason = ""
        locked.cover = _first_main_image(locked)
        locked.image_count = len(images)
        return record_save(
            record=locked,
            fields=[
                *content,
                "status",
                "reviewer",
                "reviewed_at",
                "reject_reason",
                "cover",
                "image_count",
            ],
            # A key violation is a lost race for the pipeline, not an editor's mistake.
            refuse_taken_key=False,
        )


def _images_add(
    record: Runway | StreetSnap, images: Sequence[NewImage]
) -> list[RunwayImage | StreetSnapImage]:
    """Insert ``images`` in list order, then link the in-list references by id: two
    statements whatever the album's size (bulk inserts return ids on PostgreSQL and SQLite).

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

    model = StreetSnapImage if is_street else RunwayImage
    owner: dict[str, Any] = {"street_snap": record} if is_street else {"runway": record}
    rows = model.objects.bulk_create(
        [
            model(
                **owner,
                **({} if is_street else {"look_index": image.look_index}),
                storage_key=image.storage_key,
                sha1=image.sha1,
                width=image.width,
                height=image.height,
                byte_size=image.byte_size,
                mime_type=image.mime_type,
                original_url=image.original_url,
                sort_order=image.sort_order,
                phash=image.phash,
                phash_algorithm=image.phash_algorithm,
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
            linked, ["dup_of", "parent", "is_detail"] if is_street else ["dup_of"]
        )
    return rows


def _at(images: Sequence[NewImage], index: int, position: int) -> NewImage:
    if not 0 <= index < len(images):
        raise ValueError(f"image {position}: position {index} is not in the list")
    return images[index]
