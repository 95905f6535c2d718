"""The report an operator reads: tables per kind and status, capped lists, the verdict. Pure."""

from catalog.legacy.plan import CatalogState, Check
from catalog.legacy.planner import build_plan
from catalog.legacy.report import NOTHING_TO_IMPORT, render_report, report_dict, tally_rows
from catalog.legacy.rows import ORPHAN, PUBLISHED, STREETS
from catalog.legacy.services import MigrationResult
from tests.catalog.legacy.archive import archive, image, record


def plan_with_orphans(n: int):
    return build_plan(
        archive(record(STREETS, 1), images=[(STREETS, image(i, 404)) for i in range(1, n + 1)]),
        CatalogState(),
    )


def run(plan, *, dry_run=True, written=False, checks=None, not_run=()) -> MigrationResult:
    """A run of the import that made ``plan`` (its own checks unless ``checks``)."""
    checks = plan.checks if checks is None else checks
    return MigrationResult(
        plan=plan, dry_run=dry_run, checks=checks, written=written, not_run=list(not_run)
    )


def test_lists_are_capped_on_screen_and_complete_in_the_report_file():
    plan = plan_with_orphans(5)

    text = render_report(run(plan), list_limit=2)
    data = report_dict(run(plan))

    assert "skipped: 5" in text
    assert "  ... and 3 more (--report-file writes them all)" in text
    assert len(data["lists"]["skipped"]) == 5
    assert {"kind": "street", "status": ORPHAN, "legacy_rows": 5}.items() <= next(
        row for row in data["images"] if row["status"] == ORPHAN and row["kind"] == "street"
    ).items()


def test_every_kind_and_status_has_a_line_even_when_empty():
    plan = plan_with_orphans(0)

    rows = [(kind, status) for kind, status, _ in tally_rows(plan, images=False)]

    assert rows == [
        (kind, status)
        for kind in ("runway", "street")
        for status in (PUBLISHED, "pending", "rejected", "approved")
    ]


def test_the_verdict_line():
    plan = plan_with_orphans(1)
    failed = [*plan.checks, Check("something", ok=False, detail="broken")]

    assert render_report(run(plan)).endswith(
        "dry run: nothing written; the plan checks passed. Run again without --dry-run to import."
    )
    assert "done: " in render_report(run(plan, dry_run=False, written=True))
    text = render_report(run(plan, dry_run=False, checks=failed))
    assert "FAILED  something: broken" in text
    assert text.endswith("FAILED: 1 check(s) failed; nothing written.")
    empty = build_plan(archive(), CatalogState(earlier={"brands": {1: 1, 2: 2}}))
    assert NOTHING_TO_IMPORT in render_report(run(empty, dry_run=False))


def test_the_checks_a_run_did_not_make_are_named():
    plan = plan_with_orphans(1)

    dry = render_report(run(plan, not_run=["a database check"]))
    data = report_dict(run(plan, not_run=["a database check"]))

    assert "checks on the plan (a dry run makes these):" in dry
    assert "not run by a dry run (they read the written rows" in dry
    assert "  -       a database check" in dry
    assert data["checks_not_run"] == ["a database check"]
