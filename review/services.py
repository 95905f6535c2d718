"""Review transitions: the only way a record's status changes by an editor's hand.

The admin calls one service per transition: `record_approve`, `record_reject`,
`record_unpublish`. All three go through `record_transition` and its allowed-transition
table; anything else is refused with a message. Each transition runs in one transaction:
it locks the record row, checks the status it starts from (and the version the editor
loaded, when there is one), applies the editor's field edits with an approve, sets the
review fields, and appends a history row. Image rows are never touched: image ids are
stable across approve, edit and publish.

A change to a published album is not a transition, but the public sees it without an
approve: `record_edit` (field edits) and `record_curate_images` (an image operation) make
the change and append an "edited while published" row for it, with who and what, in one
transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from catalog.models import Record, Runway
from catalog.services import (
    RecordWriteRefused,
    permission_name,
    record_apply_edits,
    record_check_may_curate,
    record_lock,
    record_save,
    record_update,
)
from review.models import ReviewClaim, ReviewEvent

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
    actor: AbstractBaseUser,
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
    actor: AbstractBaseUser,
    reason: str = "",
    changes: dict[str, list[str]] | None = None,
    at: datetime | None = None,
) -> ReviewEvent:
    """The history row of a write just made to `locked`, under its row lock: the row takes
    the version that write gave the record, which orders the history."""
    return ReviewEvent.objects.create(
        runway=locked if isinstance(locked, Runway) else None,
        street_snap=None if isinstance(locked, Runway) else locked,
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
    actor: AbstractBaseUser,
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


@transaction.atomic
def record_curate_images(
    *, actor: AbstractBaseUser, operation: Callable[[], tuple[Record, str]]
) -> tuple[Record, str]:
    """One image operation of catalog.services by `actor`; on a published album, with an
    "edited while published" row whose note says what was done. Returns what `operation`
    returned.

    `operation` calls the catalog service as `actor` (the service locks the album and
    refuses an actor who may not curate it) and returns the locked record it got back with
    the note, in the editor's words (the admin shows the same words as its message).
    """
    record, note = operation()
    _log_published_edit(record=record, actor=actor, note=note)
    return record, note


def _log_published_edit(
    *,
    record: Record,
    actor: AbstractBaseUser,
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
    actor: AbstractBaseUser,
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
    actor: AbstractBaseUser,
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
    actor: AbstractBaseUser,
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


# --- Soft claims: who has an album open ---------------------------------------------------


def claim_take(*, record: Record, user: AbstractBaseUser) -> bool:
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
            ReviewClaim.objects.create(
                kind=record._meta.model_name, record_id=record.pk, user=user, touched_at=now
            )
    except IntegrityError:
        return False  # another editor's fresh claim (or one taken a moment ago)
    return True


def claim_release(*, record: Record, user: AbstractBaseUser) -> None:
    """`user` has left `record` (decided or skipped it): free it for the others at once."""
    ReviewClaim.objects.filter(
        kind=record._meta.model_name, record_id=record.pk, user=user
    ).delete()
