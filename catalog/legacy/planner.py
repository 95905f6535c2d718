"""Planning the legacy import: the fate of every legacy row, decided before anything is written.

`build_plan` reads a `LegacySource` (the legacy database, or an in-memory archive in tests) and
a `CatalogState` (what the catalog holds already), and returns an `ImportPlan`. It reads no
database, so the dry run, the real run and the property tests share it. The dry run prints the
plan; the writer applies it, calling the same `decide_images` on the same album so the two
cannot disagree. The rules it applies are stated in docs/legacy-import.md ("Rules").

Memory: records and brands are held (a few hundred bytes each plus their text); images are
streamed one album at a time and only their ids are kept, in sets. What a dry run measured
(bench/legacy_import.py): docs/legacy-import.md, "While it runs".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from catalog.keys import normalize_brand_slug
from catalog.legacy.audit import plan_checks
from catalog.legacy.keys import MAX_LENGTH, describe_key, normalise_record, runway_key, street_key
from catalog.legacy.plan import (
    CREATED,
    EARLIER,
    IMPORTED,
    INSERTED,
    MATCHED,
    SKIPPED,
    SUPERSEDED,
    BrandKey,
    BrandPlan,
    CatalogRef,
    CatalogState,
    Entry,
    ImageDecision,
    ImportPlan,
    LegacyRef,
    RecordPlan,
    Ref,
)
from catalog.legacy.progress import ProgressFn, Ticker, no_progress
from catalog.legacy.rows import (
    APPROVED,
    BRANDS,
    DRAFT_STATUSES,
    KINDS,
    ORPHAN,
    PENDING,
    PUBLISHED,
    RUNWAY,
    STREET,
    TABLE_BY_IMAGE_TABLE,
    TABLES,
    LegacyBrand,
    LegacyImage,
    LegacyRecord,
    LegacySource,
    LegacyTable,
    tables_of,
)

# Limits of the catalog's columns that the legacy columns do not share (PositiveSmallInteger,
# the month check, PositiveInteger). A row outside them cannot be stored as it is; the run stops
# and lists it rather than guessing a value.
SMALLINT_MAX = 32767


def build_plan(
    source: LegacySource, catalog: CatalogState, *, progress: ProgressFn = no_progress
) -> ImportPlan:
    plan = ImportPlan()
    counts = source.counts()
    brand_keys, brand_slugs = _plan_brands(plan, source.brands(), catalog)
    for kind in KINDS:
        published_table, drafts_table = tables_of(kind)
        _plan_records(
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
        _plan_images(plan, source, table, catalog, brand_slugs, ticker)
    ticker.finish()
    for (table_name, status), n in counts.items():
        if table_name == BRANDS:
            plan.brand_tally["legacy"] = n
        else:
            plan.tally(table_name, status).legacy = n
    plan.checks = plan_checks(plan)
    return plan


def _plan_brands(
    plan: ImportPlan, brands: Iterable[LegacyBrand], catalog: CatalogState
) -> tuple[dict[int, BrandKey], dict[BrandKey, str]]:
    earlier = catalog.earlier_in(BRANDS)
    # Slugs compare in the form ingest looks brands up in (lower case), on both sides. Among
    # catalog brands of one folded slug (the catalog's unique index is case-sensitive), the one
    # stored in that form is the brand ingest finds; otherwise the oldest.
    in_catalog: dict[str, int] = {}
    for slug, pk in sorted(
        catalog.brands_by_slug.items(),
        key=lambda item: (normalize_brand_slug(item[0]) != item[0], item[1]),
    ):
        in_catalog.setdefault(normalize_brand_slug(slug), pk)
    rows = list(brands)
    # Folded slug -> its legacy spellings and their brands. One spelling twice is one brand
    # (a live row and its deleted copy); two spellings the old archive told apart would be
    # merged into one catalog brand, which only the operator can decide.
    spellings: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        spellings[normalize_brand_slug(row.slug)][row.slug].append(row.id)
    keys: dict[int, BrandKey] = {}
    slugs: dict[BrandKey, str] = {}
    created: set[str] = set()
    # Live brands first, so a deleted duplicate slug never names the brand this run creates.
    key: BrandKey
    for row in sorted(rows, key=lambda b: (b.deleted, b.id)):
        given, slug = row.slug, normalize_brand_slug(row.slug)
        remembered = earlier.get(row.id)
        if row.id in earlier and remembered is not None:
            outcome, key = EARLIER, remembered
        elif row.id in earlier:
            outcome, key = EARLIER, in_catalog.get(slug, ("new", slug))
        elif slug in in_catalog:
            outcome, key = MATCHED, in_catalog[slug]
        elif slug in created:
            outcome, key = MATCHED, ("new", slug)
        else:
            outcome, key = CREATED, ("new", slug)
            created.add(slug)
        if outcome != EARLIER and (reasons := _brand_conflicts(given, slug, spellings[slug])):
            # Planned as usual so the tallies add up; the run stops on it.
            plan.brand_conflicts.append(Entry(BRANDS, row.id, "", f"brand {given!r}", reasons))
        if outcome == CREATED and slug != given:
            plan.normalised["slug"] += 1
        plan.brands.append(BrandPlan(replace(row, slug=slug), outcome, key))
        plan.brand_tally[outcome] += 1
        keys[row.id] = key
        slugs.setdefault(key, slug)
    plan.brand_conflicts.sort(key=lambda e: e.id)
    return keys, slugs


def _brand_conflicts(given: str, slug: str, spellings: Mapping[str, list[int]]) -> str:
    reasons = []
    if len(spellings) > 1:
        shown = ", ".join(
            f"#{brand_id} {spelling!r}"
            for brand_id, spelling in sorted(
                (brand_id, spelling) for spelling, ids in spellings.items() for brand_id in ids
            )
        )
        reasons.append(
            f"the slugs of brands {shown} are one slug once lower-cased ({slug!r}): rename"
            " all but one in the legacy copy, or merge them there"
        )
    if len(slug) > MAX_LENGTH["slug"]:
        reasons.append(f"slug is longer than {MAX_LENGTH['slug']} characters once lower-cased")
    return "; ".join(reasons)


def _invalid(row: LegacyRecord, brand_keys: Mapping[int, BrandKey]) -> list[str]:
    reasons = []
    if row.table.drafts and row.status not in DRAFT_STATUSES:
        reasons.append(f"unknown draft status {row.status!r}")
    if not 0 <= row.year <= SMALLINT_MAX:
        reasons.append(f"year {row.year} is outside 0..{SMALLINT_MAX}")
    if row.kind == STREET and not 0 <= row.month <= 12:
        reasons.append(f"month {row.month} is outside 0..12")
    if row.kind == RUNWAY and row.brand_id not in brand_keys:
        reasons.append(f"brand #{row.brand_id} is not in the legacy brands table")
    return reasons


def _plan_records(
    plan: ImportPlan,
    kind: str,
    published: list[LegacyRecord],
    drafts: list[LegacyRecord],
    brand_keys: Mapping[int, BrandKey],
    brand_slugs: Mapping[BrandKey, str],
    catalog: CatalogState,
) -> None:
    # Keyed by RecordPlan.key, typed optional: a row without a key never gets past decide().
    live_keys: dict[tuple | None, Ref] = dict(catalog.live_keys[kind])
    # Entity key -> the first legacy published row of it imported soft-deleted: the show an
    # approved draft was promoted to, since taken down by an editor.
    deleted_published: dict[tuple | None, Ref] = {}
    source_keys: dict[tuple[str, str], Ref] = dict(catalog.source_keys[kind])
    # (table, legacy id) -> (fields put in normal form, values that cannot be stored).
    normal_forms: dict[tuple[str, int], tuple[tuple[str, ...], list[str]]] = {}

    def normalised(row: LegacyRecord) -> LegacyRecord:
        row_normal, changed, problems = normalise_record(row)
        normal_forms[(row.table.name, row.id)] = (changed, problems)
        return row_normal

    # From here on every row holds its normal form: keys compare it, and the writer stores it.
    published = [normalised(row) for row in published]
    drafts = [normalised(row) for row in drafts]

    def key_of(row: LegacyRecord) -> tuple | None:
        if kind == STREET:
            return street_key(row)
        brand = brand_keys.get(row.brand_id)
        return None if brand is None else runway_key(brand, row)

    def entry(rp: RecordPlan, reason: str) -> Entry:
        subject = describe_key(kind, rp.key, brand_slugs)
        return Entry(rp.row.table.name, rp.row.id, rp.row.status, subject, reason)

    def decide(row: LegacyRecord) -> tuple[RecordPlan, bool]:
        """The row's plan, and whether the rules still have to place it."""
        changed, problems = normal_forms[(row.table.name, row.id)]
        rp = RecordPlan(row, SKIPPED, key_of(row), brand_keys.get(row.brand_id), normalised=changed)
        plan.records[(row.table.name, row.id)] = rp
        if row.id in catalog.earlier_in(row.table.name):
            rp.outcome = EARLIER
            return rp, False
        if reasons := problems + _invalid(row, brand_keys):
            # Counted as skipped so the tallies still add up; the run stops on it anyway.
            plan.invalid.append(entry(rp, "; ".join(reasons)))
            return rp, False
        return rp, True

    order = sorted(
        (r for r in published + drafts if r.status != APPROVED),
        key=lambda r: (r.deleted, r.table.drafts, r.created_at if r.table.drafts else 0, r.id),
    )
    for row in order:
        rp, undecided = decide(row)
        if not undecided:
            plan.tally(row.table.name, row.status).add(rp.outcome)
            continue
        source_key = (row.source, row.source_url) if row.source_url else None
        key_holder = None if row.deleted else live_keys.get(rp.key)
        if source_key is not None and source_key in source_keys:
            rp.outcome, rp.holder = SKIPPED, source_keys[source_key]
            plan.skipped.append(entry(rp, f"source key {source_key} is held by {rp.holder}"))
        elif (
            row.status == PUBLISHED
            and isinstance(key_holder, CatalogRef)
            and key_holder.status != PUBLISHED
        ):
            # Superseding the row would take a published show off the site behind a crawl
            # nobody approved; which copy is the show is the operator's call. (A legacy holder
            # is always an earlier published row: published rows are placed before drafts.)
            # Counted as skipped so the tallies still add up; the run stops on it.
            plan.held_by_unpublished.append(entry(rp, _held_by_unpublished(key_holder)))
        elif key_holder is not None:
            rp.outcome, rp.holder, rp.deleted = SUPERSEDED, key_holder, True
            plan.superseded.append(entry(rp, f"entity key is held by {rp.holder}"))
        else:
            rp.outcome, rp.deleted = IMPORTED, row.deleted
            if not row.deleted:
                live_keys[rp.key] = rp.ref
            elif row.status == PUBLISHED:
                deleted_published.setdefault(rp.key, rp.ref)
        if rp.outcome in INSERTED:
            if source_key is not None:
                source_keys[source_key] = rp.ref
            plan.inserts[kind].append(rp)
            plan.normalised.update(rp.normalised)
            status = row.status
            plan.expected[(row.table.name, rp.outcome, status, rp.deleted)] += 1
        plan.tally(row.table.name, row.status).add(rp.outcome)

    # An approved draft's published counterpart is the record that holds its entity key once
    # every other row is placed, if that record is published: a legacy published row this run
    # imports, or a published catalog record (crawled, or imported by an earlier run). Else a
    # legacy published row of its key that this run imports soft-deleted (the show, taken
    # down since). Never a record standing for a skipped row: that may be another show.
    for row in sorted(
        (r for r in drafts if r.status == APPROVED), key=lambda r: (r.created_at, r.id)
    ):
        rp, undecided = decide(row)
        rp.approved = True
        if undecided:
            holder = live_keys.get(rp.key)
            if holder is None or _status_of(plan, holder) != PUBLISHED:
                holder = deleted_published.get(rp.key, holder)
            if holder is None:
                plan.unmatched_approved.append(entry(rp, "no published record with its entity key"))
            elif (status := _status_of(plan, holder)) != PUBLISHED:
                reason = f"its entity key is held by {holder}"
                if isinstance(holder, LegacyRef):
                    reason += f" ({status})"
                plan.unmatched_approved.append(entry(rp, f"{reason}, which is not published"))
            else:
                rp.holder = holder
                plan.approved_matched.append(entry(rp, f"promoted as {holder}"))
        plan.tally(row.table.name, row.status).add(rp.outcome)


def _status_of(plan: ImportPlan, ref: Ref) -> str:
    if isinstance(ref, CatalogRef):
        return ref.status
    return plan.records[(ref.table, ref.id)].row.status


def _held_by_unpublished(holder: CatalogRef) -> str:
    # Approving works from pending only (review.services); deleting is not offered in the
    # admin, hence docs/legacy-import.md's one-liner.
    todo = (
        "approve that record if it is the better copy, else reject it and soft-delete it"
        if holder.status == PENDING
        else "soft-delete that record"
    )
    return f"entity key is held by {holder}, which is not published: {todo}, then run again"


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


def _plan_images(
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
