"""Planning the legacy images, one album at a time: each image's fate (its record's), a street
detail's parent, each album's cover and count, and the dup_of references that still resolve."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.legacy.keys import describe_key
from catalog.legacy.plan import (
    EARLIER,
    INSERTED,
    SKIPPED,
    BrandKey,
    CatalogState,
    Entry,
    ImageDecision,
    ImportPlan,
    RecordPlan,
)
from catalog.legacy.progress import Ticker
from catalog.legacy.rows import (
    ORPHAN,
    STREET,
    LegacyImage,
    LegacyRecord,
    LegacySource,
    LegacyTable,
)


def decide_images(
    table: LegacyTable,
    record: RecordPlan | None,
    images: list[LegacyImage],
    earlier: Mapping[int, int | None],
) -> list[ImageDecision]:
    """The fate of one album's images; the writer calls this again on the same rows."""
    if record is None:
        return [
            ImageDecision(i, EARLIER, ORPHAN)
            if i.id in earlier
            else ImageDecision(i, SKIPPED, ORPHAN, note=f"its record #{i.record_id} does not exist")
            for i in images
        ]
    status = record.row.status
    decisions = []
    for image in images:
        if image.id in earlier:
            decisions.append(ImageDecision(image, EARLIER, status))
        elif record.outcome == EARLIER:
            note = "its record was accounted for by an earlier run"
            decisions.append(ImageDecision(image, SKIPPED, status, note=note))
        else:
            decisions.append(ImageDecision(image, record.outcome, status))
    if table.kind == STREET:
        _decide_parents(decisions)
    return decisions


def _decide_parents(decisions: list[ImageDecision]) -> None:
    # Only an image imported with this album can be a parent, and only a legacy main image:
    # a detail of a detail would break the catalog's two-level grouping.
    inserted = {d.image.id: d.image for d in decisions if d.inserted}
    for d in decisions:
        image = d.image
        if not d.inserted:
            continue
        if not image.is_detail:
            if image.parent_id:
                d.note = f"a main image with parent #{image.parent_id}: the parent is ignored"
            continue
        parent = inserted.get(image.parent_id)
        if not image.parent_id:
            d.note = "a detail without a parent"
        elif image.parent_id == image.id:
            d.note = "a detail that is its own parent"
        elif parent is None:
            d.note = f"parent #{image.parent_id} is not an image of this album"
        elif parent.is_detail:
            d.note = f"parent #{image.parent_id} is itself a detail"
        elif parent.deleted and not image.deleted:
            d.note = f"parent #{image.parent_id} is deleted"
        else:
            d.parent = image.parent_id


def choose_cover(record: LegacyRecord, decisions: list[ImageDecision]) -> tuple[int | None, str]:
    """The album's cover (a legacy image id) and how it was found."""
    live = [d for d in decisions if d.inserted and not d.image.deleted]
    by_key = [d.image for d in live if record.cover and d.image.url == record.cover]
    if by_key:
        return min(by_key, key=lambda i: (i.sort_order, i.id)).id, "by key"
    mains = [d.image for d in live if not d.parent]
    if mains:
        return min(mains, key=lambda i: (i.sort_order, i.id)).id, "first main image"
    return None, "none"


def _invalid_image(image: LegacyImage) -> list[str]:
    reasons = [
        f"{name} {value} is negative"
        for name, value in (
            ("width", image.width),
            ("height", image.height),
            ("look_index", image.look_index),
        )
        if value < 0
    ]
    return reasons


