"""What an editor's page was loaded at, and what changed since, in words.

Every record write bumps `Record.version`. A page carries a signed token with the version
and the values it showed; a write from a page whose version is no longer current is refused
(catalog.services.record_lock, under the row lock) and this module says what happened in the
meantime: the transitions from the review history (who, when, from, to), a re-crawl from the
ingest job id, field edits by comparing the shown values with the current ones, and the
admin's own change log for image curation.

A write from a page takes two steps here: `read_loaded` (the token, or the page is refused
as out of date) and `conflict_if_stale` (the lock's StaleRecord, in those words).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core import signing
from django.db.models import Field
from django.utils import formats, timezone

from catalog.models import Record
from catalog.services import RecordWriteRefused, StaleRecord
from review.models import ReviewEvent

SALT = "review.loaded-record"
# Long texts travel as a digest: the token rides in hidden inputs and must stay small.
DIGESTED = {"description"}
OUT_OF_DATE = "This page is out of date or incomplete. Reload it and make your changes again."


class BadToken(ValueError):
    pass


class OutOfDate(RecordWriteRefused):
    """A write from a page without a valid loaded token: there is no version to compare."""


@dataclass(frozen=True)
class Loaded:
    version: int
    at: datetime | None = None
    values: dict[str, str] = field(default_factory=dict)


def shown_values(record: Record) -> dict[str, str]:
    values = {}
    for name in record.editable_fields:
        value = str(getattr(record, name))
        if name in DIGESTED:
            value = hashlib.sha256(value.encode()).hexdigest()[:16]
        values[name] = value
    values.update(
        status=record.status,
        cover=str(record.cover_id or ""),
        image_count=str(record.image_count),
        ingest_job=str(record.ingest_job_id or ""),
    )
    return values


def loaded_token(record: Record) -> str:
    payload = {"v": record.version, "at": timezone.now().isoformat(), "s": shown_values(record)}
    return signing.dumps(payload, salt=SALT, compress=True)


def read_token(token: str | None) -> Loaded:
    if not token:
        raise BadToken("missing")
    try:
        payload = signing.loads(token, salt=SALT)
        return Loaded(
            version=int(payload["v"]),
            at=datetime.fromisoformat(payload["at"]),
            values=dict(payload["s"]),
        )
    except (signing.BadSignature, KeyError, TypeError, ValueError) as error:
        raise BadToken(str(error)) from error


def read_loaded(token: str | None) -> Loaded:
    """What the page that sent `token` was loaded at; OutOfDate (OUT_OF_DATE) when the token
    is missing or not one this site signed."""
    try:
        return read_token(token)
    except BadToken:
        raise OutOfDate(OUT_OF_DATE) from None


@contextmanager
def conflict_if_stale(loaded: Loaded | None) -> Iterator[None]:
    """Turn the StaleRecord a write in the block raises into a refusal that says what changed
    since the page was loaded at `loaded` (conflict_message). None: the write compared no
    version, so it raises no StaleRecord."""
    try:
        yield
    except StaleRecord as stale:
        if loaded is None:
            raise
        raise RecordWriteRefused(conflict_message(stale.record, loaded)) from stale


def when(moment: datetime) -> str:
    """In the admin's one format of times (its DATETIME_FORMAT), the time alone today."""
    local = timezone.localtime(moment)
    if local.date() == timezone.localdate():
        return formats.time_format(local, "TIME_FORMAT")
    return formats.date_format(local, "DATETIME_FORMAT")


def describe_changes(record: Record, loaded: Loaded) -> list[str]:
    """What happened to `record` since it was loaded at `loaded`, one phrase per change."""
    lines: list[str] = []
    of_record = {ReviewEvent.record_field(type(record)): record}
    # Transitions only: an edit while published is a field edit or an image operation, which
    # the comparison of shown values and the admin's change log below already name.
    events = ReviewEvent.objects.filter(**of_record, record_version__gt=loaded.version).exclude(
        action=ReviewEvent.Action.EDIT
    )
    for event in events.select_related("actor"):
        line = (
            f"status changed from {event.from_status} to {event.to_status} "
            f"by {event.who} at {when(event.at)}"
        )
        if event.from_status == event.to_status:  # a row that keeps the status: a schedule
            line = f"{event.get_action_display().lower()} by {event.who} at {when(event.at)}"
        if event.reason:
            line += f" (reason: “{event.reason}”)"
        lines.append(line)

    before, now = loaded.values, shown_values(record)
    if before:
        if before.get("status") != now["status"] and not lines:
            lines.append(f"status changed from {before.get('status')} to {now['status']}")
        if before.get("ingest_job") != now["ingest_job"] and now["ingest_job"]:
            lines.append(
                f"it was re-crawled (ingest job {now['ingest_job']}): its content and images "
                "were replaced"
            )
        for name in record.editable_fields:
            if before.get(name) == now[name]:
                continue
            # editable_fields names the model's own fields, never a reverse relation.
            label = cast(Field, record._meta.get_field(name)).verbose_name
            if name in DIGESTED:
                lines.append(f"{label} changed")
            else:
                lines.append(f"{label} changed from “{before.get(name)}” to “{now[name]}”")
        if before.get("image_count") != now["image_count"]:
            lines.append(
                f"its images changed ({before.get('image_count')} → {now['image_count']} images)"
            )
        elif before.get("cover") != now["cover"]:
            lines.append("its cover changed")

    if loaded.at is not None:
        entries = LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(record),
            object_id=str(record.pk),
            action_time__gt=loaded.at,
        ).select_related("user")
        for entry in entries.order_by("action_time"):
            message = entry.get_change_message().rstrip(".")
            lines.append(f"edited by {entry.user.get_username()} at {when(entry.action_time)}")
            if message:
                lines[-1] += f" ({message})"

    if not lines:
        lines.append("someone else changed it")
    return lines


def conflict_message(record: Record, loaded: Loaded) -> str:
    return (
        f"“{record}” changed since you opened it: {'; '.join(describe_changes(record, loaded))}. "
        "Nothing was saved. Reload the page to see the album as it is now, then make your "
        "changes again."
    )
