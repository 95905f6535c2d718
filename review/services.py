"""Review transitions: the only way a record's status changes by an editor's hand.

The admin calls one service per transition: `record_approve`, `record_reject`,
`record_unpublish`. All three go through `record_transition` and its allowed-transition
table; anything else is refused with a message. Each transition runs in one transaction:
it locks the record row, checks the status it starts from (and the version the editor
loaded, when there is one), applies the editor's field edits with an approve, sets the
review fields, and appends a history row. Image rows are never touched: image ids are
stable across approve, edit and publish.

A change to a published album is not a transition, but the public sees it without an
approve: `record_edit` (field edits) and the image operations (`image_delete`,
`image_make_cover`, `images_attach`, `image_attach_to_previous`, `image_detach`) make the
change and append an "edited while published" row for it, with who and what, in one
transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import ngettext

from catalog.models import Record, RecordImage, Runway, RunwayImage, StreetSnap, StreetSnapImage
from catalog.services import (
    RecordWriteRefused,
    image_remove,
    image_soft_delete,
    images_copy_into,
    images_mark_not_duplicate,
    permission_name,
    record_apply_edits,
    record_check_may_curate,
    record_lock,
    record_save,
    record_set_cover,
    record_update,
    street_image_attach_to_previous,
    street_image_detach,
    street_images_attach,
)
from review.models import ReviewClaim, ReviewEvent
from review.naming import image_name
from review.selectors import record_published_repeat, records_reposts

Action = ReviewEvent.Action
Status = Record.Status


class TransitionRefused(RecordWriteRefused):
    pass


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    # The model permission it needs, as in catalog's Meta.permissions: `<perm>_<model_name>`.
    permission: str
    needs_reason: bool
    verb: str
    done: str


TRANSITIONS: dict[str, Transition] = {
    Action.APPROVE: Transition(
        Status.PENDING, Status.PUBLISHED, "publish", needs_reason=False, verb="approve",
        done="approved",
    ),
    Action.REJECT: Transition(
        Status.PENDING, Status.REJECTED, "reject", needs_reason=True, verb="reject",
        done="rejected",
    ),
    Action.REJECT_REPEAT: Transition(
        Status.PENDING, Status.REJECTED, "reject", needs_reason=True, verb="reject",
        done="rejected",
    ),
    Action.UNPUBLISH: Transition(
        Status.PUBLISHED, Status.REJECTED, "publish", needs_reason=True, verb="unpublish",
        done="unpublished",
    ),
}  # fmt: skip


def transition_permission_name(record_model: type[Record], action: str) -> str:
    """The full permission name an action needs on a kind, e.g. `catalog.publish_runway`."""
    return permission_name(record_model, TRANSITIONS[action].permission)


def kind_label(record_model: type[Record], *, plural: bool = False) -> str:
    opts = record_model._meta
    return str(opts.verbose_name_plural if plural else opts.verbose_name)


@transaction.atomic
def record_transition(
    *,
    record: Record,
    action: str,
    actor: User,
    reason: str = "",
    changes: dict[str, Any] | None = None,
    expected_version: int | None = None,
) -> ReviewEvent:
    """Apply one transition of the table to `record` as `actor`; return its history row.

    `changes` (approve only) are the editor's field edits, applied in the same write.
    `expected_version` is the version the editor's page was loaded at; None skips that check
    (a bulk action from a list without versions), the status check still applies.
    """
    transition = TRANSITIONS.get(action)
    if transition is None:
        raise TransitionRefused(f"Unknown action “{action}”.")
    model = type(record)
    if not actor.has_perm(transition_permission_name(model, action)):
        raise TransitionRefused(
            f"You do not have permission to {transition.verb} {kind_label(model, plural=True)}."
        )
    reason = reason.strip()
    if transition.needs_reason and not reason:
        raise TransitionRefused(f"A reason is required to {transition.verb} an album.")
    if changes and action != Action.APPROVE:
        raise TransitionRefused(f"Field edits are applied with approve, not {transition.verb}.")

    locked = record_lock(record=record, expected_version=expected_version)
    if locked.status != transition.source:
        raise TransitionRefused(
            f"Cannot {transition.verb} “{locked}”: it is {locked.get_status_display().lower()}; "
            f"only {transition.source} {kind_label(model, plural=True)} "
            f"can be {transition.done}."
        )
    if changes:
        # Approving needs the publish permission; the field edits it applies are edits, and
        # need what a plain save of them needs (the admin offers a publisher without the
        # change permission an approve that carries no edits).
        record_check_may_curate(record=locked, actor=actor, images=False)

    diff = record_apply_edits(record=locked, changes=changes or {})
    now = timezone.now()
    from_status = locked.status
    locked.status = transition.target
    locked.reviewer = actor.get_username()
    locked.reviewed_at = now
    fields = [*diff, "status", "reviewer", "reviewed_at", "reject_reason"]
    if transition.target == Status.PUBLISHED:
        locked.reject_reason = ""
        if locked.published_at is None:  # first publication only
            locked.published_at = now
            fields.append("published_at")
    else:
        locked.reject_reason = reason
    record_save(record=locked, fields=fields)

    return _append(
        locked,
        action=action,
        from_status=from_status,
        actor=actor,
        reason=reason,
        changes=diff,
        at=now,
    )


def _append(
    locked: Record,
    *,
    action: str,
    from_status: str,
    actor: User,
    reason: str = "",
    changes: dict[str, list[str]] | None = None,
    at: datetime | None = None,
) -> ReviewEvent:
    """The history row of a write just made to `locked`, under its row lock: the row takes
    the version that write gave the record, which orders the history."""
    return ReviewEvent.objects.create(
        runway=locked if isinstance(locked, Runway) else None,
        street_snap=locked if isinstance(locked, StreetSnap) else None,
        action=action,
        from_status=from_status,
        to_status=locked.status,
        reason=reason,
        changes=changes or {},
        actor=actor,
        at=at or timezone.now(),
        record_version=locked.version,
    )


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
        _log_published_edit(record=locked, actor=actor, changes=diff)
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


def _album_of(image: RecordImage) -> Record:
    # Only the id: record_lock re-reads the row under the lock.
    if isinstance(image, RunwayImage):
        return Runway(pk=image.runway_id)
    return StreetSnap(pk=cast(StreetSnapImage, image).street_snap_id)


def _names(image_model: type[RecordImage], image_ids: Iterable[int]) -> dict[int, str]:
    """“image 3 (id 57)” of each image, in one query (numbers never change)."""
    rows = image_model.objects.filter(pk__in=list(image_ids)).values_list("pk", "sort_order")
    # A kind's image model; the plugin refuses the fields of the abstract one it is typed as.
    return {pk: image_name(image_model(pk=pk, sort_order=order)) for pk, order in rows}  # type: ignore[misc]


def _curated(record: Record, actor: User, note: str) -> Curated:
    _log_published_edit(record=record, actor=actor, note=note)
    return Curated(record, note)


@transaction.atomic
def image_delete(
    *, image: RecordImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Delete `image`, a live image of its album; refused for the last image of a published
    album. (A deleted cover moves to the first main image: the note says where.)"""
    # Locked first, so whether this image is the cover is read as the delete finds it.
    was_cover = record_lock(record=_album_of(image), expected_version=expected_version).cover_id
    record = image_soft_delete(image=image, actor=actor, expected_version=expected_version)
    names = _names(type(image), [image.pk, *([record.cover_id] if record.cover_id else [])])
    note = f"Deleted {names[image.pk]}"
    if was_cover == image.pk:
        moved = (
            f"the cover moved to {names[record.cover_id]}"
            if record.cover_id
            else "the album now has no cover"
        )
        note = f"{note}; {moved}"
    return _curated(record, actor, f"{note}.")


