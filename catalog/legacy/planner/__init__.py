"""Planning the legacy import: the fate of every legacy row, decided before anything is written.

`build_plan` reads a `LegacySource` (the legacy database, or an in-memory archive in tests) and
a `CatalogState` (what the catalog holds already), and returns an `ImportPlan`. It reads no
database, so the dry run, the real run and the property tests share it. The dry run prints the
plan; the writer applies it, calling the same `decide_images` on the same album so the two
cannot disagree. The rules it applies are stated in docs/legacy-import.md ("Rules").

Memory: records and brands are held (a few hundred bytes each plus their text); images are
streamed one album at a time and only their ids are kept, in sets. What a dry run measured
(bench/legacy_import.py): docs/legacy-import.md, "While it runs".

One module per part: `brands`, `records` (per kind), `images` (per album); `build_plan` runs
them in order.
"""

from __future__ import annotations

from catalog.legacy.audit import plan_checks
from catalog.legacy.plan import CatalogState, ImportPlan
from catalog.legacy.planner.brands import plan_brands
from catalog.legacy.planner.images import choose_cover, decide_images, plan_images
from catalog.legacy.planner.records import plan_records
from catalog.legacy.progress import ProgressFn, Ticker, no_progress
from catalog.legacy.rows import BRANDS, KINDS, TABLE_BY_IMAGE_TABLE, TABLES, LegacySource, tables_of

__all__ = ["build_plan", "choose_cover", "decide_images"]


def build_plan(
    source: LegacySource, catalog: CatalogState, *, progress: ProgressFn = no_progress
) -> ImportPlan:
    plan = ImportPlan()
    counts = source.counts()
    brand_keys, brand_slugs = plan_brands(plan, source.brands(), catalog)
    for kind in KINDS:
        published_table, drafts_table = tables_of(kind)
        plan_records(
            plan,
            kind,
            list(source.records(published_table)),
            list(source.records(drafts_table)),
            brand_keys,
            brand_slugs,
            catalog,
        )
    images_total = sum(n for (table, _), n in counts.items() if table in TABLE_BY_IMAGE_TABLE)
    ticker = Ticker(progress, "plan: images", images_total)
    for table in TABLES:
        plan_images(plan, source, table, catalog, brand_slugs, ticker)
    ticker.finish()
    for (table_name, status), n in counts.items():
        if table_name == BRANDS:
            plan.brand_tally["legacy"] = n
        else:
            plan.tally(table_name, status).legacy = n
    plan.checks = plan_checks(plan)
    return plan
