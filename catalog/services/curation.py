"""The editors' curation: field edits, the cover, deleting and grouping images.

Each service takes the editor (`actor`) and checks, under the record lock, that they may make
the change (`record_check_may_curate`): a published album is on the public site, so changing it
needs the permission to publish, like approving and unpublishing do. Review transitions
(review.services) wrap these with their history rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from catalog.models import (
    NotDuplicate,
    Record,
    RecordImage,
    StreetSnap,
    StreetSnapImage,
)
from catalog.services.records import (
    RecordWriteRefused,
    first_main_image,
    record_apply_edits,
    record_check_may_curate,
    record_lock,
    record_save,
)


def _lock_to_curate[R: Record](
    record: R, actor: User, expected_version: int | None, *, images: bool = True
) -> R:
    locked = record_lock(record=record, expected_version=expected_version)
    record_check_may_curate(record=locked, actor=actor, images=images)
    return locked


# --- Images of a locked record -----------------------------------------------------------------


def _record_of(image: RecordImage) -> Record:
    # Only the id is needed: record_lock re-reads the row under the lock.
    return image.record_model()(pk=image.record_id)


def _street_snap_of(image: StreetSnapImage) -> StreetSnap:
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


def _repair_cover(record: Record) -> None:
    """Cover is null or a live image of the record: if it no longer is, move it to the first
    live main image or clear it. Call under the record lock."""
    if record.cover_id is not None and record.images.live().filter(pk=record.cover_id).exists():
        return
    record.cover = first_main_image(record)


# --- Curation: the editors' field edits and image operations ----------------------------------


@transaction.atomic
def record_update(
    *,
    record: Record,
    actor: User,
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
def image_delete(*, image: RecordImage, actor: User, expected_version: int | None = None) -> Record:
    """An editor deletes an image (soft: its row stays, marked deleted); repair the cover and
    image_count.

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
    return _image_soft_delete(record, image)


@transaction.atomic
def image_take_down(*, image: RecordImage, expected_version: int | None = None) -> Record:
    """Take an image down (a takedown request): soft-deleted as :func:`image_delete` does, but
    without the curation check (review.services checks the takedown permission) and whatever
    the album's status (a published album whose last image goes is taken down first, by the
    caller)."""
    record = record_lock(record=_record_of(image), expected_version=expected_version)
    return _image_soft_delete(record, _image_of(record, image.pk))


def _image_soft_delete(record: Record, image: Any) -> Record:
    """Mark a live image of a locked record deleted; repair the groups, the cover and
    image_count (image_delete's docstring): what deleting and taking down an image share."""
    image.deleted_at = timezone.now()
    image.save(update_fields=["deleted_at"])
    if image.has_details and not image.is_detail:
        details = list(record.images.live().filter(parent=image).order_by("sort_order", "pk"))
        if details:
            new_main, *others = details
            images = type(image).objects
            images.filter(pk=new_main.pk).update(parent=None, is_detail=False)
            images.filter(pk__in=[d.pk for d in others]).update(parent=new_main)
    record.image_count = record.images.live().count()
    _repair_cover(record)
    return record_save(record=record, fields=["image_count", "cover"])


@transaction.atomic
def record_set_cover(
    *,
    record: Record,
    image: RecordImage,
    actor: User,
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
    actor: User,
    expected_version: int | None = None,
) -> StreetSnap:
    """Attach a street image as a detail of a chosen main image of the same album."""
    record = _lock_to_curate(_street_snap_of(image), actor, expected_version)
    image = _image_of(record, image.pk)
    main = _image_of(record, main.pk)
    return _attach(record, [image], main)


@transaction.atomic
def street_images_attach(
    *,
    images: Sequence[StreetSnapImage],
    main: StreetSnapImage,
    actor: User,
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
    record = _lock_to_curate(_street_snap_of(main), actor, expected_version)
    main = _image_of(record, main.pk)
    return _attach(record, _images_of(record, image_ids), main)


@transaction.atomic
def street_image_attach_to_previous(
    *, image: StreetSnapImage, actor: User, expected_version: int | None = None
) -> StreetSnap:
    """Attach a street image as a detail of the nearest live main image before it (by
    sort_order, then id): the usual case of a detail shot crawled right after its look."""
    record = _lock_to_curate(_street_snap_of(image), actor, expected_version)
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
    *, image: StreetSnapImage, actor: User, expected_version: int | None = None
) -> StreetSnap:
    """Make a detail a main image again (its own group, in its place in the order)."""
    record = _lock_to_curate(_street_snap_of(image), actor, expected_version)
    image = _image_of(record, image.pk)
    if not image.is_detail:
        raise RecordWriteRefused(f"Image {image.pk} is already a main image.")
    StreetSnapImage.objects.filter(pk=image.pk).update(parent=None, is_detail=False)
    return record_save(record=record, fields=[])


