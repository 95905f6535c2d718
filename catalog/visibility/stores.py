"""The stores: the private one holds every object; the public one (STORAGES["public"]: a
bucket, a prefix of one, or a folder) holds a copy of exactly the public objects, and the ledger
``public_objects`` lists what it may hold. :func:`keys_sync` moves keys to the rule's state."""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage, storages
from django.db import connection
from django.db.models import F
from django.utils import timezone

from catalog import edge
from catalog.models import PublicObject
from catalog.storage import sha1_of_rendition_key
from catalog.visibility.rule import public_keys_among

logger = logging.getLogger(__name__)

Pending = PublicObject.Pending

_BATCH = 200  # keys per lock and per ledger statement
_THREADS = 8  # storage calls at once: each is one round trip
ERROR_MAX = 300
_MISSING = "missing in the private store"


def public_storage() -> Storage:
    return storages["public"] if "public" in settings.STORAGES else default_storage


def public_url(key: str) -> str:
    return public_storage().url(key)


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
                failures=F("failures") + 1, error=error[:ERROR_MAX], changed_at=now
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
            return key, f"{type(exc).__name__}: {exc}"[:ERROR_MAX]

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
    return hasattr(storage, "bucket") and hasattr(storage, "location")


def _s3_key(storage: Storage, name: str) -> str:
    """The object key of ``name`` in an S3 storage: its ``location`` prefix, then the name (our
    keys are clean relative paths, so nothing else of django-storages' naming applies)."""
    location = str(storage.location).strip("/")  # type: ignore[attr-defined]  # an S3Storage
    return f"{location}/{name}" if location else name


def _content_type(key: str) -> str:
    return mimetypes.guess_type(key)[0] or "application/octet-stream"


def _copy(key: str, private: Storage, public: Storage) -> str | None:
    if _is_s3(private) and _is_s3(public):
        from botocore.exceptions import ClientError

        # A copy inside S3: the bytes never leave it. Its own headers (the private object's
        # are private).
        try:
            public.bucket.Object(_s3_key(public, key)).copy_from(  # type: ignore[attr-defined]
                CopySource={
                    "Bucket": private.bucket.name,  # type: ignore[attr-defined]
                    "Key": _s3_key(private, key),
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
