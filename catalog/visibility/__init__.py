"""Bytes are public exactly while published, and the edge forgets what stops being public.

One module per part (docs/architecture.md, "Visibility reaches the bytes and the edge"):

- ``rule``: which objects a published, live record shows (:func:`public_keys_among`);
- ``stores``: the private and public stores and the ledger; :func:`keys_sync` moves keys;
- ``flag``: ``bytes_public``, set once a record's bytes are public (:func:`record_bytes_sync`);
- ``outbox``: the changes the public may see, noted in their write's transaction, and the job
  that runs them (:func:`media_changes_run`);
- ``sweep``: what no job did (:func:`media_sweep`).

Callers import from here.
"""

from catalog.visibility.flag import (
    RecordSync,
    bytes_public_on_save,
    record_bytes_sync,
    records_bytes_sync,
)
from catalog.visibility.outbox import (
    BATCH,
    ChangesRun,
    change_backoff,
    changes_lock,
    embargo_reached,
    media_change_note,
    media_changed,
    media_changes_process,
    media_changes_run,
    record_change_note,
    records_change_note,
    records_published_in_bulk,
)
from catalog.visibility.rule import (
    ImageResponse,
    image_response,
    key_is_public,
    public_images,
    public_keys_among,
    record_keys,
    records_keys,
    records_showing,
)
from catalog.visibility.stores import (
    KeysSync,
    keys_sync,
    public_cache_control,
    public_storage,
    public_url,
)
from catalog.visibility.sweep import SWEEP_GRACE, SWEEP_RECORDS, SweepRun, media_sweep

__all__ = [
    "BATCH",
    "SWEEP_GRACE",
    "SWEEP_RECORDS",
    "ChangesRun",
    "ImageResponse",
    "KeysSync",
    "RecordSync",
    "SweepRun",
    "bytes_public_on_save",
    "change_backoff",
    "image_response",
    "changes_lock",
    "embargo_reached",
    "key_is_public",
    "keys_sync",
    "media_change_note",
    "media_changed",
    "media_changes_process",
    "media_changes_run",
    "media_sweep",
    "public_cache_control",
    "public_images",
    "public_keys_among",
    "public_storage",
    "public_url",
    "record_bytes_sync",
    "record_change_note",
    "record_keys",
    "records_bytes_sync",
    "records_change_note",
    "records_keys",
    "records_published_in_bulk",
    "records_showing",
]
