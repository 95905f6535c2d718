"""The outbox: every write the public may see adds a ``media_changes`` row in its own
transaction, and the visibility job (:func:`media_changes_run`) runs the rows: it moves each
changed record's bytes, purges the edge, and deletes what is done.

No change holds the ones behind it: a change whose bytes or purge failed keeps its error and
waits out a back-off (``due_at``), and runs read only the changes that are due. A change with
nothing left to do is deleted, whatever its kind. One run at a time, under a lock that dies
with its holder (a PostgreSQL advisory lock of the run's own session).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.dispatch import Signal
from django.utils import timezone

from catalog import edge
from catalog.models import RECORD_MODELS, MediaChange, Record
from catalog.visibility.flag import records_bytes_sync
from catalog.visibility.stores import ERROR_MAX, KeysSync

logger = logging.getLogger(__name__)

# Sent on commit of a write that added MediaChange rows (``at``: when they are due, if later),
# and by a run out of time with changes left: a run is wanted. ingest.apps connects it to the
# visibility queue. Besides, the scheduler runs the job every VISIBILITY_CATCH_UP_SECONDS
# (config/cron.py): it takes the changes whose back-off is over, and those of a run whose
# worker was killed.
media_changed = Signal()
# Sent once the job ran a change an embargo's time scheduled, that time passed: the record went
# live ("go_live") or expired ("expiry") at ``at`` (review connects it to the history).
embargo_reached = Signal()

# Changes a run reads at once; a run goes on reading until nothing is due or its time is up.
BATCH = 1000
RUN_SECONDS = 240


def change_backoff(attempts: int) -> timedelta:
    """How long a change waits after its ``attempts``-th failure (VISIBILITY_RETRY_INTERVALS,
    the last one again for every later failure)."""
    intervals = settings.VISIBILITY_RETRY_INTERVALS or [60]
    return timedelta(seconds=intervals[min(attempts, len(intervals)) - 1])


# --- Noting changes ----------------------------------------------------------------------------


def media_change_note(
    *,
    kind: str,
    record_id: int | None,
    tags: Iterable[str],
    bytes_done: bool = False,
    due_at: datetime | None = None,
) -> MediaChange:
    """Record a change, in the caller's transaction; ask for the job once it commits (at
    ``due_at``, for an embargo's time to come). ``bytes_done``: the caller moved the bytes
    itself (new renditions), only the edge is left."""
    change = MediaChange(kind=kind, record_id=record_id, tags=sorted(set(tags)))
    change.bytes_done = bytes_done
    if due_at is not None:
        change.due_at = due_at
    change.save()
    transaction.on_commit(partial(_announce, at=due_at), robust=True)
    return change


def record_change_note(record: Record, *, due_at: datetime | None = None) -> MediaChange:
    tags = edge.record_tags(record.kind, record.pk)
    return media_change_note(kind=record.kind, record_id=record.pk, tags=tags, due_at=due_at)


def records_change_note(kind: str, record_ids: Iterable[int]) -> list[int]:
    """:func:`record_change_note` for many records of one kind at once (the legacy import, the
    sweep); the ids of the changes."""
    rows = [
        MediaChange(kind=kind, record_id=pk, tags=edge.record_tags(kind, pk)) for pk in record_ids
    ]
    MediaChange.objects.bulk_create(rows, batch_size=1000)
    if rows:
        transaction.on_commit(_announce, robust=True)
    return [row.pk for row in rows]


def records_published_in_bulk(kind: str, record_ids: list[int]) -> list[int]:
    """Records a bulk writer (the legacy import) wrote as published, in its transaction: they
    show once their bytes are public - at once without copies to make, else after the job."""
    if not settings.MEDIA_PUBLIC_COPIES:
        record_model = RECORD_MODELS[kind]
        for start in range(0, len(record_ids), 1000):
            record_model.objects.filter(pk__in=record_ids[start : start + 1000]).update(
                bytes_public=True
            )
    return records_change_note(kind, record_ids)


def _announce(at: datetime | None = None) -> None:
    media_changed.send(sender=MediaChange, at=at)


# --- Running them ------------------------------------------------------------------------------


@dataclass
class ChangesRun:
    changes: int = 0
    records: int = 0
    done: int = 0
    keys: KeysSync = field(default_factory=KeysSync)
    # Records whose bytes did not all move: their changes wait out a back-off.
    failed_records: list[str] = field(default_factory=list)
    purge_error: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed_records and not self.purge_error

    def add(self, other: ChangesRun) -> None:
        self.changes += other.changes
        self.records += other.records
        self.done += other.done
        self.keys.add(other.keys)
        self.failed_records += other.failed_records
        self.purge_error = other.purge_error or self.purge_error

    def summary(self) -> str:
        text = (
            f"{self.changes} change(s), {self.records} record(s), {self.done} done: "
            f"{len(self.keys.published)} object(s) made public, "
            f"{len(self.keys.withdrawn)} made private"
        )
        if self.keys.missing:
            text += f", {len(self.keys.missing)} missing in the private store"
        if self.failed_records:
            text += f"; failed: {', '.join(self.failed_records)}"
        if self.purge_error:
            text += f"; purge failed: {self.purge_error}"
        return text


def media_changes_process(
    *,
    limit: int = BATCH,
    older_than: datetime | None = None,
    pks: Sequence[int] | None = None,
    now: datetime | None = None,
) -> ChangesRun:
    """Run one batch of the changes that are due: move each changed record's bytes, purge the
    edge once for them all, delete the changes that are done. A storage or purge error is left
    on its changes (``attempts``, ``error``) with a back-off (``due_at``); the batch's other
    changes go on. ``older_than``: only changes made before it (the sweep's, beside a live
    job); ``pks``: only these, due or not (an editor's "run now")."""
    now = now or timezone.now()
    run = ChangesRun()
    waiting = MediaChange.objects.order_by("pk")
    if pks is not None:
        waiting = waiting.filter(pk__in=pks)
    else:
        waiting = waiting.filter(due_at__lte=now)
    if older_than is not None:
        waiting = waiting.filter(created_at__lt=older_than)
    changes = list(waiting[:limit])
    if not changes:
        return run
    run.changes = len(changes)

    # A record no longer public left the API with its write: its pages go from the edge at
    # once, before its bytes move (the takedown the public must stop seeing first). A record
    # the public will see only once its bytes are, after them (below).
    records = sorted({(c.kind, c.record_id) for c in changes if c.record_id and not c.bytes_done})
    early = _withdrawn_now(records)
    early_tags = sorted({t for c in changes if (c.kind, c.record_id) in early for t in c.tags})
    if early_tags:
        try:
            edge.edge_purge(tags=early_tags)
        except edge.PurgeError as exc:
            logger.warning("edge purge failed (tried again after the bytes): %s", exc)

    # Bytes, once per record whatever the number of its changes, every record's together.
    errors: dict[tuple[str, int], str] = {}
    by_record, synced = records_bytes_sync(records)
    run.records = len(records)
    run.keys.add(synced)
    for (kind, record_id), sync in by_record.items():
        if sync.keys.failed:
            key, error = next(iter(sync.keys.failed.items()))
            errors[(kind, record_id)] = f"{key}: {error}"
            run.failed_records.append(f"{kind} {record_id}")

    failed: list[MediaChange] = []
    for change in changes:
        record = (change.kind, change.record_id or 0)
        if record in errors:
            failed.append(change)
            change.error = errors[record][:ERROR_MAX]
        elif change.record_id:
            change.bytes_done = True

    # Then the edge, after the origin changed: every change's tags (its API responses changed
    # at its commit, whatever happened to its bytes), the early ones again: a cache in front
    # of the public bucket may have fetched an image again before its bytes left it.
    try:
        edge.edge_purge(tags=[tag for change in changes for tag in change.tags])
    except edge.PurgeError as exc:
        run.purge_error = str(exc)[:ERROR_MAX]
        logger.warning("edge purge failed: %s", run.purge_error)
        for change in changes:
            change.error = change.error or run.purge_error
        failed = changes

    for change in failed:
        change.attempts += 1
        change.due_at = now + change_backoff(change.attempts)
    # A change whose bytes moved but whose purge failed keeps bytes_done: its next run only
    # purges.
    MediaChange.objects.bulk_update(failed, ["bytes_done", "error", "attempts", "due_at"])
    failed_pks = {change.pk for change in failed}
    # Done: bytes moved (or none to move: a brand's change) and the edge purged.
    done = [c.pk for c in changes if c.pk not in failed_pks]
    MediaChange.objects.filter(pk__in=done).delete()
    run.done = len(done)
    _embargoes_reached([c for c in changes if c.pk not in failed_pks], now)
    return run


def _embargoes_reached(changes: list[MediaChange], now: datetime) -> None:
    """Say which of these changes were an embargo's time, now passed (a change noted ahead of
    time is due at exactly that time)."""
    scheduled = [c for c in changes if c.record_id and c.due_at > c.created_at]
    for kind, record_model in RECORD_MODELS.items():
        due = {(c.record_id, c.due_at) for c in scheduled if c.kind == kind and c.due_at <= now}
        if not due:
            continue
        rows = record_model.objects.filter(pk__in={pk for pk, _ in due})
        for pk, go_live_at, expires_at in rows.values_list("pk", "go_live_at", "expires_at"):
            for moment, at in (("go_live", go_live_at), ("expiry", expires_at)):
                if (pk, at) in due:
                    embargo_reached.send(
                        sender=record_model,
                        record_model=record_model,
                        record_id=pk,
                        moment=moment,
                        at=at,
                    )


def _withdrawn_now(records: list[tuple[str, int]]) -> set[tuple[str, int]]:
    """Those of ``records`` that are not public now (one query per kind)."""
    found: set[tuple[str, int]] = set()
    for kind, record_model in RECORD_MODELS.items():
        ids = [record_id for k, record_id in records if k == kind]
        if ids:
            hidden = record_model.objects.filter(pk__in=ids).exclude(
                pk__in=record_model.objects.public()
            )
            found.update((kind, pk) for pk in hidden.values_list("pk", flat=True))
    return found


def media_changes_run(*, seconds: float = RUN_SECONDS) -> ChangesRun | None:
    """The visibility job: run batches of due changes until none is due, one run at a time
    across processes; None when another run holds the lock (it takes these changes too: it
    looks again after letting the lock go). A run out of time asks for the next one."""
    total = ChangesRun()
    deadline = time.monotonic() + seconds
    while True:
        with changes_lock() as held:
            if not held:
                return total if total.changes else None
            while time.monotonic() < deadline:
                batch = media_changes_process()
                total.add(batch)
                # A full batch may have more behind it; one that only failed has not.
                if batch.changes < BATCH or not batch.done:
                    break
        # Changes committed while the lock was held, by writers whose own run found it taken:
        # they are ours. (Never tried yet: a failed one waits out its back-off.)
        if time.monotonic() >= deadline or not _due().filter(attempts=0).exists():
            break
    if _due().filter(attempts=0).exists():
        media_changed.send(sender=MediaChange, at=None)  # out of time: the next run goes on
    return total


def _due():
    return MediaChange.objects.filter(due_at__lte=timezone.now())


# One process on SQLite (the embedded mode): a lock in memory serializes the runs.
_local_lock = threading.Lock()
# Any constant of our own: the advisory lock's id for "a run of the outbox".
_RUN_LOCK_ID = 0x6D656469615F7275


@contextmanager
def changes_lock() -> Iterator[bool]:
    """Hold the outbox's lock if it is free (yields True), else yield False at once. On
    PostgreSQL a session advisory lock: a worker killed mid-run loses its connection, and the
    lock with it."""
    if connection.vendor != "postgresql":
        held = _local_lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                _local_lock.release()
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_RUN_LOCK_ID])
        (held,) = cursor.fetchone()
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [_RUN_LOCK_ID])
