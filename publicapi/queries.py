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
from dataclasses import dataclass
from functools import cache
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
        converted = []
        for row in rows:
            row = list(row)
            for position, functions, expression in self.converters:
                value = row[position]
                for function in functions:
                    value = function(value, expression, connection)
                row[position] = value
            converted.append(row)
        return converted

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
    and the count: three queries (two for a search on PostgreSQL), whatever the page size.
    None past the last page."""
    known = None
    if queryset is None:
        rows, counter = _unfiltered(model)
    else:
        rows = compile_statement(queryset, attnames(model))
        counter = compile_statement(queryset.order_by(), ["id"])
        known = known_count(queryset)
    records = rows.objects(suffix=" LIMIT %s OFFSET %s", extra=(size + 1, offset))
    if not records and offset:
        return None
    has_next = len(records) > size
    del records[size:]
    if known is not None:  # a search read its results' ids already: no count query
        count = known
    else:
        count = _count(counter, offset=offset, shown=len(records), has_next=has_next)
    covers = _covered(KINDS[model][0], [r.cover_id for r in records if r.cover_id is not None])
    for record in records:
        record.cover = covers.get(record.cover_id)
    return Page(records=records, count=count, has_next=has_next)


def _covered(image_model, ids: list[int]) -> dict:
    if not ids:
        return {}
    statement = _covers(image_model)
    connection = connections[statement.using]
    column = (
        f"{connection.ops.quote_name(image_model._meta.db_table)}.{connection.ops.quote_name('id')}"
    )
    placeholders = ", ".join(["%s"] * len(ids))
    found = statement.objects(suffix=f" WHERE {column} IN ({placeholders})", extra=tuple(ids))
    return {image.id: image for image in found}


def _count(counter: Statement, *, offset: int, shown: int, has_next: bool) -> int:
    """Exact up to EXACT_COUNT_LIMIT; beyond, PostgreSQL's estimate, kept for
    ESTIMATE_SECONDS, never below what the pages show. The last page knows the exact count.
    SQLite (the embedded mode's small archives) always counts."""
    if not has_next and (shown or not offset):
        return offset + shown
    connection = connections[counter.using]
    if connection.vendor == "postgresql":
        limit = EXACT_COUNT_LIMIT + 1
        sql, params = f"{counter.sql} LIMIT %s", [*counter.params, limit]
    else:
        limit, sql, params = None, counter.sql, list(counter.params)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM ({sql}) counted", params)  # noqa: S608 - ours
        (counted,) = cursor.fetchone()
    if limit is None or counted < limit:
        return counted
    seen = offset + shown + (1 if has_next else 0)
    return max(_estimate(counter), seen, limit)


_estimates: dict[tuple, tuple[float, int]] = {}
_estimates_lock = threading.Lock()


def _estimate(counter: Statement) -> int:
    # A parameter may be a list (a search's candidate ids): keyed by its text.
    key = (counter.using, counter.sql, repr(counter.params))
    now = time.monotonic()
    kept = _estimates.get(key)
    if kept is not None and now - kept[0] < ESTIMATE_SECONDS:
        return kept[1]
    with connections[counter.using].cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + counter.sql, list(counter.params))
        (plan,) = cursor.fetchone()
    if isinstance(plan, str):
        plan = json.loads(plan)
    rows = int(plan[0]["Plan"]["Plan Rows"])
    with _estimates_lock:
        if len(_estimates) > 1000:  # many filter combinations: start again
            _estimates.clear()
        _estimates[key] = (now, rows)
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
