"""Bytes are public exactly while published: the rule (:func:`public_keys_among`), the moves
that hold it (:func:`keys_sync`, :func:`record_bytes_sync`, :func:`media_changes_process`) and
the sweep (:func:`media_sweep`).

The two stores, the ledger, the ``bytes_public`` flag, the outbox of media changes and the
tests that hold each part: docs/architecture.md, "Visibility reaches the bytes and the edge".
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage, storages
from django.db import connection, transaction
from django.db.models import F, Q
from django.dispatch import Signal
from django.utils import timezone

from catalog import edge
from catalog.models import (
    MediaChange,
    MediaSweep,
    PublicObject,
    Record,
    Runway,
    RunwayImage,
    StreetSnap,
    StreetSnapImage,
)
from catalog.storage import sha1_of_rendition_key

logger = logging.getLogger(__name__)

# Sent on commit of a write that added MediaChange rows: the job that runs them is wanted.
# ingest.apps connects it to the visibility queue; without a receiver, the sweep runs them.
media_changed = Signal()

Pending = PublicObject.Pending
PUBLISHED = Record.Status.PUBLISHED

# kind: (record model, image model, the image's foreign key to its record)
KINDS: dict[
    str, tuple[type[Runway] | type[StreetSnap], type[RunwayImage] | type[StreetSnapImage], str]
] = {
    "runway": (Runway, RunwayImage, "runway"),
    "street": (StreetSnap, StreetSnapImage, "street_snap"),
}

_BATCH = 200  # keys per lock and per ledger statement
_THREADS = 8  # storage calls at once: each is one round trip
_ERROR_MAX = 300
_MISSING = "missing in the private store"


def kind_of(record: Record) -> str:
    return "runway" if isinstance(record, Runway) else "street"


def is_public(record: Record) -> bool:
    """Whether the rule counts this record's images: published and not deleted."""
    return record.status == PUBLISHED and record.deleted_at is None


def public_storage() -> Storage:
    return storages["public"] if "public" in settings.STORAGES else default_storage


def public_url(key: str) -> str:
    return public_storage().url(key)


# --- The rule --------------------------------------------------------------------------------


def _public_images(kind: str):
    _, image_model, parent = KINDS[kind]
    return image_model.objects.filter(
        deleted_at__isnull=True,
        **{f"{parent}__status": PUBLISHED, f"{parent}__deleted_at__isnull": True},
    )


def public_keys_among(keys: Iterable[str]) -> set[str]:
    """The keys among ``keys`` that a published, live record shows (module docstring)."""
    originals: list[str] = []
    renditions: dict[str, list[str]] = {}
    for key in keys:
        sha1 = sha1_of_rendition_key(key)
        if sha1 is None:
            originals.append(key)
        else:
            renditions.setdefault(sha1, []).append(key)
    found: set[str] = set()
    for kind in KINDS:
        images = _public_images(kind)
        if originals:
            found.update(
                images.filter(storage_key__in=originals).values_list("storage_key", flat=True)
            )
        if renditions:
            for sha1 in images.filter(sha1__in=list(renditions)).values_list("sha1", flat=True):
                found.update(renditions[sha1])
    return found


def key_is_public(key: str) -> bool:
    """The rule for one key: what the embedded mode's media route asks at each request."""
    return bool(public_keys_among([key]))


def record_keys(kind: str, record_id: int) -> set[str]:
    """Every key a record's images name or named: originals, listed renditions, and what the
    ledger holds of their bytes (deleted images too: their keys may have to be withdrawn)."""
    _, image_model, parent = KINDS[kind]
    keys: set[str] = set()
    sha1s: set[str] = set()
    rows = image_model.objects.filter(**{f"{parent}_id": record_id}).values_list(
        "storage_key", "sha1", "renditions"
    )
    for storage_key, sha1, renditions in rows:
        keys.add(storage_key)
        keys.update(r["key"] for r in renditions or [] if r.get("key"))
        if sha1:
            sha1s.add(sha1)
    if sha1s:
        keys.update(PublicObject.objects.filter(sha1__in=sha1s).values_list("key", flat=True))
    return keys


