"""Planning the legacy import: the fate of every legacy row, decided before anything is written.

Pure: no Django, no database. `build_plan` reads a `LegacySource` (the legacy database, or an
in-memory archive in tests) and a `CatalogState` (what the catalog holds already), and returns a
`Plan`: per record its outcome and key holders, per album its cover and image count, the image
decisions that are not the default (downgraded details, cleared dup_of), tallies per table and
status, and the lists an operator reads. The dry run prints it; the writer applies it, calling
the same `decide_images` on the same album so the two cannot disagree.

Rules (docs/legacy-import.md, "Rules"):
- brands by slug, compared lower-cased (catalog.keys.normalize_brand_slug, the form ingest looks
  brands up in) and stored so when new; legacy slugs that differ only in case stop the run;
- key and source values are put in the catalog's normal form first (catalog.keys, the same
  functions ingest and the editors' form use): season_code "fw24" -> "FW24", collection_type
  "Ready to Wear" -> "ready-to-wear", city whitespace folded, source "Vogue" -> "vogue",
  source_url stripped. Every comparison below is between normal forms, and the normal form is
  what is stored, so a later crawl finds the row by the key it sends. A runway whose
  season_code or collection_type has no normal form (empty, "FW/24") stops the run, listed
  with the rows that do not fit the catalog: a key no crawl and no editor can ever produce
  would hide the show from dedup, and guessing one could merge two shows;
- order: brands, then legacy published rows by id, then drafts by (created_at, id); live rows
  before soft-deleted ones. Soft-deleted rows never hold an entity key, so this only decides who
  keeps a shared source key: a live row never loses it to a deleted copy of itself;
- a row whose non-empty (source, source_url) is already taken (by an earlier row of this run, or
  by any catalog row, deleted ones included) is skipped with its images;
- a live row whose entity key a live row already holds is imported soft-deleted, keeping its
  status and its images, and listed as superseded; except a legacy published row held by a
  catalog record that is not published (a crawl pending review, or rejected): superseding it
  would take the show off the public site, so the run stops and lists it;
- approved drafts are never inserted: each needs a published counterpart by entity key, the
  published record that holds the key after this run (a legacy published row imported now,
  or a published catalog record), else a legacy published row of the key imported
  soft-deleted; or the run stops;
- images follow their record; a detail keeps its parent only if the parent is a main image of the
  same album that is imported with it (and live, if the detail is live): otherwise it becomes a
  main image; a dup_of that points at no imported image clears;
- cover: the album's live image with the cover key, else its first live main image, else none.

Memory: records and brands are held (a few hundred bytes each plus their text); images are
streamed one album at a time and only their ids are kept, in sets. A whole dry run measured
about 120-150 bytes per legacy row (bench/legacy_import.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from catalog.keys import (
    KeyValueError,
    fold_title,
    normalize_brand_slug,
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
    normalize_source,
    normalize_source_url,
)
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
    TABLE_BY_NAME,
    TABLES,
    LegacyBrand,
    LegacyImage,
    LegacyRecord,
    LegacyTable,
    tables_of,
)

IMPORTED = "imported"
SUPERSEDED = "superseded"
SKIPPED = "skipped"
EARLIER = "earlier"  # accounted for by an earlier run (it is in the legacy id map)
INSERTED = frozenset({IMPORTED, SUPERSEDED})
# Brands are matched, never superseded or skipped.
CREATED = "created"
MATCHED = "matched"

# Limits of the catalog's columns that the legacy columns do not share (PositiveSmallInteger,
# the month check, PositiveInteger). A row outside them cannot be stored as it is; the run stops
# and lists it rather than guessing a value.
SMALLINT_MAX = 32767

PROGRESS_EVERY = 10_000

# The catalog's column lengths (catalog/models.py; a test keeps them in step) for the values the
# import normalises: a normal form can be longer than the legacy value (NFKD turns a ligature
# into two letters), and a value too long for its column cannot be stored.
MAX_LENGTH = {
    "slug": 128,
    "season_code": 16,
    "collection_type": 32,
    "city": 64,
    "source": 32,
    "source_url": 1024,
}


# --- What the planner reads ---------------------------------------------------------------


class LegacySource(Protocol):
    """The legacy archive, read in one consistent snapshot."""

    def counts(self) -> dict[tuple[str, str], int]:
        """Rows per (table, status), counted independently of the streams below.

        Record tables by their status (published for published tables), image tables by their
        record's status (`ORPHAN` without one), and (BRANDS, "") for brands.
        """
        ...

    def brands(self) -> Iterable[LegacyBrand]: ...

    def records(self, table: LegacyTable) -> Iterable[LegacyRecord]: ...

    def image_groups(self, table: LegacyTable) -> Iterable[tuple[int, list[LegacyImage]]]:
        """The images of `table`'s image table, one album at a time, by record id then id."""
        ...


