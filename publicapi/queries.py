"""The reads of the busiest requests (a list page, a detail), compiled once.

Django compiles a queryset to SQL at every evaluation and builds a model instance per row: on
a list page or a detail that was more time than everything else the API does in Python
(bench/public_api.py, part 4). Here a queryset of the view models is compiled once per
database alias into a Statement (its SQL, parameters and Django's converters of each
column, so values come back exactly as the ORM gives them), run again with new parameter
values, and rows come back as plain objects with the model's attribute names, which the
serializers' render functions read like model instances.

A filtered list is compiled per request (its SQL depends on the filters); only its rows skip
the model instances.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from types import SimpleNamespace

import orjson
from django.db import connections
from django.db.models import JSONField

from publicapi.models import (
    PublicRunway,
    PublicRunwayImage,
    PublicStreetSnap,
    PublicStreetSnapImage,
)
from publicapi.search import NEWEST_FIRST, known_count

# A parameter value no real query carries: compiled in place of a record's id, replaced by
# the id on each run.
SENTINEL = -1_234_567_890_123
# `count` is exact up to this many results; beyond, the database's estimate (docs/api.md).
EXACT_COUNT_LIMIT = 1000
ESTIMATE_SECONDS = 60

ALBUM_ORDER = ["sort_order", "id"]
KINDS = {
    PublicRunway: (PublicRunwayImage, "images"),
    PublicStreetSnap: (PublicStreetSnapImage, "images"),
}


# Columns of the views that no response shows (the album's order is the SQL's ORDER BY): not
# read, so not converted (a datetime per image row of a detail) nor carried.
UNSHOWN = frozenset({"brand_id", "updated_at", "runway_id", "street_snap_id", "sort_order"})


def attnames(model) -> list[str]:
    """The columns a response shows of `model`, by attribute name."""
    return [f.attname for f in model._meta.concrete_fields if f.attname not in UNSHOWN]


@dataclass(frozen=True)
class Statement:
    sql: str
    params: tuple
    using: str
    names: tuple[str, ...]
    converters: tuple  # ((position, (converter, ...), expression), ...)

    def rows(self, *, at: dict | None = None, suffix: str = "", extra: tuple = ()) -> list:
        """Run it (each SENTINEL parameter replaced by `at`'s value, `suffix` and `extra`
        appended) and return the rows as lists of converted values."""
        params = [at["id"] if at and p == SENTINEL else p for p in self.params]
        connection = connections[self.using]
        with connection.cursor() as cursor:
            cursor.execute(self.sql + suffix, [*params, *extra])
            rows = cursor.fetchall()
        if not self.converters:
            return rows
        return [self.converted(row, connection) for row in rows]

    def converted(self, row, connection, start: int = 0) -> Sequence:
        """This statement's columns of `row` (from position `start` on) as the ORM gives
        them."""
        if not self.converters:
            return row[start : start + len(self.names)]
        values = list(row[start : start + len(self.names)])
        for position, functions, expression in self.converters:
            value = values[position]
            for function in functions:
                value = function(value, expression, connection)
            values[position] = value
        return values

    def objects(self, **kwargs) -> list[SimpleNamespace]:
        names = self.names
        return [
            SimpleNamespace(**dict(zip(names, row, strict=True))) for row in self.rows(**kwargs)
        ]


def compile_statement(queryset, names: list[str]) -> Statement:
    values = queryset.values_list(*names)
    compiler = values.query.get_compiler(values.db)
    sql, params = compiler.as_sql()
    fields = [column[0] for column in compiler.select[: compiler.col_count]]
    converters = compiler.get_converters(fields)
    return Statement(
        sql=sql,
        params=tuple(params),
        using=values.db,
        names=tuple(names),
        converters=tuple(
            (position, tuple(map(_faster, functions)), expression)
            for position, (functions, expression) in converters.items()
        ),
    )


def _faster(converter):
    """A JSON column's converter by orjson (a quarter of json.loads's time, and a detail has
    a renditions list per image); any other converter as Django has it."""
    field = getattr(converter, "__self__", None)
    if (
        getattr(converter, "__func__", None) is JSONField.from_db_value and field.decoder is None  # type: ignore[union-attr]  # a JSONField's bound method
    ):
        return _json_value
    return converter


def _json_value(value, expression, connection):
    # What JSONField.from_db_value gives a whole column: the parsed value, or the text as it
    # is if it is not JSON.
    if not isinstance(value, str | bytes):
        return value  # None, or a value the database driver parsed already
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value


# --- A list page ----------------------------------------------------------------------------


@cache
def _unfiltered(model) -> tuple[Statement, Statement]:
    """The page and the count of a list without filters. Cached: the same SQL every time."""
    return (
        compile_statement(model.objects.order_by(*NEWEST_FIRST), attnames(model)),
        compile_statement(model.objects.order_by(), ["id"]),
    )


@cache
def _covers(image_model) -> Statement:
    return compile_statement(image_model.objects.order_by(), attnames(image_model))


@dataclass
class Page:
    records: list[SimpleNamespace]
    count: int
    has_next: bool


def page(model, queryset, *, offset: int, size: int) -> Page | None:
    """A page of the list (`queryset`, or the whole list if None) with each record's cover,
    and the count: one query, whatever the page size (a second, kept a minute, when the
    count turns out to be beyond EXACT_COUNT_LIMIT). None past the last page.

    The page is cut first, in a subquery, and only its rows are joined to their covers:
    joined to the whole list, PostgreSQL would join every public image before sorting and
    cutting the page (docs/api.md, "Throughput"). The count is the statement's uncorrelated
    scalar subquery (run once, not per row), left out when no count is needed: a search that
    knows its results' number already, or a list whose estimate is kept (see _count)."""
    known = None
    if queryset is None:
        rows, counter = _unfiltered(model)
    else:
        rows = compile_statement(queryset, attnames(model))
        counter = compile_statement(queryset.order_by(), ["id"])
        known = known_count(queryset)
    covers = _covers(KINDS[model][0])
    connection = connections[rows.using]
    kept = None if known is not None else _kept_estimate(counter)
    count_params: list = []
    count_sql = ""
    if known is None and kept is None:
        count_sql, count_params = _counted(counter, connection)
    sql = _page_sql(model, rows.using, rows.sql, count_sql)
    params = [*count_params, *rows.params, size + 1, offset]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    if not fetched and offset:
        return None
    has_next = len(fetched) > size
    del fetched[size:]
    # p.* is the page's columns (and any the ORDER BY added to them), then its row number;
    # the cover's columns and the count follow.
    cover_at = -len(covers.names) - (1 if count_sql else 0)
    cover_id_at = cover_at + covers.names.index("id")
    records = []
    for row in fetched:
        record = SimpleNamespace(
            **dict(zip(rows.names, rows.converted(row, connection), strict=True))
        )
        cover = None
        if row[cover_id_at] is not None:  # null when the join found no cover
            values = covers.converted(row, connection, start=len(row) + cover_at)
            cover = SimpleNamespace(**dict(zip(covers.names, values, strict=True)))
        record.cover = cover
        records.append(record)
    shown = len(records)
    if known is not None:  # a search read its results' ids already: no count query
        count = known
    elif not has_next and (shown or not offset):  # the last page knows the count
        count = offset + shown
    else:
        counted = kept if kept is not None else fetched[0][-1]
        count = _count(counter, counted, seen=offset + shown + 1, estimated=kept is not None)
    return Page(records=records, count=count, has_next=has_next)


