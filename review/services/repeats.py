"""A repeated album: the same show under another entity key, or a source re-posting a show
(review/admin/views/repeats.py): reject it as a repeat (and undo that), merge it, or say it
is not one."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import ngettext

from catalog.models import Record, RecordImage
from catalog.services import (
    RecordWriteRefused,
    images_copy_into,
    images_mark_not_duplicate,
    record_lock,
    record_save,
)
from review.models import ReviewEvent
from review.selectors import record_published_repeat, records_reposts
from review.services.curation import Curated, album_of, curated, image_names, published_edit_log
from review.services.history import history_append
from review.services.transitions import (
    TransitionRefused,
    kind_label,
    record_reject,
    transition_permission_name,
)

Action = ReviewEvent.Action
Status = Record.Status


def _named(record: Record) -> str:
    return f"“{record}” ({kind_label(type(record))} {record.pk})"


def repeating_images(*, record: Record, of: Record) -> list[RecordImage]:
    """The live images of `record` flagged as near-duplicates of live images of `of`."""
    fk = record.image_model().record_field
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
    return record_reject(
        record=record,
        actor=actor,
        reason=f"Duplicate of {_named(of)}, which it repeats.",
        action=Action.REJECT_REPEAT,
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
    return history_append(
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
        published_edit_log(
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
    return curated(
        locked, actor, f"{len(images)} {noun} no longer flagged as repeating {_named(of)}."
    )


@transaction.atomic
def image_not_duplicate(
    *, image: RecordImage, actor: User, expected_version: int | None = None
) -> Curated:
    """One image is not a near-duplicate of the image it was flagged against."""
    record = images_mark_not_duplicate(
        record=album_of(image), images=[image], actor=actor, expected_version=expected_version
    )
    name = image_names(type(image), [image.pk])[image.pk]
    return curated(record, actor, f"{name.capitalize()} is not a near-duplicate.")