# --- Near-duplicates: "not a duplicate", and an album's images copied into the one it repeats --


@transaction.atomic
def images_mark_not_duplicate(
    *,
    record: Record,
    images: Sequence[RecordImage],
    actor: User,
    expected_version: int | None = None,
) -> Record:
    """Clear the near-duplicate flag of `images`, live flagged images of `record`, and
    remember each with the image it was flagged against (by content: NotDuplicate), so that
    ingest does not flag the pair again when either album is crawled again."""
    locked = _lock_to_curate(record, actor, expected_version)
    rows = _images_of(locked, [image.pk for image in images])
    if not rows:
        raise RecordWriteRefused("Choose at least one image.")
    pairs = set()
    for row in rows:
        if not row.is_duplicate:
            raise RecordWriteRefused(f"Image {row.pk} is not flagged as a near-duplicate.")
        other = row.dup_of
        # Identical bytes are the same picture whatever an editor says: the flag goes, no
        # pair is kept (and none could be: a pair is two contents).
        if other is not None and row.sha1 and other.sha1 and row.sha1 != other.sha1:
            pairs.add(tuple(sorted((row.sha1, other.sha1))))
    type(rows[0]).objects.filter(pk__in=[row.pk for row in rows]).update(
        is_duplicate=False, dup_of=None
    )
    NotDuplicate.objects.bulk_create(
        [NotDuplicate(sha1_low=low, sha1_high=high) for low, high in sorted(pairs)],
        ignore_conflicts=True,  # said before, of another copy of the same two pictures
    )
    record_save(record=locked, fields=[])
    return locked


@transaction.atomic
def images_copy_into(
    *, record: Record, images: Sequence[RecordImage], actor: User
) -> tuple[Record, list[RecordImage]]:
    """Add copies of `images` (live images of another album of the same kind) to `record`,
    after its last image: new rows over the same stored objects and renditions (the keys
    are content-addressed). A runway's copied looks stay together as new looks after its
    last; a street detail keeps its parent when the parent is copied too, else it becomes a
    main image. Returns the record and the new rows."""
    locked = _lock_to_curate(record, actor, None)
    if not images:
        return locked, []
    # Either image model: Any, as each model's bulk methods take only rows of their own.
    image_model: Any = type(images[0])
    shared = (*image_model.ORIGINAL_FIELDS, *image_model.RENDITION_FIELDS)
    # Numbers never change once given, deleted images' included: count on from the last.
    last = locked.images.aggregate(
        order=Max("sort_order"), **({"look": Max("look_index")} if image_model.has_looks else {})
    )
    order = (last["order"] if last["order"] is not None else -1) + 1
    first_look = (last.get("look") or 0) + 1
    looks: dict[int, int] = {}
    copies = []
    for n, image in enumerate(images):
        copy = image_model(
            **{image_model.record_field: locked},
            **{name: getattr(image, name) for name in shared},
            sort_order=order + n,
        )
        if image_model.has_looks:
            copy.look_index = looks.setdefault(cast(Any, image).look_index, first_look + len(looks))
        copies.append(copy)
    created = image_model.objects.bulk_create(copies)
    if image_model.has_details:
        copy_of = {image.pk: copy for image, copy in zip(images, created, strict=True)}
        for image, copy in zip(images, created, strict=True):
            parent = cast(Any, image).parent_id
            if parent in copy_of:
                image_model.objects.filter(pk=copy.pk).update(
                    parent=copy_of[parent], is_detail=True
                )
    locked.image_count = locked.images.live().count()
    if locked.cover_id is None:
        locked.cover = first_main_image(locked)
    record_save(record=locked, fields=["image_count", "cover"])
    return locked, created
