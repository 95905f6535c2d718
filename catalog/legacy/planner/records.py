"""Planning a kind's legacy records: each imported, superseded by a holder of its key, or
skipped, published rows before drafts; an approved draft matched to its published counterpart."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.legacy.keys import describe_key, normalise_record, runway_key, street_key
from catalog.legacy.plan import (
    EARLIER,
    IMPORTED,
    INSERTED,
    SKIPPED,
    SUPERSEDED,
    BrandKey,
    CatalogRef,
    CatalogState,
    Entry,
    ImportPlan,
    LegacyRef,
    RecordPlan,
    Ref,
)
from catalog.legacy.rows import (
    APPROVED,
    DRAFT_STATUSES,
    PENDING,
    PUBLISHED,
    RUNWAY,
    STREET,
    LegacyRecord,
)

# Limits of the catalog's columns that the legacy columns do not share (PositiveSmallInteger,
# the month check, PositiveInteger). A row outside them cannot be stored as it is; the run stops
# and lists it rather than guessing a value.
SMALLINT_MAX = 32767


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


def plan_records(
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
