"""The import report: fixed-width tables per kind and status, the lists, the checks (pure)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from catalog.legacy.plan import CREATED, EARLIER, MATCHED, Check, Entry, ImportPlan, Tally
from catalog.legacy.rows import KINDS, ORPHAN, STATUSES, TABLE_BY_IMAGE_TABLE, TABLE_BY_NAME, TABLES

NOTHING_TO_IMPORT = "nothing to import: every legacy row is already accounted for"


def iter_entries(plan: ImportPlan) -> Iterator[tuple[str, list[Entry]]]:
    """The report's lists, in the order an operator reads them."""
    yield "unmatched approved drafts (the run stops)", plan.unmatched_approved
    yield "rows that do not fit the catalog (the run stops)", plan.invalid
    yield "brand slugs that do not fit the catalog (the run stops)", plan.brand_conflicts
    yield (
        "published rows held back by an unpublished catalog record (the run stops)",
        plan.held_by_unpublished,
    )
    yield "superseded (imported soft-deleted)", plan.superseded
    yield "skipped", plan.skipped
    yield "approved drafts matched to their published counterpart", plan.approved_matched
    yield "details imported as main images", plan.downgraded
    yield "main images with a parent id (kept as main images, the id ignored)", plan.parent_ignored
    yield "dup_of cleared", plan.dup_cleared
    yield "covers not found by key", plan.cover_fallbacks


def skipped_breakdown(plan: ImportPlan, *, images: bool) -> list[tuple[str, int]]:
    """The report's skipped column, record or image tables, as the lists that account for it.

    Every skipped row is in exactly one of them, so the numbers add up to the column; images
    skipped with their record are counted, not listed (their record is).
    """

    def listed(entries: list[Entry]) -> int:
        tables = TABLE_BY_IMAGE_TABLE if images else TABLE_BY_NAME
        return sum(1 for e in entries if e.table in tables)

    if images:
        return [
            ("listed as skipped", listed(plan.skipped)),
            ("images of skipped records", plan.images_of_skipped_records),
        ]
    return [
        ("listed as skipped", listed(plan.skipped)),
        ("approved drafts matched", len(plan.approved_matched)),
        ("unmatched approved drafts", len(plan.unmatched_approved)),
        ("rows that do not fit", listed(plan.invalid)),
        ("published rows held back", len(plan.held_by_unpublished)),
    ]


def tally_rows(plan: ImportPlan, images: bool) -> list[tuple[str, str, Tally]]:
    """(kind, status, tally) per kind and legacy status, orphans merged per kind."""
    rows = []
    for kind in KINDS:
        tables = {t.image_table if images else t.name for t in TABLES if t.kind == kind}
        statuses = [*STATUSES, ORPHAN] if images else list(STATUSES)
        # Statuses the legacy data has that the schema does not know (the run stops on them).
        statuses += sorted(
            {s for (t, s) in plan.tallies if t in tables and s not in statuses},
        )
        for status in statuses:
            merged = Tally()
            for (table, s), tally in plan.tallies.items():
                if table in tables and s == status:
                    for name in ("legacy", "earlier", "imported", "superseded", "skipped"):
                        setattr(merged, name, getattr(merged, name) + getattr(tally, name))
            rows.append((kind, status, merged))
    return rows


def _table(title: str, rows: list[tuple[str, str, Tally]], imported_label: str) -> list[str]:
    headers = ["legacy rows", "earlier runs", imported_label, "superseded", "skipped"]
    widths = [max(len(h), 11) for h in headers]
    lines = [
        f"{title:<22}" + "".join(f"{h:>{w + 2}}" for h, w in zip(headers, widths, strict=True))
    ]
    total = Tally()

    def line(label: str, t: Tally, mark: str = "") -> str:
        values = [t.legacy, t.earlier, t.imported, t.superseded, t.skipped]
        cells = "".join(f"{v:>{w + 2},}" for v, w in zip(values, widths, strict=True))
        return f"{label:<22}{cells}{mark}"

    for kind, status, t in rows:
        for name in ("legacy", "earlier", "imported", "superseded", "skipped"):
            setattr(total, name, getattr(total, name) + getattr(t, name))
        mark = "" if t.balanced else "   <- does not add up"
        lines.append(line(f"  {kind:<8}{status}", t, mark))
    lines.append(line("  total", total))
    return lines


def _entries(title: str, entries: list[Entry], limit: int) -> list[str]:
    lines = [f"{title}: {len(entries):,}"]
    for e in entries[:limit]:
        status = f" ({e.status})" if e.status else ""
        lines.append(f"  {e.table} #{e.id}{status}  {e.subject}: {e.reason}")
    if len(entries) > limit:
        lines.append(f"  ... and {len(entries) - limit:,} more (--report-file writes them all)")
    return lines


def _skipped_line(what: str, plan: ImportPlan, *, images: bool) -> str:
    """The skipped column's total as the sum of the lists below (the terms that are not 0)."""
    parts = skipped_breakdown(plan, images=images)
    total = sum(n for _, n in parts)
    terms = " + ".join(f"{n:,} {name}" for name, n in parts if n) or "0"
    return f"  skipped {what}: {total:,} = {terms}"


class Outcome(Protocol):
    """What a run of the import made: its plan (None: it failed before one), the checks it
    made and those it did not, whether it wrote, and the database's refusal (catalog.legacy.
    services.MigrationResult is one)."""

    plan: ImportPlan | None
    dry_run: bool
    checks: list[Check]
    not_run: list[str]
    written: bool
    error: str