def plan_images(
    plan: ImportPlan,
    source: LegacySource,
    table: LegacyTable,
    catalog: CatalogState,
    brand_slugs: Mapping[BrandKey, str],
    ticker: Ticker,
) -> None:
    image_table = table.image_table
    earlier = catalog.earlier_in(image_table)
    inserted: set[int] = set()
    not_inserted: set[int] = set()
    dup_refs: list[tuple[int, int, str]] = []
    albums: set[int] = set()
    for record_id, images in source.image_groups(table):
        record = plan.records.get((table.name, record_id))
        decisions = decide_images(table, record, images, earlier)
        for d in decisions:
            image = d.image
            plan.tally(image_table, d.status).add(d.outcome)
            if not d.inserted:
                not_inserted.add(image.id)
                if d.outcome == SKIPPED and d.note:
                    plan.skipped.append(Entry(image_table, image.id, d.status, "image", d.note))
                elif d.outcome == SKIPPED:
                    plan.images_of_skipped_records += 1
                continue
            inserted.add(image.id)
            record_status = record.row.status if record else ORPHAN
            plan.expected[(image_table, d.outcome, record_status, image.deleted)] += 1
            if reasons := _invalid_image(image):
                subject = f"image of {table.name} #{record_id}"
                plan.invalid.append(
                    Entry(image_table, image.id, d.status, subject, "; ".join(reasons))
                )
            if image.dup_of:
                dup_refs.append((image.id, image.dup_of, d.status))
            if d.parent:
                plan.remaps["parents"] += 1
            elif d.note:
                subject = f"image of {table.name} #{record_id}"
                listed = plan.downgraded if image.is_detail else plan.parent_ignored
                listed.append(Entry(image_table, image.id, d.status, subject, d.note))
        _self_check_parents(plan, image_table, decisions)
        if record is not None and record.outcome in INSERTED:
            albums.add(record_id)
            _cover_and_count(plan, record, decisions, brand_slugs)
        ticker.advance(len(images))
    for rp in plan.inserts[table.kind]:
        if rp.row.table is table and rp.row.id not in albums:
            _cover_and_count(plan, rp, [], brand_slugs)
    plan.cleared_dups[image_table] = _resolve_dups(
        plan, image_table, dup_refs, inserted, not_inserted, earlier
    )


def _cover_and_count(
    plan: ImportPlan,
    rp: RecordPlan,
    decisions: list[ImageDecision],
    brand_slugs: Mapping[BrandKey, str],
) -> None:
    rp.image_count = sum(1 for d in decisions if d.inserted and not d.image.deleted)
    rp.cover, how = choose_cover(rp.row, decisions)
    plan.covers[how] += 1
    if rp.row.cover and how != "by key":
        subject = describe_key(rp.row.kind, rp.key, brand_slugs)
        reason = f"cover key {rp.row.cover!r} is not a live image of the album: cover = {how}"
        plan.cover_fallbacks.append(
            Entry(rp.row.table.name, rp.row.id, rp.row.status, subject, reason)
        )


def _self_check_parents(plan: ImportPlan, image_table: str, decisions: list[ImageDecision]) -> None:
    by_id = {d.image.id: d for d in decisions}
    for d in decisions:
        if not d.parent:
            continue
        parent = by_id.get(d.parent)
        if parent is None or not parent.inserted or parent.parent:
            plan.problems.append(f"{image_table} #{d.image.id}: parent #{d.parent} unusable")
        elif parent.image.deleted and not d.image.deleted:
            plan.problems.append(f"{image_table} #{d.image.id}: live detail of a deleted parent")


def _resolve_dups(
    plan: ImportPlan,
    image_table: str,
    dup_refs: list[tuple[int, int, str]],
    inserted: set[int],
    not_inserted: set[int],
    earlier: Mapping[int, int | None],
) -> set[int]:
    cleared: set[int] = set()
    for image_id, dup_of, status in dup_refs:
        if dup_of != image_id and (dup_of in inserted or earlier.get(dup_of) is not None):
            plan.remaps["dup_of"] += 1
            continue
        if dup_of == image_id:
            reason = "dup_of points at the image itself"
        elif dup_of in not_inserted or dup_of in earlier:
            reason = f"dup_of #{dup_of} is an image that is not imported"
        else:
            reason = f"dup_of #{dup_of} does not exist"
        cleared.add(image_id)
        plan.dup_cleared.append(Entry(image_table, image_id, status, "image", reason))
    return cleared