@lru_cache(maxsize=256)
def _page_sql(model, using: str, rows_sql: str, count_sql: str) -> str:
    """The page statement around `rows_sql` (the list's own, cut by LIMIT and OFFSET), with
    the count's subquery `count_sql` if any. Kept per list: the unfiltered lists and the
    common filters come back with every request, and so do their statements."""
    image_model = KINDS[model][0]
    covers = _covers(image_model)
    quote = connections[using].ops.quote_name
    cover_columns = ", ".join(f"c.{quote(column(image_model, name))}" for name in covers.names)
    count = f", ({count_sql})" if count_sql else ""
    cover_id = quote(column(model, "cover_id"))
    return (
        f"SELECT p.*, {cover_columns}{count} FROM ("  # noqa: S608 - our own SQL
        f"SELECT q.*, ROW_NUMBER() OVER () AS {quote('_n')} "
        f"FROM ({rows_sql} LIMIT %s OFFSET %s) q"
        f") p LEFT JOIN {quote(image_model._meta.db_table)} c ON c.{quote('id')} = p.{cover_id} "
        f"ORDER BY p.{quote('_n')}"
    )


def column(model, attname: str) -> str:
    """The database column of a concrete field, by its attribute name."""
    return next(f.column for f in model._meta.concrete_fields if f.attname == attname)