def render_report(outcome: Outcome, *, list_limit: int = 50) -> str:
    plan, checks, dry_run, written = outcome.plan, outcome.checks, outcome.dry_run, outcome.written
    error, not_run = outcome.error, outcome.not_run
    lines: list[str] = []
    if plan is None:
        return f"FAILED before a plan was made: {error}"
    title = "Legacy import plan (dry run: nothing is written)" if dry_run else "Legacy import"
    lines += [title, "=" * len(title), ""]
    label = "imported" if written else "to import"
    b = plan.brand_tally
    lines.append(
        f"brands: {b['legacy']:,} legacy rows = {b[EARLIER]:,} earlier runs"
        f" + {b[CREATED]:,} {'created' if written else 'to create'}"
        f" + {b[MATCHED]:,} matched by slug"
    )
    lines.append("")
    lines += _table("records", tally_rows(plan, images=False), label)
    lines.append("  (approved drafts are never inserted: they count as skipped, each standing")
    lines.append("   for its published counterpart)")
    lines.append(_skipped_line("records", plan, images=False))
    lines.append("")
    lines += _table("images", tally_rows(plan, images=True), label)
    lines.append(_skipped_line("images", plan, images=True))
    lines.append("")
    lines.append(
        f"image references: {plan.remaps['parents']:,} parents remapped,"
        f" {len(plan.downgraded):,} details imported as main images,"
        f" {len(plan.parent_ignored):,} parent ids of main images ignored,"
        f" {plan.remaps['dup_of']:,} dup_of remapped, {len(plan.dup_cleared):,} dup_of cleared"
    )
    covers = plan.covers
    lines.append(
        f"covers: {covers['by key']:,} by key, {covers['first main image']:,} first main image,"
        f" {covers['none']:,} none"
    )
    normalised = ", ".join(f"{name} {n:,}" for name, n in sorted(plan.normalised.items()))
    lines.append(
        "values stored in their normal form (as ingest looks keys up): " + (normalised or "none")
    )
    for list_title, entries in iter_entries(plan):
        lines.append("")
        lines += _entries(list_title, entries, list_limit)
    if not not_run:
        lines += ["", "checks:"]
    else:
        lines += ["", f"checks on the plan{' (a dry run makes these)' if dry_run else ''}:"]
    for check in checks:
        detail = f": {check.detail}" if check.detail and not check.ok else ""
        lines.append(f"  {'ok    ' if check.ok else 'FAILED'}  {check.name}{detail}")
    if not_run:
        lines.append(
            "not run by a dry run (they read the written rows: the real run makes them inside"
            " its transaction, before it commits):"
            if dry_run
            else "not run (they read the written rows, and the run stopped before writing):"
        )
        lines += [f"  -       {name}" for name in not_run]
    lines.append("")
    failed = [c for c in checks if not c.ok]
    if error:
        lines.append(f"FAILED: {error}")
    elif failed:
        lines.append(f"FAILED: {len(failed)} check(s) failed; nothing written.")
    elif plan.new_rows == 0:
        lines.append(NOTHING_TO_IMPORT + ".")
    elif dry_run:
        lines.append(
            "dry run: nothing written; the plan checks passed."
            " Run again without --dry-run to import."
        )
    elif written:
        lines.append(f"done: {plan.new_rows:,} legacy rows accounted for, committed.")
    return "\n".join(lines)


def report_dict(outcome: Outcome) -> dict[str, object]:
    """The whole report as JSON-ready data, with the lists in full (for --report-file)."""
    plan = outcome.plan
    data: dict[str, object] = {
        "dry_run": outcome.dry_run,
        "written": outcome.written,
        "error": outcome.error,
        "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in outcome.checks],
        "checks_not_run": list(outcome.not_run),
    }
    if plan is None:
        return data

    def tallies(images: bool) -> list[dict[str, object]]:
        return [
            {
                "kind": kind,
                "status": status,
                "legacy_rows": t.legacy,
                "earlier_runs": t.earlier,
                "imported": t.imported,
                "superseded": t.superseded,
                "skipped": t.skipped,
            }
            for kind, status, t in tally_rows(plan, images)
        ]

    data.update(
        {
            "nothing_to_import": plan.new_rows == 0,
            "brands": dict(plan.brand_tally),
            "records": tallies(images=False),
            "images": tallies(images=True),
            "remaps": dict(plan.remaps),
            "covers": dict(plan.covers),
            "normalised": dict(plan.normalised),
            "lists": {
                "unmatched_approved": [e.as_dict() for e in plan.unmatched_approved],
                "invalid": [e.as_dict() for e in plan.invalid],
                "brand_conflicts": [e.as_dict() for e in plan.brand_conflicts],
                "held_by_unpublished": [e.as_dict() for e in plan.held_by_unpublished],
                "superseded": [e.as_dict() for e in plan.superseded],
                "skipped": [e.as_dict() for e in plan.skipped],
                "downgraded": [e.as_dict() for e in plan.downgraded],
                "parent_ignored": [e.as_dict() for e in plan.parent_ignored],
                "dup_of_cleared": [e.as_dict() for e in plan.dup_cleared],
                "cover_fallbacks": [e.as_dict() for e in plan.cover_fallbacks],
                "approved_matched": [e.as_dict() for e in plan.approved_matched],
            },
        }
    )
    return data