@transaction.atomic
def image_make_cover(
    *, image: RecordImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Make `image` its album's cover; refused unless it is a live image of the album that
    is not the cover already."""
    record = record_set_cover(
        record=_album_of(image), image=image, actor=actor, expected_version=expected_version
    )
    name = _names(type(image), [image.pk])[image.pk]
    return _curated(record, actor, f"{name.capitalize()} is now the cover.")


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
    names = _names(StreetSnapImage, [*image_ids, main.pk])
    # “Images 4 (id 60), 5 (id 61) attached to main image 3 (id 59).”
    listed = ", ".join(names[pk].removeprefix("image ") for pk in image_ids)
    noun = ngettext("Image", "Images", len(image_ids))
    note = f"{noun} {listed} attached to main {names[main.pk]}."
    return _curated(record, actor, note)


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
    names = _names(StreetSnapImage, [image.pk, parent])
    return _curated(
        record, actor, f"{names[image.pk].capitalize()} is now a detail of {names[parent]}."
    )


@transaction.atomic
def image_detach(
    *, image: StreetSnapImage, actor: User, expected_version: int | None = None
) -> Curated:
    """Make the street detail `image` a main image again; refused when it is one already."""
    record = street_image_detach(image=image, actor=actor, expected_version=expected_version)
    name = _names(StreetSnapImage, [image.pk])[image.pk]
    return _curated(record, actor, f"{name.capitalize()} is now a main image.")


def _log_published_edit(
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
    return _append(
        record,
        action=Action.EDIT,
        from_status=record.status,
        actor=actor,
        reason=note,
        changes=changes,
    )


def record_approve(
    *,
    record: Record,
    actor: User,
    changes: dict[str, Any] | None = None,
    expected_version: int | None = None,
) -> ReviewEvent:
    """pending -> published, applying the editor's field edits."""
    return record_transition(
        record=record,
        action=Action.APPROVE,
        actor=actor,
        changes=changes,
        expected_version=expected_version,
    )


def record_reject(
    *,
    record: Record,
    actor: User,
    reason: str,
    expected_version: int | None = None,
) -> ReviewEvent:
    """pending -> rejected, with a reason."""
    return record_transition(
        record=record,
        action=Action.REJECT,
        actor=actor,
        reason=reason,
        expected_version=expected_version,
    )


def record_unpublish(
    *,
    record: Record,
    actor: User,
    reason: str,
    expected_version: int | None = None,
) -> ReviewEvent:
    """published -> rejected, with a reason; published_at keeps the first publication."""
    return record_transition(
        record=record,
        action=Action.UNPUBLISH,
        actor=actor,
        reason=reason,
        expected_version=expected_version,
    )


# --- A repeated album: the same show under another entity key --------------------------------


def _named(record: Record) -> str:
    return f"“{record}” ({kind_label(type(record))} {record.pk})"


def repeating_images(*, record: Record, of: Record) -> list[RecordImage]:
    """The live images of `record` flagged as near-duplicates of live images of `of`."""
    fk = "runway" if isinstance(record, Runway) else "street_snap"
    return list(
        record.images.live()
        .filter(is_duplicate=True, dup_of__deleted_at=None, **{f"dup_of__{fk}": of.pk})
        .select_related("dup_of")
        .order_by("sort_order", "pk")
    )


def record_reject_as_duplicate(
    *, record: Record, of: Record, actor: User, expected_version: int | None = None
) -> ReviewEvent:
    """pending -> rejected as a repeat, the reason naming the album it repeats (undone by
    record_reject_undo)."""
    return record_transition(
        record=record,
        action=Action.REJECT_REPEAT,
        actor=actor,
        reason=f"Duplicate of {_named(of)}, which it repeats.",
        expected_version=expected_version,
    )


@transaction.atomic
def record_reject_as_repeat(
    *, record: Record, actor: User, expected_version: int | None = None
) -> ReviewEvent:
    """pending -> rejected as a duplicate of the published album it repeats most (the bulk
    "reject the repeats of published albums"); refused when it repeats no published album."""
    # Locked first: what it repeats is read as the rejection finds the album.
    locked = record_lock(record=record, expected_version=expected_version)
    repeat = record_published_repeat(record=locked)
    if repeat is None:
        raise TransitionRefused(f"“{locked}” repeats no published album: left as it is.")
    return record_reject_as_duplicate(
        record=locked, of=repeat.record, actor=actor, expected_version=expected_version
    )


def record_reposts_reject(*, head: Record, actor: User) -> tuple[list[ReviewEvent], list[str]]:
    """Reject the re-posts folded under `head` in the queue (review.selectors.records_reposts:
    the same source sent the same show again under other URLs) as duplicates of it: deciding
    `head` decides them. Each in its own transaction, so one refused (changed meanwhile, no
    permission) leaves the others rejected. Returns the rejections and the refusals."""
    events, refused = [], []
    for repost in records_reposts(records=[head], decided=True).get(head.pk, []):
        try:
            events.append(record_reject_as_duplicate(record=repost, of=head, actor=actor))
        except RecordWriteRefused as refusal:
            refused.append(str(refusal))
    return events, refused


@transaction.atomic
def record_reject_undo(*, event: ReviewEvent, actor: User) -> ReviewEvent:
    """Undo `event`, a rejection as a repeat: rejected -> pending, back in the review queue.
    Refused for any other row, and when the album changed since that rejection (any write
    after it moved the album's version on: a re-crawl, an edit, another decision)."""
    record = event.record
    model = type(record)
    if event.action != Action.REJECT_REPEAT:
        raise TransitionRefused("Only a rejection as a repeat can be undone from the history.")
    if not actor.has_perm(transition_permission_name(model, Action.REJECT)):
        raise TransitionRefused(
            f"You do not have permission to reject {kind_label(model, plural=True)}, "
            "nor to undo a rejection."
        )
    locked = record_lock(record=record, expected_version=None)
    if locked.version != event.record_version or locked.status != Status.REJECTED:
        raise TransitionRefused(
            f"“{locked}” changed since it was rejected as a repeat: it is "
            f"{locked.get_status_display().lower()} now; the rejection cannot be undone. "
            "Review it as it stands."
        )
    now = timezone.now()
    locked.status = Status.PENDING
    locked.reviewer = actor.get_username()
    locked.reviewed_at = now
    locked.reject_reason = ""
    record_save(record=locked, fields=["status", "reviewer", "reviewed_at", "reject_reason"])
    return _append(
        locked,
        action=Action.RESTORE,
        from_status=Status.REJECTED,
        actor=actor,
        reason=f"Undid the rejection as a repeat (“{event.reason}”).",
        at=now,
    )


@transaction.atomic
def record_merge_into(
    *, record: Record, into: Record, actor: User, expected_version: int | None = None
) -> tuple[ReviewEvent, int]:
    """Add to `into` the images of `record` that it lacks (those not flagged as repeating
    one of its images), then reject `record`, the reason saying where they went. Returns the
    rejection's history row and the number of images added. One transaction: both or
    neither."""
    if type(record) is not type(into) or record.pk == into.pk:
        raise TransitionRefused("An album merges into another album of its kind.")
    # Both rows locked in id order, so two editors merging the two albums into each other
    # wait for one another instead of deadlocking; the transition locks `record` again.
    for first in sorted((record, into), key=lambda album: album.pk):
        record_lock(record=first, expected_version=None)
    repeated = {image.pk for image in repeating_images(record=record, of=into)}
    lacking = [
        image
        for image in record.images.live().order_by("sort_order", "pk")
        if image.pk not in repeated
    ]
    merged, added = images_copy_into(record=into, images=lacking, actor=actor)
    if added:
        numbers = ", ".join(str(image.sort_order + 1) for image in added)
        noun = ngettext("image", "images", len(added))
        _log_published_edit(
            record=merged, actor=actor, note=f"Added {noun} {numbers} from {_named(record)}."
        )
    event = record_reject(
        record=record,
        actor=actor,
        reason=f"Merged into {_named(into)}: "
        f"{len(added)} {ngettext('image', 'images', len(added))} it lacked added to it.",
        expected_version=expected_version,
    )
    return event, len(added)


@transaction.atomic
def record_not_duplicate(
    *, record: Record, of: Record, actor: User, expected_version: int | None = None
) -> Curated:
    """The images of `record` that repeat `of` are not near-duplicates after all: their flags
    go, and ingest does not flag the pairs again."""
    images = repeating_images(record=record, of=of)
    if not images:
        raise RecordWriteRefused(f"No image of “{record}” is flagged as repeating “{of}”.")
    locked = images_mark_not_duplicate(
        record=record, images=images, actor=actor, expected_version=expected_version
    )
    noun = ngettext("image", "images", len(images))
    return _curated(
        locked, actor, f"{len(images)} {noun} no longer flagged as repeating {_named(of)}."
    )


@transaction.atomic
def image_not_duplicate(
    *, image: RecordImage, actor: User, expected_version: int | None = None
) -> Curated:
    """One image is not a near-duplicate of the image it was flagged against."""
    record = images_mark_not_duplicate(
        record=_album_of(image), images=[image], actor=actor, expected_version=expected_version
    )
    name = _names(type(image), [image.pk])[image.pk]
    return _curated(record, actor, f"{name.capitalize()} is not a near-duplicate.")


# --- Takedowns ------------------------------------------------------------------------------
#
# A photographer, an agency or a model asks for an album (or one image) to go. Not a review
# decision, so not in the transition table: any album may be taken down, whatever its status,
# by an editor holding the kind's own takedown permission. The album leaves the public site in
# this write (its record stops showing), its bytes become private and the edge forgets it after
# commit (catalog.visibility), and the history says who, when and why.


def takedown_permission_name(record_model: type[Record]) -> str:
    return permission_name(record_model, "takedown")


def _check_may_take_down(record_model: type[Record], actor: User, reason: str) -> str:
    if not actor.has_perm(takedown_permission_name(record_model)):
        raise TransitionRefused(
            f"You do not have permission to take {kind_label(record_model, plural=True)} down."
        )
    reason = reason.strip()
    if not reason:
        raise TransitionRefused("A reason is required to take an album or an image down.")
    return reason


@transaction.atomic
def record_take_down(
    *,
    record: Record,
    actor: User,
    reason: str,
    delete: bool = False,
    expected_version: int | None = None,
) -> ReviewEvent:
    """Take `record` off the public site: rejected with `reason`, and with `delete` also
    soft-deleted (its source article stays taken, so a crawler cannot bring it back). Its
    bytes go private and the edge is purged after commit, whatever its status was."""
    reason = _check_may_take_down(type(record), actor, reason)
    locked = record_lock(record=record, expected_version=expected_version)
    now = timezone.now()
    from_status = locked.status
    locked.status = Status.REJECTED
    locked.reviewer = actor.get_username()
    locked.reviewed_at = now
    locked.reject_reason = reason
    fields = ["status", "reviewer", "reviewed_at", "reject_reason"]
    changes: dict[str, list[str]] = {}
    if delete:
        locked.deleted_at = now
        fields.append("deleted_at")
        changes["deleted"] = ["no", "yes"]
    # Announced even when the public did not see it: a takedown also makes sure (bytes an
    # operator's SQL may have left public, an edge that kept a page).
    record_save(record=locked, fields=fields, announce=True)
    return _append(
        locked,
        action=Action.TAKEDOWN,
        from_status=from_status,
        actor=actor,
        reason=reason,
        changes=changes,
        at=now,
    )


@transaction.atomic
def image_take_down(
    *, image: RecordImage, actor: User, reason: str, expected_version: int | None = None
) -> Curated:
    """Take one image off the public site: soft-deleted, its bytes private unless another
    published album shows them. The last image of a published album takes the album down
    with it (a published album keeps an image)."""
    reason = _check_may_take_down(type(_album_of(image)), actor, reason)
    locked = record_lock(record=_album_of(image), expected_version=expected_version)
    name = _names(type(image), [image.pk])[image.pk]
    note = f"Took down {name}: {reason}"
    from_status = locked.status
    if locked.status == Status.PUBLISHED and not locked.images.live().exclude(pk=image.pk).exists():
        record_take_down(
            record=locked, actor=actor, reason=f"its last image was taken down: {reason}"
        )
        note = f"Took down {name}, the album's last image, and the album with it: {reason}"
    record = image_remove(image=image)
    _append(record, action=Action.TAKEDOWN, from_status=from_status, actor=actor, reason=note)
    return Curated(record, note)


# --- Soft claims: who has an album open ---------------------------------------------------


def claim_take(*, record: Record, user: User) -> bool:
    """Hold `record` for `user` (or refresh their hold); False when another editor holds it
    and their claim has not lapsed. Never a lock: nothing else consults it but the queue.

    Race-safe without a transaction of its own: the conditional UPDATE re-checks its WHERE
    on the row it waited for, so of two editors taking one lapsed claim only one matches;
    of two inserting a first claim, the unique constraint lets one in."""
    now = timezone.now()
    lapsed = now - timedelta(seconds=settings.REVIEW_CLAIM_SECONDS)
    claims = ReviewClaim.objects.filter(kind=record._meta.model_name, record_id=record.pk)
    if claims.filter(Q(user=user) | Q(touched_at__lt=lapsed)).update(user=user, touched_at=now):
        return True
    try:
        with transaction.atomic():
            ReviewClaim.objects.create(  # type: ignore[misc]  # model_name: typed optional, set on a model
                kind=record._meta.model_name, record_id=record.pk, user=user, touched_at=now
            )
    except IntegrityError:
        return False  # another editor's fresh claim (or one taken a moment ago)
    return True


def claim_release(*, record: Record, user: User) -> None:
    """`user` has left `record` (decided or skipped it): free it for the others at once."""
    ReviewClaim.objects.filter(
        kind=record._meta.model_name, record_id=record.pk, user=user
    ).delete()
