"""The legacy archive's rows and tables, as plain data (no Django, no database), and the
`LegacySource` protocol the import reads them through."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

RUNWAY = "runway"
STREET = "street"
KINDS = (RUNWAY, STREET)

# Legacy statuses. Published tables have no status column: every row there is "published".
PUBLISHED = "published"
PENDING = "pending"
APPROVED = "approved"
REJECTED = "rejected"
DRAFT_STATUSES = (PENDING, REJECTED, APPROVED)
STATUSES = (PUBLISHED, *DRAFT_STATUSES)
# The status of an image whose record row does not exist in the legacy database.
ORPHAN = "no record"

BRANDS = "brands"


@dataclass(frozen=True, slots=True)
class LegacyTable:
    """One legacy record table and the image table that belongs to it."""

    name: str
    kind: str
    drafts: bool
    image_table: str
    image_fk: str

    def __str__(self) -> str:
        return self.name


RUNWAYS = LegacyTable("brand_runways", RUNWAY, False, "brand_runway_images", "runway_id")
RUNWAY_DRAFTS = LegacyTable(
    "brand_runway_drafts", RUNWAY, True, "brand_runway_draft_images", "draft_id"
)
STREETS = LegacyTable("street_snaps", STREET, False, "street_snap_images", "snap_id")
STREET_DRAFTS = LegacyTable(
    "street_snap_drafts", STREET, True, "street_snap_draft_images", "draft_id"
)
# Published tables first: the import order (published rows win over drafts) follows this.
TABLES = (RUNWAYS, RUNWAY_DRAFTS, STREETS, STREET_DRAFTS)
TABLE_BY_NAME = {t.name: t for t in TABLES}
TABLE_BY_IMAGE_TABLE = {t.image_table: t for t in TABLES}


def tables_of(kind: str) -> tuple[LegacyTable, LegacyTable]:
    """(published table, drafts table) of a kind."""
    published, drafts = (t for t in TABLES if t.kind == kind)
    return published, drafts


@dataclass(frozen=True, slots=True)
class LegacyBrand:
    id: int
    name: str
    slug: str
    is_featured: bool
    deleted: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class LegacyRecord:
    """A row of any of the four legacy record tables; kind-specific fields default empty."""

    table: LegacyTable
    id: int
    status: str
    title: str | None
    description: str
    year: int
    cover: str
    source: str
    source_url: str
    deleted: bool
    created_at: datetime
    updated_at: datetime
    # Drafts only.
    job_id: int = 0
    reviewer: str = ""
    reject_reason: str = ""
    # Runways only.
    brand_id: int = 0
    season: str = ""
    season_code: str = ""
    collection_type: str = ""
    # Street snaps only.
    city: str = ""
    month: int = 0

    @property
    def kind(self) -> str:
        return self.table.kind


@dataclass(frozen=True, slots=True)
class LegacyImage:
    """A row of any of the four legacy image tables. Ids, parent_id and dup_of: 0 = none."""

    id: int
    record_id: int
    url: str
    sort_order: int
    width: int
    height: int
    phash: int
    is_duplicate: bool
    dup_of: int
    deleted: bool
    created_at: datetime
    # Runway images only.
    look_index: int = 0
    # Street images only.
    is_detail: bool = False
    parent_id: int = 0


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