# --- Moving keys -------------------------------------------------------------------------------


@dataclass
class KeysSync:
    published: list[str] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    # Keys whose copy or removal failed, with the error (tried again later).
    failed: dict[str, str] = field(default_factory=dict)
    # Public keys whose object is not in the private store: nothing to copy, the URL answers
    # 404 whatever we do. Reported, never blocking.
    missing: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return [*self.published, *self.withdrawn]

    def add(self, other: KeysSync) -> None:
        self.published += other.published
        self.withdrawn += other.withdrawn
        self.failed.update(other.failed)
        self.missing += other.missing


def keys_sync(keys: Iterable[str]) -> KeysSync:
    """Move each key to the state the rule gives it now: copy to the public store, or remove
    from it (module docstring). Storage errors are caught per key and left pending; database
    errors propagate. Meant to run outside a transaction: each step commits on its own."""
    result = KeysSync()
    ordered = sorted(set(keys))
    for start in range(0, len(ordered), _BATCH):
        batch = ordered[start : start + _BATCH]
        with _key_locks(batch):
            result.add(_sync_batch(batch))
    return result


# One process on SQLite (the embedded mode): a lock in memory serializes the syncs.
_local_lock = threading.Lock()


@contextmanager
def _key_locks(keys: Sequence[str]) -> Iterator[None]:
    """Hold a lock per key (PostgreSQL advisory locks of this session; taken in one order, so
    two syncs of overlapping keys cannot deadlock): the rule is read, and the store changed,
    by one sync of a key at a time."""
    if connection.vendor != "postgresql":
        with _local_lock:
            yield
        return
    ids = sorted({_lock_id(key) for key in keys})
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(x) FROM unnest(%s::bigint[]) AS x", [ids])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(x) FROM unnest(%s::bigint[]) AS x", [ids])


