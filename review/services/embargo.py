"""Embargoes: an album's go-live and expiry (review/admin/views/embargo.py).

An editor sets or clears them (`record_schedule`), or approves an album "for" a time
(`record_approve_for`); times are typed and shown in the editors' time zone and stored in UTC
(review.middleware). A go-live in the past means now; an expiry before the go-live, or already
past, is refused. The catalog does the rest at each time (catalog.visibility: the bytes move,
the edge is purged), and the history notes that the album went live or expired
(`record_embargo_reached`, which catalog's `embargo_reached` signal calls).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import formats, timezone

from catalog.models import Record
from catalog.services import permission_name, record_lock, record_save
from review.models import ReviewEvent
from review.services.history import history_append
from review.services.transitions import TransitionRefused, kind_label, record_approve

Action = ReviewEvent.Action


class ScheduleRefused(TransitionRefused):
    pass


def shown(moment: datetime | None) -> str:
    """A time as the admin writes it, in the editors' time zone; "none" for no time. That
    zone by name, not the current one: the archive writes its go-live and expiry rows from a
    job, outside the admin's requests (review.middleware)."""
    if moment is None:
        return "none"
    local = timezone.localtime(moment, ZoneInfo(settings.EDITORS_TIME_ZONE))
    return formats.date_format(local, "DATETIME_FORMAT")


def _checked(
    record: Record, actor: User, go_live_at: datetime | None, expires_at: datetime | None
) -> tuple[datetime | None, datetime | None]:
    model = type(record)
    if not actor.has_perm(permission_name(model, "publish")):
        raise ScheduleRefused(
            f"You do not have permission to schedule {kind_label(model, plural=True)}: "
            "that is the permission to approve and unpublish them."
        )
    now = timezone.now()
    if go_live_at is not None and go_live_at <= now:
        go_live_at = None  # a go-live in the past means now
    if expires_at is not None and expires_at <= now:
        raise ScheduleRefused(
            f"The expiry {shown(expires_at)} has passed: it would take the album off at once. "
            "Unpublish it instead, or give a time to come."
        )
    if go_live_at is not None and expires_at is not None and expires_at <= go_live_at:
        raise ScheduleRefused(
            f"The expiry ({shown(expires_at)}) must come after the go-live "
            f"({shown(go_live_at)}). Nothing was changed."
        )
    return go_live_at, expires_at


@transaction.atomic
def record_schedule(
    *,
    record: Record,
    actor: User,
    go_live_at: datetime | None,
    expires_at: datetime | None,
    expected_version: int | None = None,
) -> ReviewEvent | None:
    """Set `record`'s go-live and expiry (None clears one); its history row, or None if
    nothing changed. A published album's new times take effect like any change: it leaves or
    joins the public at once, or at its time."""
    go_live_at, expires_at = _checked(record, actor, go_live_at, expires_at)
    locked = record_lock(record=record, expected_version=expected_version)
    changes: dict[str, list[str]] = {}
    for name, value in (("go_live_at", go_live_at), ("expires_at", expires_at)):
        before = getattr(locked, name)
        if before != value:
            changes[name] = [shown(before), shown(value)]
            setattr(locked, name, value)
    if not changes:
        return None
    record_save(record=locked, fields=list(changes))
    return history_append(
        locked,
        action=Action.SCHEDULE,
        from_status=locked.status,
        actor=actor,
        reason=_summary(locked),
        changes=changes,
    )


@transaction.atomic
def record_approve_for(
    *,
    record: Record,
    actor: User,
    go_live_at: datetime | None,
    expires_at: datetime | None = None,
    changes: dict[str, Any] | None = None,
    expected_version: int | None = None,
) -> ReviewEvent:
    """Approve `record` to go live at `go_live_at` (and leave at `expires_at`): its times,
    then the approve, in one transaction; the approve's history row."""
    scheduled = record_schedule(
        record=record,
        actor=actor,
        go_live_at=go_live_at,
        expires_at=expires_at,
        expected_version=expected_version,
    )
    # The schedule checked the page's version, and bumped it if it changed anything.
    version = None if scheduled is not None else expected_version
    return record_approve(record=record, actor=actor, changes=changes, expected_version=version)


def _summary(record: Record) -> str:
    parts = []
    if record.go_live_at is not None:
        parts.append(f"goes live {shown(record.go_live_at)}")
    if record.expires_at is not None:
        parts.append(f"expires {shown(record.expires_at)}")
    summary = "; ".join(parts)
    # Not str.capitalize(), which would write "march".
    return summary[:1].upper() + summary[1:] if parts else "No go-live or expiry"


def record_embargo_reached(
    *, record_model: type[Record], record_id: int, moment: str, at: datetime, **kwargs: Any
) -> ReviewEvent | None:
    """The history row of an album going live (`moment` "go_live") or expiring ("expiry") at
    `at`, added by the archive itself, once per time (catalog's `embargo_reached` signal
    calls it after the visibility job ran the time's change)."""
    action, field, done = {
        "go_live": (Action.GO_LIVE, "go_live_at", "Went live"),
        "expiry": (Action.EXPIRE, "expires_at", "Expired"),
    }[moment]
    with transaction.atomic():
        locked = record_model.objects.select_for_update().filter(pk=record_id).first()
        if locked is None or getattr(locked, field) != at:
            return None  # the time changed since: its own change will say
        events = ReviewEvent.objects.filter(**{ReviewEvent.record_field(record_model): locked})
        if events.filter(action=action, at=at).exists():
            return None
        return history_append(
            locked,
            action=action,
            from_status=locked.status,
            actor=None,
            reason=f"{done} at {shown(at)}, as scheduled.",
            at=at,
        )
