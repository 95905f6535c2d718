"""The legacy import as one service: plan, then (unless a dry run) write and check, atomically."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import DatabaseError, transaction
from django.db.models import Max
from django.utils import timezone

from catalog.legacy.audit import DATABASE_CHECKS, database_checks
from catalog.legacy.plan import Check, ImportPlan
from catalog.legacy.planner import build_plan
from catalog.legacy.progress import ProgressFn, no_progress
from catalog.legacy.rows import LegacySource
from catalog.legacy.state import lock_catalog, read_catalog_state
from catalog.legacy.writer import apply_plan
from catalog.models import RECORD_MODELS, LegacyIdMap, Record
from catalog.visibility import records_published_in_bulk


@dataclass
class MigrationResult:
    plan: ImportPlan | None
    dry_run: bool
    checks: list[Check] = field(default_factory=list)
    # The database checks this run did not make: they read the written rows, so a dry run (or
    # a run the plan checks stopped) cannot.
    not_run: list[str] = field(default_factory=list)
    written: bool = False
    # The database refused the write (a constraint the plan did not foresee, a lost connection).
    error: str = ""

    @property
    def nothing_to_do(self) -> bool:
        return self.plan is not None and self.plan.new_rows == 0

    @property
    def ok(self) -> bool:
        return not self.error and all(check.ok for check in self.checks)

    @property
    def failures(self) -> list[str]:
        reasons = [f"{c.name}: {c.detail}" if c.detail else c.name for c in self.checks if not c.ok]
        return [self.error, *reasons] if self.error else reasons


class _RollBack(Exception):
    """Raised inside the import's transaction to undo it; carries the result to report."""

    def __init__(self, result: MigrationResult):
        self.result = result


def legacy_archive_migrate(
    *, source: LegacySource, dry_run: bool, progress: ProgressFn = no_progress
) -> MigrationResult:
    """Plan the import of `source` and, unless `dry_run`, write it in one transaction.

    The real run commits only if the plan is clean and every database check passes; otherwise
    nothing is written and the result says why. A rerun plans nothing new: every legacy row is
    in the legacy id map.
    """
    if dry_run:
        # Not the write in a transaction rolled back: that would lock the record tables
        # against ingest and take as long as the import, several times the plan alone
        # (docs/legacy-import.md, "While it runs"), for checks of the writer.
        plan = build_plan(source, read_catalog_state(), progress=progress)
        return MigrationResult(
            plan, dry_run=True, checks=plan.checks, not_run=list(DATABASE_CHECKS)
        )

    result = MigrationResult(None, dry_run=False)
    try:
        with transaction.atomic():
            # Locked before the catalog is read, so the plan is made against the keys that
            # will still be there when it is written.
            lock_catalog()
            floor = LegacyIdMap.objects.aggregate(floor=Max("id"))["floor"] or 0
            catalog = read_catalog_state()
            result.plan = plan = build_plan(source, catalog, progress=progress)
            result.checks = list(plan.checks)
            if plan.blocked:
                result.not_run = list(DATABASE_CHECKS)
                raise _RollBack(result)
            if result.nothing_to_do:
                raise _RollBack(result)
            before = {
                kind: model.objects.aggregate(top=Max("id"))["top"] or 0
                for kind, model in RECORD_MODELS.items()
            }
            problems = apply_plan(plan, source, catalog, now=timezone.now(), progress=progress)
            result.checks += database_checks(plan, floor, problems)
            progress("checks run", len(result.checks), 0)
            if not result.ok:
                raise _RollBack(result)
            # The published records it wrote (the catalog is locked: every new id is ours)
            # show once their bytes are public, which the visibility job sees to after commit.
            for kind, model in RECORD_MODELS.items():
                public = model.objects.filter(
                    pk__gt=before[kind], status=Record.Status.PUBLISHED, deleted_at__isnull=True
                )
                records_published_in_bulk(kind, list(public.values_list("pk", flat=True)))
            result.written = True
    except _RollBack as rollback:
        return rollback.result
    except DatabaseError as error:
        # Raised by a write, or by the commit itself (foreign keys are checked at commit).
        result.written = False
        result.error = f"the catalog database refused the import, nothing written: {error}"
    return result
