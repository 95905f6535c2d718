"""The sweep (``media_sweep``, every five minutes; full daily): converges what no job did.
Changes whose job was lost or failed, records whose flag disagrees with their status (an
operator's SQL), keys left pending; the full run checks every ledger row and every public
image against the rule. It logs and records what it fixed, and it always ends: each part
takes a bounded batch, and a change that fails waits out its back-off."""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from catalog import edge
from catalog.models import RECORD_MODELS, MediaChange, MediaSweep, PublicObject
from catalog.visibility.flag import flag_wanted_q
from catalog.visibility.outbox import (
    BATCH,
    RUN_SECONDS,
    ChangesRun,
    changes_lock,
    media_changes_process,
    records_change_note,
)
from catalog.visibility.rule import public_images, public_keys_among
from catalog.visibility.stores import keys_sync

logger = logging.getLogger(__name__)

Pending = PublicObject.Pending

# Records and keys a sweep takes on per run: a backlog (a legacy import) drains over runs.
SWEEP_RECORDS = 500
SWEEP_KEYS = 5000
# Changes younger than this belong to the job their commit asked for.
SWEEP_GRACE = timedelta(seconds=60)
_PAGE = 1000


@dataclass
class SweepRun:
    fixed: Counter = field(default_factory=Counter)
    failed: int = 0

    def summary(self) -> str:
        parts = [f"{name} {n}" for name, n in sorted(self.fixed.items()) if n]
        return ", ".join(parts) or "no drift"


def media_sweep(*, full: bool = False, now: datetime | None = None) -> SweepRun:
    """Converge what no job moved (module docstring); with ``full``, also every public object
    against the rule, both ways (an image deleted by SQL)."""
    now = now or timezone.now()
    run = SweepRun()
    sweep = MediaSweep.objects.create(full=full, started_at=now)

    # 1. Records whose flag disagrees with their status: note a change for each, so its bytes
    #    move and the edge forgets it like any other change.
    noted: list[int] = []
    for kind, record_model in RECORD_MODELS.items():
        # (an embargo's time passed without its job, too)
        unset = record_model.objects.filter(flag_wanted_q(now), bytes_public=False)
        stale = record_model.objects.filter(bytes_public=True).exclude(flag_wanted_q(now))
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

    # 2. Changes older than the grace period: their job was lost, or failed (and waited out
    #    its back-off). Not while a job runs them: it holds the lock.
    with changes_lock() as held:
        if held:
            for start in range(0, len(noted), BATCH):
                chunk = noted[start : start + BATCH]
                _sweep_changes(media_changes_process(pks=chunk, limit=len(chunk)), run)
            deadline = time.monotonic() + RUN_SECONDS
            while time.monotonic() < deadline:
                changes = media_changes_process(older_than=now - SWEEP_GRACE)
                _sweep_changes(changes, run)
                run.fixed["changes_run"] += changes.changes
                if changes.changes < BATCH:
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
        # No record's change names these: each image's own tag drops every cached copy of it.
        try:
            edge.edge_purge(tags=edge.image_tags(synced.changed))
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
            .values_list("pk", "key")[:_PAGE]
        )
        if not page:
            break
        after = page[-1][0]
        keys = [key for _, key in page]
        unwanted = set(keys) - public_keys_among(keys)
        if unwanted:
            _sweep_keys(sorted(unwanted), run, "unwanted")
    for kind in RECORD_MODELS:
        after = 0
        images = public_images(kind).order_by("pk")
        while True:
            rows = list(
                images.filter(pk__gt=after).values_list("pk", "storage_key", "renditions")[:_PAGE]
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
