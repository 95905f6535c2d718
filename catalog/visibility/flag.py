"""The flag: a published record shows only once its bytes are public (``bytes_public``), so no
URL the public API shows fails to answer. :func:`record_bytes_sync` moves a record's bytes and
sets or clears it; ``record_save`` clears it in the very write that takes a record out of the
public."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

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
        fields = (
            "pk",
            "status",
            "deleted_at",
            "version",
            "bytes_public",
            "go_live_at",
            "expires_at",
        )
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
    if flag_wanted(**{name: state[name] for name in _FLAG_FIELDS}):
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
        record_model.objects.filter(pk=record_id).exclude(flag_wanted_q()).update(
            bytes_public=False
        )
    return RecordSync(synced, False)


_FLAG_FIELDS = ("status", "deleted_at", "go_live_at", "expires_at")


def flag_wanted(
    *,
    status: str,
    deleted_at: datetime | None,
    go_live_at: datetime | None,
    expires_at: datetime | None,
    now: datetime | None = None,
) -> bool:
    """Whether a record should have ``bytes_public`` (and so public rows): public now; or, in
    the embedded mode, which has no copies to make and no scheduler, published, live and not
    expired, so a scheduled record's rows are there at its go-live, which the public views
    and the media route hold until then."""
    now = now or timezone.now()
    if status != PUBLISHED or deleted_at is not None:
        return False
    if expires_at is not None and expires_at <= now:
        return False
    return not settings.MEDIA_PUBLIC_COPIES or go_live_at is None or go_live_at <= now


def flag_wanted_q(now: datetime | None = None) -> Q:
    """:func:`flag_wanted` as a filter (the sweep's)."""
    now = now or timezone.now()
    wanted = Q(status=PUBLISHED, deleted_at__isnull=True) & (
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )
    if settings.MEDIA_PUBLIC_COPIES:
        wanted &= Q(go_live_at__isnull=True) | Q(go_live_at__lte=now)
    return wanted


def bytes_public_on_save(record: Record) -> bool:
    """``bytes_public`` for a record whose status, deletion or embargo a write changes: cleared
    unless it is wanted and there are no copies to make (the embedded mode's media route reads
    the rule itself); the job sets it once the copies are made."""
    wanted = flag_wanted(**{name: getattr(record, name) for name in _FLAG_FIELDS})
    return wanted and not settings.MEDIA_PUBLIC_COPIES
