"""Review transitions: the only way a record's status changes by an editor's hand.

The admin calls `record_approve` (with the editor's field edits) or `record_reject` (reject,
or unpublish, with a reason). Both go through `record_transition` and its allowed-transition
table; anything else is refused with a message. Each transition runs in one transaction:
it locks the record row, checks the status it starts from (and the version the editor
loaded, when there is one), applies the editor's field edits with an approve, sets the
review fields, and appends a history row. Image rows are never touched: image ids are
stable across approve, edit and publish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from catalog.models import Record
from catalog.services import (
    RecordWriteRefused,
    permission_name,
    record_apply_edits,
    record_check_may_curate,
    record_lock,
    record_save,
)
from review.models import ReviewEvent
from review.services.history import history_append

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


_REJECT = Transition(
    Status.PENDING, Status.REJECTED, "reject", needs_reason=True, verb="reject", done="rejected"
)
TRANSITIONS: dict[str, Transition] = {
    Action.APPROVE: Transition(
        Status.PENDING, Status.PUBLISHED, "publish", needs_reason=False, verb="approve",
        done="approved",
    ),
    Action.REJECT: _REJECT,
    # A rejection like any other; its own action so the history can undo it (RESTORE).
    Action.REJECT_REPEAT: _REJECT,
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

    return history_append(
        locked,
        action=action,
        from_status=from_status,
        actor=actor,
        reason=reason,
        changes=diff,
        at=now,
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
    action: str = Action.REJECT,
    expected_version: int | None = None,
) -> ReviewEvent:
    """To rejected, with a reason: pending -> rejected (REJECT; REJECT_REPEAT, a repeat the
    history can undo), or published -> rejected (UNPUBLISH; published_at keeps the first
    publication). One service for the three: they differ only in their row of TRANSITIONS
    (the status they start from, the permission they need)."""
    if action in TRANSITIONS and TRANSITIONS[action].target != Status.REJECTED:
        raise ValueError(f"{action} does not reject an album.")
    return record_transition(
        record=record,
        action=action,
        actor=actor,
        reason=reason,
        expected_version=expected_version,
    )