def _counted(counter: Statement, connection) -> tuple[str, list]:
    """The count's SQL: exact up to EXACT_COUNT_LIMIT + 1 on PostgreSQL; SQLite (the
    embedded mode's small archives) always counts."""
    if connection.vendor == "postgresql":
        limit = EXACT_COUNT_LIMIT + 1
        sql, params = f"{counter.sql} LIMIT %s", [*counter.params, limit]
    else:
        sql, params = counter.sql, list(counter.params)
    return f"SELECT COUNT(*) FROM ({sql}) counted", params  # noqa: S608 - ours


def _count(counter: Statement, counted: int, *, seen: int, estimated: bool) -> int:
    """Exact up to EXACT_COUNT_LIMIT; beyond, PostgreSQL's estimate, kept for
    ESTIMATE_SECONDS (no count at all meanwhile), never below what the pages show."""
    limit = EXACT_COUNT_LIMIT + 1
    if not estimated:
        if connections[counter.using].vendor != "postgresql" or counted < limit:
            return counted
        counted = _estimate(counter)
    return max(counted, seen, limit)


_estimates: dict[tuple, tuple[float, int]] = {}
_estimates_lock = threading.Lock()


def _estimate_key(counter: Statement) -> tuple:
    # A parameter may be a list (a search's candidate ids): keyed by its text.
    return (counter.using, counter.sql, repr(counter.params), EXACT_COUNT_LIMIT)


def _kept_estimate(counter: Statement) -> int | None:
    """The estimate of a list known to be beyond EXACT_COUNT_LIMIT, while it is kept."""
    kept = _estimates.get(_estimate_key(counter))
    if kept is not None and time.monotonic() - kept[0] < ESTIMATE_SECONDS:
        return kept[1]
    return None


def _estimate(counter: Statement) -> int:
    with connections[counter.using].cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + counter.sql, list(counter.params))
        (plan,) = cursor.fetchone()
    if isinstance(plan, str):
        plan = json.loads(plan)
    rows = int(plan[0]["Plan"]["Plan Rows"])
    with _estimates_lock:
        if len(_estimates) > 1000:  # many filter combinations: start again
            _estimates.clear()
        _estimates[_estimate_key(counter)] = (time.monotonic(), rows)
    return rows


# --- A detail -------------------------------------------------------------------------------


@cache
def _detail(model) -> Statement:
    image_model, related = KINDS[model]
    record, images = attnames(model), attnames(image_model)
    queryset = model.objects.filter(pk=SENTINEL).order_by(
        *(f"{related}__{name}" for name in ALBUM_ORDER)
    )
    return compile_statement(queryset, [*record, *(f"{related}__{name}" for name in images)])


def detail(model, pk: int) -> SimpleNamespace | None:
    """A public record with `images` (a list, in album order) and `cover`, in one query (the
    record left-joined to its images), or None."""
    statement = _detail(model)
    rows = statement.rows(at={"id": pk})
    if not rows:
        return None
    image_model, related = KINDS[model]
    record_names = statement.names[: len(attnames(model))]
    image_names = [
        name.removeprefix(f"{related}__") for name in statement.names[len(record_names) :]
    ]
    split = len(record_names)
    record = SimpleNamespace(**dict(zip(record_names, rows[0][:split], strict=True)))
    record.images = [
        SimpleNamespace(**dict(zip(image_names, row[split:], strict=True)))
        for row in rows
        if row[split] is not None
    ]
    # The view's cover_id is already null unless it is a live image of this album.
    record.cover = next((i for i in record.images if i.id == record.cover_id), None)
    return record
