"""The flag: a published record shows only once its bytes are public (``bytes_public``), so no
URL the public API shows fails to answer. :func:`record_bytes_sync` moves a record's bytes and
sets or clears it; ``record_save`` clears it in the very write that takes a record out of the
public."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from catalog.models import RECORD_MODELS, Record
from catalog.visibility.rule import PUBLISHED, public_keys_among, record_keys
from catalog.visibility.stores import KeysSync, keys_sync


@dataclass
class RecordSync:
    keys: KeysSync
    # bytes_public after the sync: the public views show the record.
    visible: bool


def record_bytes_sync(kind: str, record_id: int) -> RecordSync:
    """Move the bytes of one record's images to the rule's state, then set ``bytes_public``
    if it is public and nothing it shows failed to move (or clear it, if it is not public)."""
    record_model = RECORD_MODELS[kind]
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
    return record.is_public() and not settings.MEDIA_PUBLIC_COPIES
