"""Writing a legacy import plan into the catalog (inside the caller's transaction).

Records go in first, then each legacy image table is streamed again from the same snapshot,
one album at a time, and inserted in batches: an album's main images, then its details (whose
parent is a main image of the same batch), so the "detail has a parent" check constraint holds
on every row. A dup_of whose target is not inserted yet is set afterwards; covers are set once
every image has its id. The legacy id map is written alongside. How rows are inserted (COPY
or bulk_create): catalog.legacy.inserters.

Memory: besides the plan, the legacy -> new id maps of records and images, one dict entry each.
Times and memory per legacy row, measured by bench/legacy_import.py: docs/legacy-import.md,
"While it runs".
"""

from __future__ import annotations

from datetime import datetime
from itertools import batched
from typing import cast

from catalog.keys import fold_title
from catalog.legacy.inserters import Inserter, Row, default_inserter
from catalog.legacy.plan import (
    CREATED,
    EARLIER,
    INSERTED,
    MATCHED,
    BrandKey,
    CatalogRef,
    CatalogState,
    ImageDecision,
    ImportPlan,
    RecordPlan,
    Ref,
)
from catalog.legacy.planner import decide_images
from catalog.legacy.progress import ProgressFn, Ticker, no_progress
from catalog.legacy.rows import (
    BRANDS,
    KINDS,
    PUBLISHED,
    REJECTED,
    RUNWAY,
    TABLE_BY_IMAGE_TABLE,
    TABLES,
    LegacySource,
    LegacyTable,
)
from catalog.models import (
    IMAGE_MODELS,
    LEGACY_PHASH_ALGORITHM,
    RECORD_MODELS,
    Brand,
    LegacyIdMap,
)

RECORD_BATCH = 1_000
IMAGE_BATCH = 5_000
ID_MAP_BATCH = 10_000


# --- The writer ---------------------------------------------------------------------------


def apply_plan(
    plan: ImportPlan,
    source: LegacySource,
    catalog: CatalogState,
    *,
    now: datetime,
    progress: ProgressFn = no_progress,
    inserter: Inserter | None = None,
) -> list[str]:
    """Write `plan`. Returns the writer's own inconsistencies (empty unless there is a bug)."""
    writer = _Writer(plan, source, catalog, now, progress, inserter or default_inserter())
    writer.write_brands()
    for kind in KINDS:
        writer.write_records(kind)
    writer.map_records()
    for table in TABLES:
        writer.write_images(table)
    writer.fix_dups()
    writer.set_covers()
    writer.flush_id_map(force=True)
    return writer.problems


