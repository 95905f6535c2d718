"""Reading the legacy archive with psycopg 3 (not as a Django database).

One connection, one transaction for the whole run: READ ONLY, so nothing can write to the
legacy database through it, and REPEATABLE READ, so the counts, the planning pass and the
writing pass all see the same snapshot even if the old system is still running. Big tables are
read through server-side cursors, a few thousand rows at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from operator import attrgetter
from typing import cast

import psycopg
from psycopg import IsolationLevel, sql

from catalog.legacy.rows import (
    BRANDS,
    ORPHAN,
    PUBLISHED,
    RUNWAY,
    TABLES,
    LegacyBrand,
    LegacyImage,
    LegacyRecord,
    LegacyTable,
)

ITERSIZE = 5_000


class LegacySourceError(Exception):
    """The legacy database cannot be read: unreachable, or not the legacy schema."""


_RECORD_COLUMNS = [
    "id",
    "title",
    "description",
    "year",
    "cover",
    "source",
    "source_url",
    "is_deleted",
    "created_at",
    "updated_at",
]
_IMAGE_COLUMNS = [
    "id",
    "url",
    "sort_order",
    "width",
    "height",
    "phash",
    "is_duplicate",
    "dup_of",
    "is_deleted",
    "created_at",
]


def required_columns() -> dict[str, set[str]]:
    """Every column the import reads, per legacy table."""
    columns = {BRANDS: {"id", "name", "slug", "is_featured", "is_deleted"}}
    columns[BRANDS] |= {"created_at", "updated_at"}
    for table in TABLES:
        own = set(_RECORD_COLUMNS)
        own |= (
            {"brand_id", "season", "season_code", "collection_type"}
            if table.kind == RUNWAY
            else {"city", "month"}
        )
        if table.drafts:
            own |= {"status", "job_id", "reviewer", "reject_reason"}
        columns[table.name] = own
        images = set(_IMAGE_COLUMNS) | {table.image_fk}
        images |= {"look_index"} if table.kind == RUNWAY else {"is_detail", "parent_image_id"}
        columns[table.image_table] = images
    return columns


class PostgresLegacySource:
    """A `plan.LegacySource` over a legacy PostgreSQL database."""

    def __init__(self, conninfo: str, *, itersize: int = ITERSIZE):
        try:
            self.conn = psycopg.connect(
                conninfo, connect_timeout=10, application_name="migrate_legacy_drafts"
            )
        except psycopg.Error as error:
            raise LegacySourceError(f"cannot connect to the legacy database: {error}") from error
        # Both must be set before the first statement opens the transaction.
        self.conn.isolation_level = IsolationLevel.REPEATABLE_READ
        self.conn.read_only = True
        self.itersize = itersize

    def __enter__(self) -> PostgresLegacySource:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if not self.conn.closed:
            self.conn.rollback()
            self.conn.close()

    def check_schema(self) -> None:
        wanted = required_columns()
        rows = self.conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = ANY(%s)",
            [list(wanted)],
        ).fetchall()
        present: dict[str, set[str]] = {}
        for table, column in rows:
            present.setdefault(table, set()).add(column)
        missing = [f"table {table}" for table in wanted if table not in present]
        for table, columns in wanted.items():
            if table in present:
                missing += [f"{table}.{column}" for column in sorted(columns - present[table])]
        if missing:
            raise LegacySourceError(
                "this is not the legacy archive schema; missing: " + ", ".join(missing)
            )

    # --- LegacySource ---------------------------------------------------------------------

    def counts(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        # count(*) always returns its one row.
        (n,) = cast(tuple[int], self.conn.execute("SELECT count(*) FROM brands").fetchone())
        counts[(BRANDS, "")] = n
        for table in TABLES:
            status = sql.SQL("status") if table.drafts else sql.Literal(PUBLISHED)
            query = sql.SQL("SELECT {status}, count(*) FROM {table} GROUP BY 1").format(
                status=status, table=sql.Identifier(table.name)
            )
            for status_value, n in self.conn.execute(query):
                counts[(table.name, status_value)] = n
            query = sql.SQL(
                "SELECT CASE WHEN r.id IS NULL THEN {orphan} ELSE {status} END, count(*)"
                " FROM {images} i LEFT JOIN {table} r ON r.id = i.{fk} GROUP BY 1"
            ).format(
                orphan=sql.Literal(ORPHAN),
                status=sql.SQL("r.status") if table.drafts else sql.Literal(PUBLISHED),
                images=sql.Identifier(table.image_table),
                table=sql.Identifier(table.name),
                fk=sql.Identifier(table.image_fk),
            )
            for status_value, n in self.conn.execute(query):
                counts[(table.image_table, status_value)] = n
        return counts

    def brands(self) -> Iterator[LegacyBrand]:
        query = sql.SQL(
            "SELECT id, name, slug, is_featured <> 0, is_deleted <> 0, created_at, updated_at"
            " FROM brands ORDER BY id"
        )
        for row in self._stream("legacy_brands", query):
            yield LegacyBrand(*row)

    def records(self, table: LegacyTable) -> Iterator[LegacyRecord]:
        runway = table.kind == RUNWAY
        columns = [
            sql.Identifier("id"),
            sql.Identifier("status") if table.drafts else sql.Literal(PUBLISHED),
            *map(sql.Identifier, ["title", "description", "year", "cover"]),
            *map(sql.Identifier, ["source", "source_url"]),
            sql.SQL("is_deleted <> 0"),
            *map(sql.Identifier, ["created_at", "updated_at"]),
            *(
                map(sql.Identifier, ["job_id", "reviewer", "reject_reason"])
                if table.drafts
                else [sql.Literal(0), sql.Literal(""), sql.Literal("")]
            ),
            *(
                map(sql.Identifier, ["brand_id", "season", "season_code", "collection_type"])
                if runway
                else [sql.Literal(0), sql.Literal(""), sql.Literal(""), sql.Literal("")]
            ),
            *(
                [sql.Literal(""), sql.Literal(0)]
                if runway
                else map(sql.Identifier, ["city", "month"])
            ),
        ]
        query = sql.SQL("SELECT {columns} FROM {table} ORDER BY id").format(
            columns=sql.SQL(", ").join(columns), table=sql.Identifier(table.name)
        )
        for row in self._stream(f"legacy_{table.name}", query):
            yield LegacyRecord(table, *row)

    def image_groups(self, table: LegacyTable) -> Iterator[tuple[int, list[LegacyImage]]]:
        runway = table.kind == RUNWAY
        columns = [
            sql.Identifier("id"),
            sql.Identifier(table.image_fk),
            *map(sql.Identifier, ["url", "sort_order", "width", "height", "phash"]),
            sql.SQL("is_duplicate <> 0"),
            sql.Identifier("dup_of"),
            sql.SQL("is_deleted <> 0"),
            sql.Identifier("created_at"),
            *(
                [sql.Identifier("look_index"), sql.Literal(False), sql.Literal(0)]
                if runway
                else [sql.Literal(0), sql.SQL("is_detail <> 0"), sql.Identifier("parent_image_id")]
            ),
        ]
        query = sql.SQL("SELECT {columns} FROM {images} ORDER BY {fk}, id").format(
            columns=sql.SQL(", ").join(columns),
            images=sql.Identifier(table.image_table),
            fk=sql.Identifier(table.image_fk),
        )
        images = (LegacyImage(*row) for row in self._stream(f"legacy_{table.image_table}", query))
        for record_id, group in groupby(images, key=attrgetter("record_id")):
            yield record_id, list(group)

    def _stream(self, name: str, query: sql.SQL | sql.Composed) -> Iterator[tuple]:
        # A named cursor is a server-side cursor: rows arrive `itersize` at a time, so a table
        # of millions of images never sits in memory at once.
        with self.conn.cursor(name=name) as cursor:
            cursor.itersize = self.itersize
            cursor.execute(query)
            yield from cursor
