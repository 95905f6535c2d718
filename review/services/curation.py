"""A change to a published album is not a transition, but the public sees it without an
approve: `record_edit` (field edits) and the image operations (`image_delete`,
`image_make_cover`, `images_attach`, `image_attach_to_previous`, `image_detach`) make the
change and append an "edited while published" row for it, with who and what, in one
transaction. One service per button of the image grid (review/admin/views/curation.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import ngettext

# catalog.services.image_delete is the write that review's image_delete wraps: named by its
# module, the two do not clash.
from catalog import services as catalog_services
from catalog.models import Record, RecordImage, StreetSnapImage
from catalog.services import (
    record_lock,
    record_set_cover,
    record_update,
    street_image_attach_to_previous,
    street_image_detach,
    street_images_attach,
)
from review.models import ReviewEvent
from review.naming import image_name
from review.services.history import history_append

Action = ReviewEvent.Action
Status = Record.Status


@transaction.atomic
def record_edit(
    *,
    record: Record,
    actor: User,
    changes: dict[str, Any],
    expected_version: int | None = None,
) -> tuple[Record, dict[str, list[str]]]:
    """An editor's field edits without a status change (catalog.services.record_update,
    which refuses an actor who may not make them); on a published album, with an "edited
    while published" row listing the edits. Returns the record and the diff."""
    locked, diff = record_update(
        record=record, actor=actor, changes=changes, expected_version=expected_version
    )
    if diff:
        published_edit_log(record=locked, actor=actor, changes=diff)
    return locked, diff


# --- Image operations: one per button of the image grid -----------------------------------
#
# Each wraps its catalog.services operation (which locks the album, checks the editor may
# curate it and the version their page was loaded at) and says what it did in the editor's
# words: the admin shows that note as its message, and a published album's history keeps it.


class Curated(NamedTuple):
    """What an image operation did: the album as its write left it (locked until the
    caller's transaction ends) and the note saying what was done."""

    record: Record
    note: str


def album_of(image: RecordImage) -> Record:
    # Only the id: record_lock re-reads the row under the lock.
    return image.record_model()(pk=image.record_id)


def image_names(image_model: type[RecordImage], image_ids: Iterable[int]) -> dict[int, str]:
    """“image 3 (id 57)” of each image, in one query (numbers never change)."""
    rows = image_model.objects.filter(pk__in=list(image_ids)).values_list("pk", "sort_order")
    # A kind's image model; the plugin refuses the fields of the abstract one it is typed as.
    return {pk: image_name(image_model(pk=pk, sort_order=order)) for pk, order in rows}  # type: ignore[misc]


def curated(record: Record, actor: User, note: str) -> Curated:
    published_edit_log(record=record, actor=actor, note=note)
    return Curated(record, note)


@transaction.atomic
def image_delete(
    *, image: RecordImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Delete `image`, a live image of its album; refused for the last image of a published
    album. (A deleted cover moves to the first main image: the note says where.)"""
    # Locked first, so whether this image is the cover is read as the delete finds it.
    was_cover = record_lock(record=album_of(image), expected_version=expected_version).cover_id
    record = catalog_services.image_delete(
        image=image, actor=actor, expected_version=expected_version
    )
    names = image_names(type(image), [image.pk, *([record.cover_id] if record.cover_id else [])])
    note = f"Deleted {names[image.pk]}"
    if was_cover == image.pk:
        moved = (
            f"the cover moved to {names[record.cover_id]}"
            if record.cover_id
            else "the album now has no cover"
        )
        note = f"{note}; {moved}"
    return curated(record, actor, f"{note}.")


@transaction.atomic
def image_make_cover(
    *, image: RecordImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Make `image` its album's cover; refused unless it is a live image of the album that
    is not the cover already."""
    record = record_set_cover(
        record=album_of(image), image=image, actor=actor, expected_version=expected_version
    )
    name = image_names(type(image), [image.pk])[image.pk]
    return curated(record, actor, f"{name.capitalize()} is now the cover.")


@transaction.atomic
def images_attach(
    *,
    images: Sequence[StreetSnapImage],
    main: StreetSnapImage,
    actor: User,
    expected_version: int | None = None,
) -> Curated:
    """Attach street `images` as details of `main`, a live main image of their album;
    refused when the selection is empty, holds `main`, or would change nothing."""
    record = street_images_attach(
        images=images, main=main, actor=actor, expected_version=expected_version
    )
    image_ids = sorted({image.pk for image in images})
    names = image_names(StreetSnapImage, [*image_ids, main.pk])
    # “Images 4 (id 60), 5 (id 61) attached to main image 3 (id 59).”
    listed = ", ".join(names[pk].removeprefix("image ") for pk in image_ids)
    noun = ngettext("Image", "Images", len(image_ids))
    note = f"{noun} {listed} attached to main {names[main.pk]}."
    return curated(record, actor, note)


@transaction.atomic
def image_attach_to_previous(
    *, image: StreetSnapImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Attach street `image` as a detail of the nearest live main image before it; refused
    when there is none."""
    record = street_image_attach_to_previous(
        image=image, actor=actor, expected_version=expected_version
    )
    parent = StreetSnapImage.objects.values_list("parent_id", flat=True).get(pk=image.pk)
    names = image_names(StreetSnapImage, [image.pk, parent])
    return curated(
        record, actor, f"{names[image.pk].capitalize()} is now a detail of {names[parent]}."
    )


@transaction.atomic
def image_detach(
    *, image: StreetSnapImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Make the street detail `image` a main image again; refused when it is one already."""
    record = street_image_detach(image=image, actor=actor, expected_version=expected_version)
    name = image_names(StreetSnapImage, [image.pk])[image.pk]
    return curated(record, actor, f"{name.capitalize()} is now a main image.")


def published_edit_log(
    *,
    record: Record,
    actor: User,
    changes: dict[str, list[str]] | None = None,
    note: str = "",
) -> ReviewEvent | None:
    """Append "edited while published" for a curation write just made to `record`, if the
    album is published: `changes` are field edits, `note` says what was done to its images.

    `record` is the locked copy the catalog service returned; the callers run this in the
    transaction of that write, which still holds the row lock: the row then carries the
    version the write gave the album. An album that is not published gets no row: nobody
    sees it yet, and what an editor changed before approving is in the approve's row.
    """
    if record.status != Status.PUBLISHED:
        return None
    return history_append(
        record,
        action=Action.EDIT,
        from_status=record.status,
        actor=actor,
        reason=note,
        changes=changes,
    )