@dataclass(frozen=True, slots=True)
class CatalogRef:
    """A record already in the catalog (before this run)."""

    kind: str
    id: int
    status: str = ""
    deleted: bool = False

    def __str__(self) -> str:
        # The status tells the operator what the holder is: a published show, or a crawl
        # still waiting for review (or rejected) that would otherwise look like the show.
        state = ", ".join(filter(None, [self.status, "deleted" if self.deleted else ""]))
        return f"existing {self.kind} #{self.id}" + (f" ({state})" if state else "")


@dataclass(frozen=True, slots=True)
class LegacyRef:
    """A legacy record (imported in this run or an earlier one)."""

    table: str
    id: int

    def __str__(self) -> str:
        return f"legacy {self.table} #{self.id}"


Ref = CatalogRef | LegacyRef
# A brand's identity in entity keys: the catalog brand's id, or ("new", slug) for a brand this
# run creates.
BrandKey = int | tuple[str, str]


@dataclass
class CatalogState:
    """What the catalog holds before the run, as the planner needs it."""

    brands_by_slug: dict[str, int] = field(default_factory=dict)
    # kind -> entity key -> the live record holding it (any status).
    live_keys: dict[str, dict[tuple, CatalogRef]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS}
    )
    # kind -> (source, source_url) -> the record holding it (deleted records included).
    source_keys: dict[str, dict[tuple[str, str], CatalogRef]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS}
    )
    # legacy table -> legacy id -> new id (None when it was skipped without a stand-in).
    earlier: dict[str, dict[int, int | None]] = field(default_factory=dict)

    def earlier_in(self, table: str) -> Mapping[int, int | None]:
        return self.earlier.get(table, {})


