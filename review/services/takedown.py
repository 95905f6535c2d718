"""Takedowns (review/admin/views/takedown.py): an album or one image off the public site, with
its own permission, a reason and a history row."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

# catalog.services.image_take_down is the write that review's image_take_down wraps: named by
# its module, the two do not clash.
from catalog import services as catalog_services
from catalog.models import Record, RecordImage
from catalog.services import (
    permission_name,
    record_lock,
    record_save,
)
from review.models import ReviewEvent
from review.services.curation import Curated, album_of, image_names
from review.services.history import history_append
from review.services.transitions import TransitionRefused, kind_label

Action = ReviewEvent.Action
Status = Record.Status


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
    return history_append(
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
    reason = _check_may_take_down(type(album_of(image)), actor, reason)
    locked = record_lock(record=album_of(image), expected_version=expected_version)
    name = image_names(type(image), [image.pk])[image.pk]
    note = f"Took down {name}: {reason}"
    from_status = locked.status
    if locked.status == Status.PUBLISHED and not locked.images.live().exclude(pk=image.pk).exists():
        record_take_down(
            record=locked, actor=actor, reason=f"its last image was taken down: {reason}"
        )
        note = f"Took down {name}, the album's last image, and the album with it: {reason}"
    record = catalog_services.image_take_down(image=image)
    history_append(
        record, action=Action.TAKEDOWN, from_status=from_status, actor=actor, reason=note
    )
    return Curated(record, note)
