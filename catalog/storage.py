"""Where image bytes live: content-addressed keys for originals and renditions, the record of
the objects ingest stored (`stored_objects`), and the collector that deletes the unreferenced
ones without racing a job that stores the same bytes again.

The key scheme, why only recorded objects are ever collected, and the protocol between
:func:`image_store` and :func:`stored_objects_collect`: docs/architecture.md, "Storage".
"""

from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime

from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from catalog.imaging import WIDTHS as RENDITION_WIDTHS
from catalog.models import RunwayImage, StoredObject, StreetSnapImage

IMAGE_PREFIX = "images"
RENDITION_PREFIX = "renditions"
# The private store's: only editors read it, through signed URLs that expire (the public copies
# get their own, catalog.visibility).
RENDITION_CACHE_CONTROL = "private, max-age=3600"

_EXTENSION_BY_MIME = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/webp": "webp",
    "image/gif": "gif",
}

_COLLECT_BATCH = 500


def image_key(*, sha1: str, mime_type: str) -> str:
    """The storage key of an image with these bytes (``sha1`` of the bytes, lowercase hex)."""
    if len(sha1) != 40 or any(c not in "0123456789abcdef" for c in sha1):
        raise ValueError(f"not a lowercase hex sha1: {sha1!r}")
    extension = _EXTENSION_BY_MIME.get(mime_type)
    if extension is None:
        raise ValueError(f"no storage extension for {mime_type!r}")
    return f"{IMAGE_PREFIX}/{sha1[:2]}/{sha1}.{extension}"


def rendition_key(*, sha1: str, width: int, format: str = "webp") -> str:
    """The storage key of the ``width`` rendition of the original whose bytes have ``sha1``.

    From the sha1, the width and the format only, so the same original always gives the same
    keys and a URL is known without asking the storage.
    """
    if len(sha1) != 40 or any(c not in "0123456789abcdef" for c in sha1):
        raise ValueError(f"not a lowercase hex sha1: {sha1!r}")
    return f"{RENDITION_PREFIX}/{sha1[:2]}/{sha1}/{width}.{format}"


def sha1_of_image_key(key: str) -> str | None:
    """The sha1 an :func:`image_key` names (None for a key of another scheme)."""
    prefix, _, rest = key.partition("/")
    name = rest.rpartition("/")[2].partition(".")[0]
    if prefix != IMAGE_PREFIX or len(name) != 40 or any(c not in "0123456789abcdef" for c in name):
        return None
    return name


def sha1_of_rendition_key(key: str) -> str | None:
    """The sha1 of the original a :func:`rendition_key` was made from (None for another key)."""
    parts = key.split("/")
    if len(parts) != 4 or parts[0] != RENDITION_PREFIX:
        return None
    sha1 = parts[2]
    if len(sha1) != 40 or any(c not in "0123456789abcdef" for c in sha1) or parts[1] != sha1[:2]:
        return None
    return sha1


def rendition_put(*, key: str, data: bytes, storage: Storage | None = None) -> None:
    """Put one rendition, overwriting what is there (the same original gives the same bytes,
    unless the rendering changed: the backfill's --force).

    Not recorded in stored_objects: a rendition belongs to its original, and gc_media removes
    the renditions of each original it deletes (:func:`stored_objects_collect`). On S3 the
    object gets ``Content-Type: image/webp`` and a private Cache-Control.
    """
    storage = storage or default_storage
    if hasattr(storage, "bucket") and hasattr(storage, "_normalize_name"):
        # django-storages' S3: put with this object's own headers, whatever the storage's
        # object_parameters say (its save() has no per-object parameters). _normalize_name
        # adds the storage's `location` prefix, as its save() does.
        storage.bucket.Object(storage._normalize_name(key)).put(
            Body=data, ContentType="image/webp", CacheControl=RENDITION_CACHE_CONTROL
        )
        return
    if storage.exists(key):
        storage.delete(key)
    _put(storage, key, data)