class _Writer:
    def __init__(
        self,
        plan: ImportPlan,
        source: LegacySource,
        catalog: CatalogState,
        now: datetime,
        progress: ProgressFn,
        inserter: Inserter,
    ):
        self.plan, self.source, self.catalog, self.now = plan, source, catalog, now
        self.progress, self.inserter = progress, inserter
        self.brand_ids: dict[BrandKey, int] = {}
        self.record_ids: dict[tuple[str, int], int] = {}
        self.image_ids: dict[str, dict[int, int]] = {}
        # (image table, new image id, legacy dup_of) whose target was not inserted yet.
        self.deferred_dups: list[tuple[str, int, int]] = []
        self.id_map: list[Row] = []
        self.problems: list[str] = []

    # --- brands and records -------------------------------------------------------------

    def write_brands(self) -> None:
        created = [bp for bp in self.plan.brands if bp.outcome == CREATED]
        rows: list[Row] = [
            {
                "name": bp.row.name,
                "slug": bp.row.slug,
                "is_featured": bp.row.is_featured,
                "created_at": bp.row.created_at,
                "updated_at": bp.row.updated_at,
            }
            for bp in created
        ]
        ids = self.inserter.insert(Brand, rows)
        for bp, pk in zip(created, ids, strict=True):
            self.brand_ids[bp.key] = pk
        for bp in self.plan.brands:
            if bp.outcome in (CREATED, MATCHED):
                self._map(BRANDS, bp.row.id, self._brand_id(bp.key), bp.outcome)

    def _brand_id(self, key: BrandKey | None) -> int:
        if isinstance(key, int):
            return key
        return self.brand_ids[cast(tuple[str, str], key)]  # a brand this run created

    def write_records(self, kind: str) -> None:
        inserts = self.plan.inserts[kind]
        ticker = Ticker(self.progress, f"write: {kind} records", len(inserts), every=RECORD_BATCH)
        for chunk in batched(inserts, RECORD_BATCH):
            ids = self.inserter.insert(RECORD_MODELS[kind], [self._record(rp) for rp in chunk])
            for rp, pk in zip(chunk, ids, strict=True):
                self.record_ids[(rp.row.table.name, rp.row.id)] = pk
            ticker.advance(len(chunk))
        ticker.finish()

    def _record(self, rp: RecordPlan) -> Row:
        # The planner's row: key and source values are already in their normal form.
        row = rp.row
        record: Row = {
            "title": row.title or "",
            "description": row.description,
            "year": row.year,
            "image_count": rp.image_count,
            "status": row.status,
            "reviewer": row.reviewer,
            "reject_reason": row.reject_reason,
            # The old system kept no review date: a rejection's last update is the best one.
            "reviewed_at": row.updated_at if row.status == REJECTED else None,
            # A legacy published row was created when its draft was promoted.
            "published_at": row.created_at if row.status == PUBLISHED else None,
            "source": row.source,
            "source_url": row.source_url,
            "deleted_at": self.now if rp.deleted else None,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
        if row.kind == RUNWAY:
            record |= {
                "brand_id": self._brand_id(rp.brand),
                "season_code": row.season_code,
                "season": row.season,
                "collection_type": row.collection_type,
            }
        else:
            # bulk inserts skip StreetSnap.save(), which keeps title_key in step.
            record |= {"city": row.city, "month": row.month, "title_key": fold_title(row.title)}
        return record

    def map_records(self) -> None:
        for (table, legacy_id), rp in self.plan.records.items():
            if rp.outcome == EARLIER:
                continue
            new_id: int | None
            if rp.outcome in INSERTED:
                new_id = self.record_ids[(table, legacy_id)]
            else:
                new_id = self._stand_in(rp.holder)
            self._map(table, legacy_id, new_id, rp.outcome, job_id=rp.row.job_id or None)

    def _stand_in(self, ref: Ref | None) -> int | None:
        """The catalog record that stands for a skipped row, if any: the holder of its source
        key, or an approved draft's published counterpart. The planner only names records
        that exist already or that this run inserts (never another skipped row: following
        such a chain once mapped an approved draft to a different show)."""
        if ref is None:
            return None
        if isinstance(ref, CatalogRef):
            return ref.id
        new_id = self.record_ids.get((ref.table, ref.id))
        if new_id is None:
            self.problems.append(f"{ref} stands for a skipped row but was not inserted")
        return new_id

    # --- images ---------------------------------------------------------------------------

    def write_images(self, table: LegacyTable) -> None:
        image_table = table.image_table
        self.image_ids[image_table] = {}
        earlier = self.catalog.earlier_in(image_table)
        total = sum(t.legacy for (name, _), t in self.plan.tallies.items() if name == image_table)
        ticker = Ticker(self.progress, f"write: {image_table}", total)
        batch: list[tuple[ImageDecision, int | None]] = []
        for record_id, images in self.source.image_groups(table):
            record = self.plan.records.get((table.name, record_id))
            record_new_id = self.record_ids.get((table.name, record_id))
            for decision in decide_images(table, record, images, earlier):
                if decision.outcome != EARLIER:
                    batch.append((decision, record_new_id))
            ticker.advance(len(images))
            # Flush only between albums: a detail's parent is then always in its batch.
            if len(batch) >= IMAGE_BATCH:
                self._flush_images(table, batch)
                batch = []
        self._flush_images(table, batch)
        ticker.finish()

    def _flush_images(
        self, table: LegacyTable, batch: list[tuple[ImageDecision, int | None]]
    ) -> None:
        ids = self.image_ids[table.image_table]
        mains = [(d, r) for d, r in batch if d.inserted and not d.parent]
        details = [(d, r) for d, r in batch if d.inserted and d.parent]
        for group in (mains, details):
            rows = [self._image(table, d, record_id) for d, record_id in group]
            new_ids = self.inserter.insert(IMAGE_MODELS[table.kind], rows)
            for (d, _), row, pk in zip(group, rows, new_ids, strict=True):
                ids[d.image.id] = pk
                if d.image.dup_of and row["dup_of_id"] is None and not self._cleared(table, d):
                    self.deferred_dups.append((table.image_table, pk, d.image.dup_of))
        for d, _ in batch:
            self._map(table.image_table, d.image.id, ids.get(d.image.id), d.outcome)

    def _cleared(self, table: LegacyTable, d: ImageDecision) -> bool:
        return d.image.id in self.plan.cleared_dups[table.image_table]

    def _image(self, table: LegacyTable, d: ImageDecision, record_id: int | None) -> Row:
        image = d.image
        if record_id is None:
            self.problems.append(f"{table.image_table} #{image.id}: its record was not inserted")
        dup_of = None
        if image.dup_of and not self._cleared(table, d):
            dup_of = self._new_image_id(table.image_table, image.dup_of)
        row: Row = {
            "storage_key": image.url,
            "width": image.width,
            "height": image.height,
            "sort_order": image.sort_order,
            # 0 meant "never computed" in the old archive; the catalog says so with NULL.
            "phash": image.phash or None,
            "phash_algorithm": LEGACY_PHASH_ALGORITHM if image.phash else "",
            "is_duplicate": image.is_duplicate,
            "dup_of_id": dup_of,
            "deleted_at": self.now if image.deleted else None,
            "created_at": image.created_at,
        }
        if table.kind == RUNWAY:
            return row | {"runway_id": record_id, "look_index": image.look_index}
        parent = self.image_ids[table.image_table].get(d.parent) if d.parent else None
        if d.parent and parent is None:
            self.problems.append(f"{table.image_table} #{image.id}: parent #{d.parent} not mapped")
        return row | {
            "street_snap_id": record_id,
            "is_detail": parent is not None,
            "parent_id": parent,
        }

    def _new_image_id(self, image_table: str, legacy_id: int) -> int | None:
        new_id = self.image_ids[image_table].get(legacy_id)
        if new_id is None:
            new_id = self.catalog.earlier_in(image_table).get(legacy_id)
        return new_id

    def fix_dups(self) -> None:
        by_kind: dict[str, list[tuple[int, int]]] = {}
        for image_table, pk, legacy_dup in self.deferred_dups:
            target = self._new_image_id(image_table, legacy_dup)
            if target is None:
                self.problems.append(f"{image_table}: dup_of #{legacy_dup} was never inserted")
                continue
            by_kind.setdefault(TABLE_BY_IMAGE_TABLE[image_table].kind, []).append((pk, target))
        for kind, pairs in by_kind.items():
            self.inserter.set_column(IMAGE_MODELS[kind], "dup_of_id", pairs)
        self.progress("write: dup_of set after insert", len(self.deferred_dups), 0)

    def set_covers(self) -> None:
        for kind in KINDS:
            pairs = []
            for rp in self.plan.inserts[kind]:
                if rp.cover is None:
                    continue
                cover = self.image_ids[rp.row.table.image_table].get(rp.cover)
                if cover is None:
                    self.problems.append(f"{rp.row.table.name} #{rp.row.id}: cover not inserted")
                    continue
                pairs.append((self.record_ids[(rp.row.table.name, rp.row.id)], cover))
            self.inserter.set_column(RECORD_MODELS[kind], "cover_id", pairs)
            self.progress(f"write: {kind} covers", len(pairs), 0)

    # --- the legacy id map ----------------------------------------------------------------

    def _map(
        self,
        table: str,
        legacy_id: int,
        new_id: int | None,
        outcome: str,
        job_id: int | None = None,
    ) -> None:
        self.id_map.append(
            {
                "legacy_table": table,
                "legacy_id": legacy_id,
                "new_id": new_id,
                "outcome": outcome,
                "legacy_job_id": job_id,
                "imported_at": self.now,
            }
        )
        if len(self.id_map) >= ID_MAP_BATCH:
            self.flush_id_map()

    def flush_id_map(self, force: bool = False) -> None:
        if self.id_map and (force or len(self.id_map) >= ID_MAP_BATCH):
            self.inserter.insert(LegacyIdMap, self.id_map, ids=False)
            self.id_map = []