# --- What the planner decides -------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """One line of the report: legacy rows = earlier + imported + superseded + skipped."""

    legacy: int = 0  # from the independent count
    earlier: int = 0
    imported: int = 0
    superseded: int = 0
    skipped: int = 0

    def add(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def accounted(self) -> int:
        return self.earlier + self.imported + self.superseded + self.skipped

    @property
    def balanced(self) -> bool:
        return self.legacy == self.accounted


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a list in the report: which legacy row, and why."""

    table: str
    id: int
    status: str
    subject: str
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {
            "table": self.table,
            "id": self.id,
            "status": self.status,
            "subject": self.subject,
            "reason": self.reason,
        }


@dataclass(slots=True)
class BrandPlan:
    row: LegacyBrand
    outcome: str  # CREATED, MATCHED or EARLIER
    key: BrandKey


@dataclass(slots=True)
class RecordPlan:
    row: LegacyRecord
    outcome: str
    key: tuple | None = None
    brand: BrandKey | None = None
    # Inserted soft-deleted: a legacy soft-deleted row, or a superseded one.
    deleted: bool = False
    # Skipped: the record that stands for it (holds its source key, or is its published
    # counterpart). Superseded: the record that holds its entity key.
    holder: Ref | None = None
    approved: bool = False
    # The key and source fields whose stored value differs from the legacy one (normal form).
    normalised: tuple[str, ...] = ()
    cover: int | None = None  # legacy image id
    image_count: int = 0

    @property
    def ref(self) -> LegacyRef:
        return LegacyRef(self.row.table.name, self.row.id)


@dataclass(slots=True)
class ImageDecision:
    image: LegacyImage
    outcome: str
    status: str  # the record's legacy status, or ORPHAN
    parent: int = 0  # legacy id of its parent, when it is imported as a detail
    note: str = ""  # why a legacy detail is imported as a main image, or why it is skipped

    @property
    def inserted(self) -> bool:
        return self.outcome in INSERTED


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class Plan:
    brands: list[BrandPlan] = field(default_factory=list)
    brand_tally: Counter = field(default_factory=Counter)
    # (table, legacy id) -> decision, for every legacy record row.
    records: dict[tuple[str, int], RecordPlan] = field(default_factory=dict)
    # kind -> records to insert, in insertion order.
    inserts: dict[str, list[RecordPlan]] = field(default_factory=lambda: {k: [] for k in KINDS})
    # (record or image table, legacy status) -> tally.
    tallies: dict[tuple[str, str], Tally] = field(default_factory=lambda: defaultdict(Tally))
    # image table -> legacy ids of the images whose dup_of clears.
    cleared_dups: dict[str, set[int]] = field(default_factory=dict)
    # What the database must hold after the write: (table, outcome, catalog status, deleted)
    # -> rows inserted in this run.
    expected: Counter = field(default_factory=Counter)
    # The operator's lists.
    superseded: list[Entry] = field(default_factory=list)
    skipped: list[Entry] = field(default_factory=list)
    downgraded: list[Entry] = field(default_factory=list)
    # Legacy main images that carry a parent_image_id anyway (imported as main images).
    parent_ignored: list[Entry] = field(default_factory=list)
    dup_cleared: list[Entry] = field(default_factory=list)
    cover_fallbacks: list[Entry] = field(default_factory=list)
    approved_matched: list[Entry] = field(default_factory=list)
    unmatched_approved: list[Entry] = field(default_factory=list)
    invalid: list[Entry] = field(default_factory=list)
    # Legacy brands whose slug does not fit: two spellings of one slug, or too long.
    brand_conflicts: list[Entry] = field(default_factory=list)
    # Live legacy published rows whose entity key a catalog record that is not published holds.
    held_by_unpublished: list[Entry] = field(default_factory=list)
    # Counters for the summary lines.
    covers: Counter = field(default_factory=Counter)
    remaps: Counter = field(default_factory=Counter)
    # Images skipped with their skipped record: counted, not listed one by one.
    images_of_skipped_records: int = 0
    # field -> inserted rows whose value was put in its normal form.
    normalised: Counter = field(default_factory=Counter)
    # Planner self-checks that failed (should stay empty; the property tests hammer this).
    problems: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        """The run cannot go ahead: nothing may be written."""
        return any(not check.ok for check in self.checks)

    @property
    def new_rows(self) -> int:
        """Legacy rows (brands, records, images) this run accounts for."""
        brands = self.brand_tally[CREATED] + self.brand_tally[MATCHED]
        return brands + sum(t.accounted - t.earlier for t in self.tallies.values())

    def tally(self, table: str, status: str) -> Tally:
        return self.tallies[(table, status)]


# --- Keys ---------------------------------------------------------------------------------

# The fields of a legacy row that are key or source values, with their normal form. Runway key
# parts may have none (the row stops the run); the others always have one.
_RUNWAY_KEY_FIELDS = {
    "season_code": normalize_season_code,
    "collection_type": normalize_collection_type,
}
_STREET_KEY_FIELDS = {"city": normalize_city}
_SOURCE_FIELDS = {"source": normalize_source, "source_url": normalize_source_url}


def normalise_record(row: LegacyRecord) -> tuple[LegacyRecord, tuple[str, ...], list[str]]:
    """`row` with its key and source values in the catalog's normal form, the names of the
    fields that changed, and why a value cannot be stored (no normal form, or too long for its
    column; such a value is kept as given and the row stops the run)."""
    normalisers = _RUNWAY_KEY_FIELDS if row.kind == RUNWAY else _STREET_KEY_FIELDS
    values: dict[str, str] = {}
    problems: list[str] = []
    for name, normalise in (normalisers | _SOURCE_FIELDS).items():
        given = getattr(row, name)
        try:
            value = normalise(given)
        except KeyValueError as error:
            problems.append(f"{name} {given!r} has no normal form ({error})")
            continue
        if len(value) > MAX_LENGTH[name]:
            problems.append(
                f"{name} {value!r} is longer than {MAX_LENGTH[name]} characters once normalised"
            )
        elif value != given:
            values[name] = value
    return (replace(row, **values) if values else row), tuple(values), problems


def normal_or_given(normalise: Callable[[str], str], value: str) -> str:
    """The normal form of a value read from the catalog, or the value when it has none (it
    then equals only a legacy value that has none either, and such a row stops the run)."""
    try:
        return normalise(value)
    except KeyValueError:
        return value


def catalog_runway_key(brand_id: int, season_code: str, collection_type: str) -> tuple:
    """The entity key of a runway already in the catalog, in the form legacy keys take.

    Catalog rows are stored in normal form by every writer; normalising here as well keeps the
    comparison honest for a row written before that was so (an editor's "fw24")."""
    return (
        brand_id,
        normal_or_given(normalize_season_code, season_code),
        normal_or_given(normalize_collection_type, collection_type),
    )


def catalog_street_key(city: str, year: int, month: int, title_key: str) -> tuple:
    return (normalize_city(city), year, month, fold_title(title_key))


def catalog_source_key(source: str, source_url: str) -> tuple[str, str]:
    return (normalize_source(source), normalize_source_url(source_url))


def runway_key(brand: BrandKey, row: LegacyRecord) -> tuple:
    """The entity key of a legacy runway (its values already normalised)."""
    return (brand, row.season_code, row.collection_type)


def street_key(row: LegacyRecord) -> tuple:
    return (row.city, row.year, row.month, fold_title(row.title))


def describe_key(kind: str, key: tuple | None, brand_slugs: Mapping[BrandKey, str]) -> str:
    if key is None:
        return kind
    if kind == RUNWAY:
        brand, season_code, collection_type = key
        return f"runway {brand_slugs.get(brand, brand)} {season_code} {collection_type}"
    city, year, month, title_key = key
    return f"street {city} {year}-{month:02d} {title_key!r}"


# --- Progress -----------------------------------------------------------------------------

ProgressFn = Callable[[str, int, int], None]


def no_progress(stage: str, done: int, total: int) -> None:
    return None


class Ticker:
    """Calls `progress(stage, done, total)` every `every` rows and once at the end."""

    def __init__(self, progress: ProgressFn, stage: str, total: int, every: int = PROGRESS_EVERY):
        self.progress, self.stage, self.total, self.every = progress, stage, total, every
        self.done = 0
        self._next = every

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.done >= self._next:
            self.progress(self.stage, self.done, self.total)
            self._next = (self.done // self.every + 1) * self.every

    def finish(self) -> None:
        self.progress(self.stage, self.done, self.total)


# --- The planner --------------------------------------------------------------------------


def build_plan(
    source: LegacySource, catalog: CatalogState, *, progress: ProgressFn = no_progress
) -> Plan:
    plan = Plan()
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
    for (table, status), n in counts.items():
        if table == BRANDS:
            plan.brand_tally["legacy"] = n
        else:
            plan.tally(table, status).legacy = n
    plan.checks = plan_checks(plan)
    return plan


def _plan_brands(
    plan: Plan, brands: Iterable[LegacyBrand], catalog: CatalogState
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
    plan: Plan,
    kind: str,
    published: list[LegacyRecord],
    drafts: list[LegacyRecord],
    brand_keys: Mapping[int, BrandKey],
    brand_slugs: Mapping[BrandKey, str],
    catalog: CatalogState,
) -> None:
    live_keys: dict[tuple, Ref] = dict(catalog.live_keys[kind])
    # Entity key -> the first legacy published row of it imported soft-deleted: the show an
    # approved draft was promoted to, since taken down by an editor.
    deleted_published: dict[tuple, Ref] = {}
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


def _status_of(plan: Plan, ref: Ref) -> str:
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
    plan: Plan,
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
    plan: Plan,
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


def _self_check_parents(plan: Plan, image_table: str, decisions: list[ImageDecision]) -> None:
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
    plan: Plan,
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


# --- Checks on the plan -------------------------------------------------------------------


def plan_checks(plan: Plan) -> list[Check]:
    def unbalanced(tables: Iterable[str]) -> list[str]:
        wanted = set(tables)
        return [
            f"{table} {status}: {t.legacy} legacy rows, {t.accounted} accounted for"
            for (table, status), t in sorted(plan.tallies.items())
            if table in wanted and not t.balanced
        ]

    brands = plan.brand_tally
    brand_sum = brands[EARLIER] + brands[CREATED] + brands[MATCHED]
    records = unbalanced(TABLE_BY_NAME)
    images = unbalanced(TABLE_BY_IMAGE_TABLE)
    return [
        Check(
            "brands: legacy rows = earlier runs + created + matched",
            brands["legacy"] == brand_sum,
            "" if brands["legacy"] == brand_sum else f"{brands['legacy']} != {brand_sum}",
        ),
        Check(
            "records: legacy rows = earlier runs + imported + superseded + skipped, "
            "per kind and status",
            not records,
            "; ".join(records),
        ),
        Check(
            "images: legacy rows = earlier runs + imported + superseded + skipped, "
            "per kind and status",
            not images,
            "; ".join(images),
        ),
        Check(
            "every approved draft has a published counterpart",
            not plan.unmatched_approved,
            _first(plan.unmatched_approved),
        ),
        Check(
            "every row fits the catalog's columns",
            not plan.invalid,
            _first(plan.invalid),
        ),
        Check(
            "brand slugs fit the catalog once lower-cased",
            not plan.brand_conflicts,
            _first(plan.brand_conflicts),
        ),
        Check(
            "no legacy published row is held back by an unpublished catalog record",
            not plan.held_by_unpublished,
            _first(plan.held_by_unpublished),
        ),
        Check(
            "no dangling parent or dup_of, no detail of a detail (in the plan)",
            not plan.problems,
            "; ".join(plan.problems[:5]),
        ),
    ]


def _first(entries: list[Entry]) -> str:
    if not entries:
        return ""
    shown = ", ".join(f"{e.table} #{e.id}" for e in entries[:5])
    more = f" and {len(entries) - 5} more" if len(entries) > 5 else ""
    return f"{len(entries)}: {shown}{more}"


def iter_entries(plan: Plan) -> Iterator[tuple[str, list[Entry]]]:
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


def skipped_breakdown(plan: Plan, *, images: bool) -> list[tuple[str, int]]:
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