def image_store(
    *,
    data: bytes,
    sha1: str,
    mime_type: str,
    storage: Storage | None = None,
    db_lock: AbstractContextManager | None = None,
) -> str:
    """Store ``data`` under its content-addressed key, record it as ingest's, return the key.

    The caller computed ``sha1`` from ``data``; it is trusted (the worker hashes the bytes it
    downloaded). Storage errors propagate: the pipeline treats them as transient and retries.

    Meant to run outside any transaction: the row must be committed before the object is put
    (the protocol with the collector: docs/architecture.md, "Storage"). ``db_lock`` is held
    around this function's database statements; threads that share one database connection
    (the pipeline's download threads share their job's) pass the same lock, since a connection
    runs one statement at a time.

    An object that was already in storage the first time ingest met its key is not ours: it is
    recorded as ``preexisting`` and never written to (same key, same bytes) nor collected.
    """
    storage = storage or default_storage
    db_lock = db_lock or nullcontext()
    key = image_key(sha1=sha1, mime_type=mime_type)
    now = timezone.now()
    with db_lock:
        # The common case, a key ingest stored before: renew it. If the collector holds the
        # row, this waits until it has deleted object and row, and then renews nothing.
        renewed = StoredObject.objects.filter(key=key, preexisting=False).update(last_stored_at=now)
        foreign = not renewed and StoredObject.objects.filter(key=key, preexisting=True).exists()
    if foreign:
        return key
    if not renewed:
        # First time for this key (or the collector just removed it). An object already there
        # was put by someone else - the legacy archive, most likely.
        preexisting = storage.exists(key)
        with db_lock:
            # A job racing us for the same new key may have inserted the row meanwhile: then
            # only the date is renewed and its preexisting flag (its own check) stays.
            StoredObject.objects.bulk_create(
                [StoredObject(key=key, last_stored_at=now, preexisting=preexisting)],
                update_conflicts=True,
                unique_fields=["key"],
                update_fields=["last_stored_at"],
            )
        if preexisting:
            return key
    _put(storage, key, data)
    return key


def _put(storage: Storage, key: str, data: bytes) -> None:
    saved = storage.save(key, ContentFile(data))  # S3 with file_overwrite: overwritten in place
    if saved != key:
        # A storage that never overwrites (the local file system) chose another name because
        # the key exists - with identical bytes, by construction. Keep the original.
        storage.delete(saved)


def stored_objects_hold(*, keys: Iterable[str]) -> list[str]:
    """Lock the rows of ``keys`` until the caller's transaction ends; return the keys with no row.

    Called in the transaction that writes image rows pointing at ``keys``: while it holds them,
    the collector cannot delete these objects, and a key without a row means the collector
    already did (the caller must not commit). `FOR KEY SHARE` conflicts only with the
    collector's `FOR UPDATE` and delete, not with other jobs renewing the same keys.
    """
    wanted = sorted(set(keys))
    if not wanted:
        return []
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT key FROM stored_objects WHERE key = ANY(%s) ORDER BY key FOR KEY SHARE",
                [wanted],
            )
            found = {row[0] for row in cursor.fetchall()}
    else:
        # SQLite: the transaction already holds the database's one write lock (IMMEDIATE).
        found = set(StoredObject.objects.filter(key__in=wanted).values_list("key", flat=True))
    return [key for key in wanted if key not in found]


@dataclass
class CollectResult:
    tracked: int = 0  # objects ingest stored (rows not preexisting)
    too_young: int = 0  # stored again within the grace period
    referenced: int = 0  # old, but an image row points at them (soft-deleted rows count)
    busy: int = 0  # renewed or held by a job while we looked
    preexisting: int = 0  # were in storage before ingest met their key: never collected
    deleted: list[str] = field(default_factory=list)


