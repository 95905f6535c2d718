"""Legacy archives for tests: a builder that writes rows into the legacy PostgreSQL database,
and an in-memory `LegacySource` over the same row types for the pure planner tests."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from itertools import count, groupby
from operator import attrgetter

import psycopg
from psycopg import sql

from catalog.legacy.rows import (
    BRANDS,
    ORPHAN,
    PUBLISHED,
    RUNWAY,
    RUNWAY_DRAFTS,
    RUNWAYS,
    STREET_DRAFTS,
    STREETS,
    TABLES,
    LegacyBrand,
    LegacyImage,
    LegacyRecord,
    LegacyTable,
)

BASE_TIME = datetime(2023, 1, 1, tzinfo=UTC)
ALL_TABLES = [BRANDS, *(t.name for t in TABLES), *(t.image_table for t in TABLES)]


def image_key(n: int | str) -> str:
    digest = hashlib.sha1(str(n).encode()).hexdigest()  # noqa: S324 - a test key
    return f"images/{digest[:2]}/{digest}.jpg"


def at(days: int) -> datetime:
    return BASE_TIME + timedelta(days=days)


# --- In memory ----------------------------------------------------------------------------


@dataclass
class MemoryArchive:
    """A legacy archive as Python rows; a `LegacySource` for the planner."""

    brand_rows: list[LegacyBrand] = field(default_factory=list)
    record_rows: dict[str, list[LegacyRecord]] = field(default_factory=dict)
    image_rows: dict[str, list[LegacyImage]] = field(default_factory=dict)

    def counts(self) -> dict[tuple[str, str], int]:
        counts: Counter = Counter({(BRANDS, ""): len(self.brand_rows)})
        for table in TABLES:
            statuses = {r.id: r.status for r in self.record_rows.get(table.name, [])}
            counts.update((table.name, s) for s in statuses.values())
            counts.update(
                (table.image_table, statuses.get(i.record_id, ORPHAN))
                for i in self.image_rows.get(table.image_table, [])
            )
        return dict(counts)

    def brands(self) -> list[LegacyBrand]:
        return sorted(self.brand_rows, key=attrgetter("id"))

    def records(self, table: LegacyTable) -> list[LegacyRecord]:
        return sorted(self.record_rows.get(table.name, []), key=attrgetter("id"))

    def image_groups(self, table: LegacyTable) -> Iterator[tuple[int, list[LegacyImage]]]:
        images = sorted(
            self.image_rows.get(table.image_table, []), key=attrgetter("record_id", "id")
        )
        for record_id, group in groupby(images, key=attrgetter("record_id")):
            yield record_id, list(group)


# Rows for in-memory archives, with the defaults a test does not care about.


def brand(id: int, slug: str, **values) -> LegacyBrand:
    defaults = {"name": slug.title(), "is_featured": False, "deleted": False}
    return LegacyBrand(id=id, slug=slug, created_at=at(0), updated_at=at(0), **defaults | values)


def record(table: LegacyTable, id: int, status: str = PUBLISHED, **values) -> LegacyRecord:
    defaults = {
        "title": "",
        "description": "",
        "year": 2024,
        "cover": "",
        "source": "",
        "source_url": "",
        "deleted": False,
        "created_at": at(id),
        "updated_at": at(id),
    }
    if table.kind == RUNWAY:
        defaults |= {"brand_id": 1, "season_code": "FW24", "collection_type": "ready-to-wear"}
    else:
        defaults |= {"city": "Paris", "month": 8}
    return LegacyRecord(table=table, id=id, status=status, **defaults | values)


def image(id: int, record_id: int, **values) -> LegacyImage:
    defaults = {
        "url": f"images/{id}.jpg",
        "sort_order": id,
        "width": 800,
        "height": 1200,
        "phash": 0,
        "is_duplicate": False,
        "dup_of": 0,
        "deleted": False,
        "created_at": at(0),
    }
    return LegacyImage(id=id, record_id=record_id, **defaults | values)


def archive(*rows: LegacyRecord, images=()) -> MemoryArchive:
    """Brands acme (#1) and beta (#2), these records, and (table, image) pairs."""
    result = MemoryArchive(brand_rows=[brand(1, "acme"), brand(2, "beta")])
    for row in rows:
        result.record_rows.setdefault(row.table.name, []).append(row)
    for table, img in images:
        result.image_rows.setdefault(table.image_table, []).append(img)
    return result


# --- In the legacy database ---------------------------------------------------------------

# LegacyRecord / LegacyImage field -> legacy column, where the names differ.
_RECORD_COLUMNS = {"deleted": "is_deleted"}
_IMAGE_COLUMNS = {"deleted": "is_deleted", "parent_id": "parent_image_id"}


def _flag(value: object) -> object:
    return int(value) if isinstance(value, bool) else value


class LegacyDatabase:
    """Writes legacy rows with plain SQL, the way the old system left them."""

    def __init__(self, conninfo: str):
        self.conninfo = conninfo
        self.conn = psycopg.connect(conninfo, autocommit=True)
        self._ids = count(1)

    def close(self) -> None:
        self.conn.close()

    def reset(self) -> None:
        tables = sql.SQL(", ").join(map(sql.Identifier, ALL_TABLES))
        self.conn.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY").format(tables))

    def insert(self, table: str, **values: object) -> int:
        query = sql.SQL("INSERT INTO {} ({}) VALUES ({}) RETURNING id").format(
            sql.Identifier(table),
            sql.SQL(", ").join(map(sql.Identifier, values)),
            sql.SQL(", ").join(sql.Placeholder() * len(values)),
        )
        (new_id,) = self.conn.execute(query, [_flag(v) for v in values.values()]).fetchone()
        return new_id

    def update(self, table: str, row_id: int, **values: object) -> None:
        query = sql.SQL("UPDATE {} SET {} WHERE id = %s").format(
            sql.Identifier(table),
            sql.SQL(", ").join(
                sql.SQL("{} = %s").format(sql.Identifier(column)) for column in values
            ),
        )
        self.conn.execute(query, [*(_flag(v) for v in values.values()), row_id])

    def snapshot(self) -> dict[str, list[tuple]]:
        """Every row of every legacy table, to show the import never writes there."""
        return {
            table: self.conn.execute(
                sql.SQL("SELECT * FROM {} ORDER BY id").format(sql.Identifier(table))
            ).fetchall()
            for table in ALL_TABLES
        }

    # Builders with the defaults a test does not care about.

    def brand(self, slug: str, **values: object) -> int:
        values = {"name": slug.title(), "slug": slug, **values}
        return self.insert(BRANDS, **values)

    def runway(self, brand_id: int, season_code: str, **values: object) -> int:
        values = {"collection_type": "ready-to-wear", "year": 2024, **values}
        return self.insert(RUNWAYS.name, brand_id=brand_id, season_code=season_code, **values)

    def runway_draft(self, brand_id: int, season_code: str, status: str, **values: object) -> int:
        values = {"collection_type": "ready-to-wear", "year": 2024, **values}
        return self.insert(
            RUNWAY_DRAFTS.name,
            brand_id=brand_id,
            season_code=season_code,
            status=status,
            **values,
        )

    def street(self, city: str, year: int, month: int, title: str | None, **values) -> int:
        return self.insert(STREETS.name, city=city, year=year, month=month, title=title, **values)

    def street_draft(
        self, city: str, year: int, month: int, title: str | None, status: str, **values
    ) -> int:
        return self.insert(
            STREET_DRAFTS.name,
            city=city,
            year=year,
            month=month,
            title=title,
            status=status,
            **values,
        )

    def image(self, table: LegacyTable, record_id: int, **values: object) -> int:
        values = {"url": image_key(next(self._ids)), "width": 800, "height": 1200, **values}
        return self.insert(table.image_table, **{table.image_fk: record_id}, **values)

    def load(self, archive: MemoryArchive) -> None:
        """Write an in-memory archive (ids included) into the legacy tables."""
        with self.conn.cursor() as cursor:
            brand_columns = [f.name for f in fields(LegacyBrand)]
            cursor.executemany(
                _insert(BRANDS, [_RECORD_COLUMNS.get(c, c) for c in brand_columns]),
                [[_flag(getattr(b, c)) for c in brand_columns] for b in archive.brand_rows],
            )
            for table in TABLES:
                columns = _record_columns(table)
                cursor.executemany(
                    _insert(table.name, [_RECORD_COLUMNS.get(c, c) for c in columns]),
                    [
                        [_flag(getattr(r, c)) for c in columns]
                        for r in archive.record_rows.get(table.name, [])
                    ],
                )
                columns = _image_columns(table)
                cursor.executemany(
                    _insert(
                        table.image_table,
                        [
                            table.image_fk if c == "record_id" else _IMAGE_COLUMNS.get(c, c)
                            for c in columns
                        ],
                    ),
                    [
                        [_flag(getattr(i, c)) for c in columns]
                        for i in archive.image_rows.get(table.image_table, [])
                    ],
                )


def _record_columns(table: LegacyTable) -> list[str]:
    columns = ["id", "title", "description", "year", "cover", "source", "source_url", "deleted"]
    columns += ["created_at", "updated_at"]
    if table.drafts:
        columns += ["status", "job_id", "reviewer", "reject_reason"]
    if table.kind == RUNWAY:
        columns += ["brand_id", "season", "season_code", "collection_type"]
    else:
        columns += ["city", "month"]
    return columns


def _image_columns(table: LegacyTable) -> list[str]:
    columns = ["id", "record_id", "url", "sort_order", "width", "height", "phash"]
    columns += ["is_duplicate", "dup_of", "deleted", "created_at"]
    columns += ["look_index"] if table.kind == RUNWAY else ["is_detail", "parent_id"]
    return columns


def _insert(table: str, columns: list[str]) -> sql.Composed:
    return sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
    )
