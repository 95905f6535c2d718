"""The flag: a published record shows only once its bytes are public (``bytes_public``), so no
URL the public API shows fails to answer. :func:`record_bytes_sync` moves a record's bytes and
sets or clears it; ``record_save`` clears it in the very write that takes a record out of the
public."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from catalog.models import RECORD_MODELS, Record
from catalog.visibility.rule import PUBLISHED, public_keys_among, records_keys
from catalog.visibility.stores import KeysSync, keys_sync


@dataclass
class RecordSync:
    keys: KeysSync
    # bytes_public after the sync: the public views show the record.
    visible: bool


def record_bytes_sync(kind: str, record_id: int) -> RecordSync:
    """Move the bytes of one record's images to the rule's state, then set ``bytes_public``
    if it is public and nothing it shows failed to move (or clear it, if it is not public)."""
    return records_bytes_sync([(kind, record_id)])[0][(kind, record_id)]


def records_bytes_sync(
    records: Sequence[tuple[str, int]],
) -> tuple[dict[tuple[str, int], RecordSync], KeysSync]:
    """:func:`record_bytes_sync` for many records at once, their keys moved together (a key
    two of them share moves once); each record's sync, and the keys'."""
    states: dict[tuple[str, int], dict] = {}
    keys: dict[tuple[str, int], set[str]] = {}
    for kind, record_model in RECORD_MODELS.items():
        ids = [pk for k, pk in records if k == kind]
        if not ids:
            continue
        fields = ("pk", "status", "deleted_at", "version", "bytes_public")
        for state in record_model.objects.filter(pk__in=ids).values(*fields):
            states[(kind, state["pk"])] = state
        for pk, own in records_keys(kind, ids).items():
            keys[(kind, pk)] = own
    synced = keys_sync(set().union(*keys.values()) if keys else set())
    return {
        record: _flag(record, states.get(record), keys.get(record, set()), synced)
        for record in records
    }, synced


def _flag(
    record: tuple[str, int], state: dict | None, keys: set[str], all_synced: KeysSync
) -> RecordSync:
    synced = KeysSync(
        published=[k for k in all_synced.published if k in keys],
        withdrawn=[k for k in all_synced.withdrawn if k in keys],
        failed={k: e for k, e in all_synced.failed.items() if k in keys},
        missing=[k for k in all_synced.missing if k in keys],
    )
    if state is None:
        return RecordSync(synced, False)
    kind, record_id = record
    record_model = RECORD_MODELS[kind]
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