def stored_objects_collect(
    *, older_than: datetime, dry_run: bool = False, storage: Storage | None = None
) -> CollectResult:
    """Delete the objects ingest stored that no image row references and that were last stored
    before ``older_than``; only those (docs/architecture.md, "Storage"). Objects never
    recorded - the legacy archive's - are not even listed.

    Rows of soft-deleted images and records count as references (a soft delete can be undone).
    Each deletion is one short transaction: lock the row (skipping rows a job holds), check age
    and references again under the lock, delete the object, then the row.
    """
    storage = storage or default_storage
    result = CollectResult()
    ours = StoredObject.objects.filter(preexisting=False)
    result.tracked = ours.count()
    result.preexisting = StoredObject.objects.filter(preexisting=True).count()
    result.too_young = ours.filter(last_stored_at__gte=older_than).count()
    old = ours.filter(last_stored_at__lt=older_than)
    unreferenced = old.exclude(_referenced_by(RunwayImage)).exclude(_referenced_by(StreetSnapImage))
    result.referenced = old.count() - unreferenced.count()

    after = 0
    while True:
        batch = list(
            unreferenced.filter(pk__gt=after)
            .order_by("pk")
            .values_list("pk", "key")[:_COLLECT_BATCH]
        )
        if not batch:
            return result
        after = batch[-1][0]
        for pk, key in batch:
            outcome = _collect_one(pk, key, older_than=older_than, dry_run=dry_run, storage=storage)
            if outcome == "deleted":
                result.deleted.append(key)
            elif outcome == "referenced":
                result.referenced += 1
            else:
                result.busy += 1


def _collect_one(
    pk: int, key: str, *, older_than: datetime, dry_run: bool, storage: Storage
) -> str:
    with transaction.atomic():
        row = (
            StoredObject.objects.select_for_update(skip_locked=True)
            .filter(pk=pk, preexisting=False, last_stored_at__lt=older_than)
            .first()
        )
        # Renewed by a job since we listed it, held by one right now, or already collected.
        if row is None:
            return "busy"
        # Checked again under the lock: a job may have committed image rows since we listed it
        # (one that has not committed yet holds the row, or renewed it).
        if _is_referenced(key):
            return "referenced"
        if not dry_run:
            # The renditions, then the object, then the row: if a delete fails, the row stays
            # and the next run deletes what is left. Renditions are never orphaned.
            sha1 = sha1_of_image_key(key)
            # Renditions are named by content, not by key: another image (a legacy key, the
            # same bytes under another extension) may still show them.
            if sha1 is not None and not _sha1_in_use(sha1):
                for width in RENDITION_WIDTHS:
                    storage.delete(rendition_key(sha1=sha1, width=width))
            storage.delete(key)
            row.delete()
    return "deleted"


def _referenced_by(image_model: type[RunwayImage] | type[StreetSnapImage]) -> Exists:
    return Exists(image_model.objects.filter(storage_key=OuterRef("key")))


def _sha1_in_use(sha1: str) -> bool:
    return (
        RunwayImage.objects.filter(sha1=sha1).exists()
        or StreetSnapImage.objects.filter(sha1=sha1).exists()
    )


def _is_referenced(key: str) -> bool:
    return (
        RunwayImage.objects.filter(storage_key=key).exists()
        or StreetSnapImage.objects.filter(storage_key=key).exists()
    )


def stored_objects_renew(*, keys: Iterable[str]) -> set[str]:
    """Renew ``keys`` as :func:`image_store` does, without putting anything; return the keys
    that are still in storage (their row exists).

    For a job that reuses objects an earlier attempt of it stored: renewed, they are too young
    for the collector, and a key it deleted meanwhile is missing from the answer (to be stored
    again). The final transaction's :func:`stored_objects_hold` checks once more.
    """
    wanted = set(keys)
    if not wanted:
        return set()
    StoredObject.objects.filter(key__in=wanted, preexisting=False).update(
        last_stored_at=timezone.now()
    )
    return set(StoredObject.objects.filter(key__in=wanted).values_list("key", flat=True))