def _lock_id(key: str) -> int:
    digest = hashlib.sha1(f"public-object:{key}".encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _sync_batch(batch: list[str]) -> KeysSync:
    result = KeysSync()
    wanted = public_keys_among(batch)
    rows = {row.key: row for row in PublicObject.objects.filter(key__in=batch)}
    publish = [k for k in batch if k in wanted and not (k in rows and rows[k].confirmed)]
    withdraw = [k for k in batch if k not in wanted and k in rows]
    if not publish and not withdraw:
        return result

    # The intent, committed before the store is touched.
    now = timezone.now()
    PublicObject.objects.bulk_create(
        [
            PublicObject(
                key=k, sha1=sha1_of_rendition_key(k) or "", pending=Pending.PUBLISH, changed_at=now
            )
            for k in publish
            if k not in rows
        ],
        ignore_conflicts=True,
    )
    PublicObject.objects.filter(key__in=[k for k in publish if k in rows]).update(
        pending=Pending.PUBLISH, changed_at=now
    )
    PublicObject.objects.filter(key__in=withdraw).update(
        pending=Pending.WITHDRAW, confirmed=False, changed_at=now
    )

    outcomes = _store_changes([(k, True) for k in publish] + [(k, False) for k in withdraw])

    now = timezone.now()
    done = [k for k in publish if outcomes[k] in (None, _MISSING)]
    result.published = [k for k in publish if outcomes[k] is None]
    result.missing = [k for k in publish if outcomes[k] == _MISSING]
    PublicObject.objects.filter(key__in=result.published).update(
        confirmed=True, pending=Pending.NONE, failures=0, error="", changed_at=now
    )
    # Missing: nothing is in the public store; the row stays pending, so the sweep looks
    # again (the object may be restored), and says so.
    PublicObject.objects.filter(key__in=result.missing).update(
        failures=F("failures") + 1, error=_MISSING, changed_at=now
    )
    result.withdrawn = [k for k in withdraw if outcomes[k] is None]
    PublicObject.objects.filter(key__in=result.withdrawn, pending=Pending.WITHDRAW).delete()
    for key in [*publish, *withdraw]:
        error = outcomes[key]
        if error is not None and error != _MISSING:
            result.failed[key] = error
            PublicObject.objects.filter(key=key).update(
                failures=F("failures") + 1, error=error[:_ERROR_MAX], changed_at=now
            )
    if done or result.failed:
        logger.debug(
            "keys_sync: %s published, %s withdrawn", len(result.published), len(result.withdrawn)
        )
    for key, error in result.failed.items():
        logger.warning("visibility of %s: %s", key, error)
    return result


def _store_changes(changes: list[tuple[str, bool]]) -> dict[str, str | None]:
    """Copy (True) or remove (False) each key in the public store; the error of each, or None."""
    if not settings.MEDIA_PUBLIC_COPIES:
        # The media route decides per request: the ledger is all there is to keep.
        return {key: None for key, _ in changes}
    private, public = default_storage, public_storage()

    def one(change: tuple[str, bool]) -> tuple[str, str | None]:
        key, make_public = change
        try:
            if make_public:
                return key, _copy(key, private, public)
            public.delete(key)  # an object already gone is no error (S3, the file system)
            return key, None
        except Exception as exc:  # noqa: BLE001 - any storage error (boto3, OSError) is retried
            return key, f"{type(exc).__name__}: {exc}"[:_ERROR_MAX]

    with ThreadPoolExecutor(max_workers=min(_THREADS, len(changes) or 1)) as pool:
        return dict(pool.map(one, changes))


def public_cache_control() -> str:
    """The Cache-Control of a public image: browsers keep it MEDIA_CACHE_SECONDS; with a purge
    backend, shared caches keep it EDGE_CACHE_SECONDS (every withdrawal purges it)."""
    value = f"public, max-age={settings.MEDIA_CACHE_SECONDS}"
    if edge.purge_enabled():
        value += f", s-maxage={settings.EDGE_CACHE_SECONDS}"
    return value


def _is_s3(storage: Storage) -> bool:
    return hasattr(storage, "bucket") and hasattr(storage, "_normalize_name")


def _content_type(key: str) -> str:
    return mimetypes.guess_type(key)[0] or "application/octet-stream"


def _copy(key: str, private: Storage, public: Storage) -> str | None:
    if _is_s3(private) and _is_s3(public):
        from botocore.exceptions import ClientError

        # A copy inside S3: the bytes never leave it. Its own headers (the private object's
        # are private).
        try:
            public.bucket.Object(public._normalize_name(key)).copy_from(  # type: ignore[attr-defined]
                CopySource={
                    "Bucket": private.bucket.name,  # type: ignore[attr-defined]
                    "Key": private._normalize_name(key),  # type: ignore[attr-defined]
                },
                MetadataDirective="REPLACE",
                ContentType=_content_type(key),
                CacheControl=public_cache_control(),
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
                return _MISSING
            raise
        return None
    try:
        with private.open(key, "rb") as original:
            data = original.read()
    except FileNotFoundError:
        return _MISSING
    if public.exists(key):
        public.delete(key)
    saved = public.save(key, ContentFile(data))
    if saved != key:  # a store that never overwrites picked another name: same bytes
        public.delete(saved)
    return None


# --- Records -----------------------------------------------------------------------------------


@dataclass
class RecordSync:
    keys: KeysSync
    # bytes_public after the sync: the public views show the record.
    visible: bool


def record_bytes_sync(kind: str, record_id: int) -> RecordSync:
    """Move the bytes of one record's images to the rule's state, then set ``bytes_public``
    if it is public and nothing it shows failed to move (or clear it, if it is not public)."""
    record_model = KINDS[kind][0]
    state = (
        record_model.objects.filter(pk=record_id)
        .values("status", "deleted_at", "version", "bytes_public")
        .first()
    )
    synced = keys_sync(record_keys(kind, record_id))
    if state is None:
        return RecordSync(synced, False)
    public = state["status"] == PUBLISHED and state["deleted_at"] is None
    if public:
        if synced.failed and set(synced.failed) & public_keys_among(synced.failed):
            return RecordSync(synced, bool(state["bytes_public"]))
        # Only at the version read before the keys moved: a write since (an unpublish, a
        # re-publish) made its own change, whose sync decides.
        record_model.objects.filter(
            pk=record_id,
            version=state["version"],
            status=PUBLISHED,
            deleted_at__isnull=True,
            bytes_public=False,
        ).update(bytes_public=True)
        return RecordSync(synced, True)
    if state["bytes_public"]:
        record_model.objects.filter(pk=record_id).exclude(
            status=PUBLISHED, deleted_at__isnull=True
        ).update(bytes_public=False)
    return RecordSync(synced, False)


def bytes_public_on_save(record: Record) -> bool:
    """``bytes_public`` for a record whose status or deletion a write changes: cleared unless
    it is public and there are no copies to make (the embedded mode's media route reads the
    rule itself); the job sets it once the copies are made."""
    return is_public(record) and not settings.MEDIA_PUBLIC_COPIES


# --- The outbox: changes the public may see -------------------------------------------------------


def media_change_note(
    *, kind: str, record_id: int | None, tags: Iterable[str], bytes_done: bool = False
) -> MediaChange:
    """Record a change, in the caller's transaction; ask for the job once it commits.
    ``bytes_done``: the caller moved the bytes itself (new renditions), only the edge is left."""
    change = MediaChange.objects.create(
        kind=kind, record_id=record_id, tags=sorted(set(tags)), bytes_done=bytes_done
    )
    transaction.on_commit(_announce, robust=True)
    return change


def record_change_note(record: Record) -> MediaChange:
    kind = kind_of(record)
    return media_change_note(kind=kind, record_id=record.pk, tags=edge.record_tags(kind, record.pk))


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
        record_model = KINDS[kind][0]
        for start in range(0, len(record_ids), 1000):
            record_model.objects.filter(pk__in=record_ids[start : start + 1000]).update(
                bytes_public=True
            )
    return records_change_note(kind, record_ids)


def _announce() -> None:
    media_changed.send(sender=MediaChange)


@dataclass
class ChangesRun:
    changes: int = 0
    records: int = 0
    keys: KeysSync = field(default_factory=KeysSync)
    # Records whose bytes did not all move: their changes stay, to be run again.
    failed_records: list[str] = field(default_factory=list)
    purge_error: str = ""

    @property
    def ok(self) -> bool:
        return not self.failed_records and not self.purge_error

    def summary(self) -> str:
        text = (
            f"{self.changes} change(s), {self.records} record(s): "
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
    *, limit: int = 1000, older_than: datetime | None = None, pks: Sequence[int] | None = None
) -> ChangesRun:
    """Run the waiting changes (the visibility job): move each changed record's bytes, purge
    the edge once for them all, delete the rows that are done. Storage and purge errors are
    left on the rows (``attempts``, ``error``) and in the result; the rows stay for the next
    run. ``older_than``: only changes made before it (the sweep's, beside a live job); ``pks``:
    only these."""
    run = ChangesRun()
    waiting = MediaChange.objects.order_by("pk")
    if older_than is not None:
        waiting = waiting.filter(created_at__lt=older_than)
    if pks is not None:
        waiting = waiting.filter(pk__in=pks)
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
            edge.edge_purge(tags=early_tags, urls=[])
        except edge.PurgeError as exc:
            logger.warning("edge purge failed (tried again after the bytes): %s", exc)
            early = set()

    # Bytes, once per record whatever the number of its changes.
    urls: dict[tuple[str, int], list[str]] = {}
    errors: dict[tuple[str, int], str] = {}
    for kind, record_id in records:
        synced = record_bytes_sync(kind, record_id).keys
        run.records += 1
        run.keys.add(synced)
        urls[(kind, record_id)] = [public_url(key) for key in synced.changed]
        if synced.failed:
            key, error = next(iter(synced.failed.items()))
            errors[(kind, record_id)] = f"{key}: {error}"
            run.failed_records.append(f"{kind} {record_id}")

    for change in changes:
        record = (change.kind, change.record_id or 0)
        if record in urls:
            change.urls = sorted({*change.urls, *urls[record]})
            change.bytes_done = record not in errors
            change.error = errors.get(record, "")
            if record in errors:
                change.attempts += 1
    MediaChange.objects.bulk_update(changes, ["urls", "bytes_done", "error", "attempts"])

    # Then the edge, after the origin changed: every change's tags (its API responses changed
    # at its commit, whatever happened to its bytes) and the images that moved.
    try:
        edge.edge_purge(
            tags=[tag for c in changes if (c.kind, c.record_id) not in early for tag in c.tags],
            urls=[u for c in changes for u in c.urls],
        )
    except edge.PurgeError as exc:
        run.purge_error = str(exc)[:_ERROR_MAX]
        MediaChange.objects.filter(pk__in=[c.pk for c in changes]).update(
            error=run.purge_error, attempts=F("attempts") + 1
        )
        logger.warning("edge purge failed: %s", run.purge_error)
        return run
    MediaChange.objects.filter(pk__in=[c.pk for c in changes if c.bytes_done]).delete()
    return run


def _withdrawn_now(records: list[tuple[str, int]]) -> set[tuple[str, int]]:
    """Those of ``records`` that are not public now (one query per kind)."""
    found: set[tuple[str, int]] = set()
    for kind, (record_model, _, _) in KINDS.items():
        ids = [record_id for k, record_id in records if k == kind]
        if ids:
            hidden = record_model.objects.filter(pk__in=ids).exclude(
                status=PUBLISHED, deleted_at__isnull=True
            )
            found.update((kind, pk) for pk in hidden.values_list("pk", flat=True))
    return found


# --- The sweep -----------------------------------------------------------------------------

# Records and keys a sweep takes on per run: a backlog (a legacy import) drains over runs.
SWEEP_RECORDS = 500
SWEEP_KEYS = 5000
# Changes younger than this belong to the job their commit asked for.
SWEEP_GRACE = timedelta(seconds=60)


@dataclass
class SweepRun:
    fixed: Counter = field(default_factory=Counter)
    failed: int = 0

    def summary(self) -> str:
        parts = [f"{name} {n}" for name, n in sorted(self.fixed.items()) if n]
        return ", ".join(parts) or "no drift"


def media_sweep(*, full: bool = False, now: datetime | None = None) -> SweepRun:
    """Converge what no job moved: changes their job did not run (Redis lost it, the store or
    the edge failed), records whose ``bytes_public`` disagrees with their status (an
    operator's SQL), keys left pending; with ``full``, also every public object against the
    rule, both ways (an image deleted by SQL). Logs and records the drift it fixed."""
    now = now or timezone.now()
    run = SweepRun()
    sweep = MediaSweep.objects.create(full=full, started_at=now)

    # 1. Records whose flag disagrees with their status: note a change for each, so its bytes
    #    move and the edge forgets it like any other change.
    noted: list[int] = []
    for kind, (record_model, _, _) in KINDS.items():
        unset = record_model.objects.filter(
            status=PUBLISHED, deleted_at__isnull=True, bytes_public=False
        )
        stale = record_model.objects.filter(bytes_public=True).filter(
            ~Q(status=PUBLISHED) | Q(deleted_at__isnull=False)
        )
        waiting = set(
            MediaChange.objects.filter(kind=kind, record_id__isnull=False).values_list(
                "record_id", flat=True
            )
        )
        for name, queryset in (("records_to_publish", unset), ("records_to_withdraw", stale)):
            ids = [
                pk
                for pk in queryset.order_by("pk").values_list("pk", flat=True)[:SWEEP_RECORDS]
                if pk not in waiting
            ]
            if ids:
                with transaction.atomic():
                    noted += records_change_note(kind, ids)
                run.fixed[name] += len(ids)
    if noted:
        _sweep_changes(media_changes_process(pks=noted, limit=len(noted)), run)

    # 2. Changes older than the grace period: their job was lost, or failed (a job may be
    #    running the younger ones).
    while True:
        changes = media_changes_process(older_than=now - SWEEP_GRACE)
        _sweep_changes(changes, run)
        run.fixed["changes_run"] += changes.changes
        if not changes.ok or changes.changes < 1000:
            break

    # 3. Keys left pending by an error or a dead process.
    pending = list(
        PublicObject.objects.exclude(pending=Pending.NONE)
        .filter(changed_at__lt=now - SWEEP_GRACE)
        .order_by("changed_at")
        .values_list("key", flat=True)[:SWEEP_KEYS]
    )
    if pending:
        _sweep_keys(pending, run, "pending")

    if full:
        _sweep_full(run)

    sweep.finished_at = timezone.now()
    sweep.fixed = dict(run.fixed)
    sweep.failed = run.failed
    sweep.save(update_fields=["finished_at", "fixed", "failed"])
    MediaSweep.objects.filter(started_at__lt=now - timedelta(days=7)).delete()
    log = logger.warning if run.fixed or run.failed else logger.info
    log("media sweep%s: %s; failed %s", " (full)" if full else "", run.summary(), run.failed)
    return run


def _sweep_changes(changes: ChangesRun, run: SweepRun) -> None:
    run.fixed["published"] += len(changes.keys.published)
    run.fixed["withdrawn"] += len(changes.keys.withdrawn)
    run.fixed["missing"] += len(changes.keys.missing)
    run.failed += len(changes.failed_records) + bool(changes.purge_error)


def _sweep_keys(keys: list[str], run: SweepRun, what: str) -> None:
    synced = keys_sync(keys)
    run.fixed["published"] += len(synced.published)
    run.fixed["withdrawn"] += len(synced.withdrawn)
    run.fixed["missing"] += len(synced.missing)
    run.failed += len(synced.failed)
    if synced.changed:
        try:
            edge.edge_purge(tags=[], urls=[public_url(key) for key in synced.changed])
        except edge.PurgeError as exc:
            run.failed += 1
            logger.warning(
                "media sweep: purging %s %s key(s) failed: %s", len(synced.changed), what, exc
            )


def _sweep_full(run: SweepRun) -> None:
    """Every public object against the rule: ledger rows the rule no longer wants, and keys of
    public images the ledger does not hold confirmed."""
    after = 0
    while True:
        page = list(
            PublicObject.objects.filter(pk__gt=after)
            .order_by("pk")
            .values_list("pk", "key")[: _BATCH * 5]
        )
        if not page:
            break
        after = page[-1][0]
        keys = [key for _, key in page]
        unwanted = set(keys) - public_keys_among(keys)
        if unwanted:
            _sweep_keys(sorted(unwanted), run, "unwanted")
    for kind in KINDS:
        after = 0
        images = _public_images(kind).order_by("pk")
        while True:
            rows = list(
                images.filter(pk__gt=after).values_list("pk", "storage_key", "renditions")[
                    : _BATCH * 5
                ]
            )
            if not rows:
                break
            after = rows[-1][0]
            shown = {row[1] for row in rows}
            shown.update(r["key"] for row in rows for r in row[2] or [] if r.get("key"))
            held = set(
                PublicObject.objects.filter(key__in=shown, confirmed=True).values_list(
                    "key", flat=True
                )
            )
            if shown - held:
                _sweep_keys(sorted(shown - held), run, "unpublished")
