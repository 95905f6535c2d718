"""The review history's rows, appended by every service under the record's row lock."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.utils import timezone

from catalog.models import Record
from review.models import ReviewEvent

Action = ReviewEvent.Action
Status = Record.Status


def history_append(
    locked: Record,
    *,
    action: str,
    from_status: str,
    actor: User | None,
    reason: str = "",
    changes: dict[str, list[str]] | None = None,
    at: datetime | None = None,
) -> ReviewEvent:
    """The history row of a write just made to `locked`, under its row lock: the row takes
    the version that write gave the record, which orders the history."""
    return ReviewEvent.objects.create(
        **{ReviewEvent.record_field(type(locked)): locked},
        action=action,
        from_status=from_status,
        to_status=locked.status,
        reason=reason,
        changes=changes or {},
        actor=actor,
        at=at or timezone.now(),
        record_version=locked.version,
    )
