"""What a legacy import plan is: the catalog's state the planner reads, and the decisions it
returns (`ImportPlan`: per record its outcome and key holders, per album its cover and image
count, the image decisions that are not the default, tallies per table and status, and the
lists an operator reads). Plain data: `planner.build_plan` fills it, the writer applies it,
`audit` checks it and `report` renders it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from catalog.legacy.rows import KINDS, LegacyBrand, LegacyImage, LegacyRecord

IMPORTED = "imported"
SUPERSEDED = "superseded"
SKIPPED = "skipped"
EARLIER = "earlier"  # accounted for by an earlier run (it is in the legacy id map)
INSERTED = frozenset({IMPORTED, SUPERSEDED})
# Brands are matched, never superseded or skipped.
CREATED = "created"
MATCHED = "matched"


# --- What the planner reads besides the legacy rows ---------------------------------------


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
class ImportPlan:
    """The fate of every legacy row, decided before anything is written."""

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
