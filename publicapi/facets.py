"""Filter counts for a list's sidebar: for each facet, how many results each value would give
with every *other* filter of the request applied (so the sidebar can offer the alternatives
to the value chosen), by count then value, at most MAX_VALUES.

On PostgreSQL one query computes every facet and the total in one scan (GROUPING SETS); on
SQLite one query per facet and one for the total. A `q` counts every match (no ranking, so
no cap); on PostgreSQL its brand lookup is one more query.

The brand facet groups by brand_id, not by its slug and name: hashing two strings per row
per grouping set costs more than the rest of an unfiltered count. The slug and name of each
brand counted are read afterwards, one index probe per brand, before the values are ordered
and cut (a tie at the 50th value is broken by the slug).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce

from django.db import connections
from django.db.models import BooleanField, Count, ExpressionWrapper, Q
from rest_framework.exceptions import ValidationError

from publicapi import search

MAX_VALUES = 50


@dataclass(frozen=True)
class Facet:
    parameter: str  # the list's filter parameter, and the facet's name in the answer
    column: str
    label: str | None = None  # a column shown beside the value (a brand's name)
    # A column that determines `column` and `label` (a brand's id): grouped by instead of
    # them on PostgreSQL, which then reads them from the view once per group.
    key: str | None = None


RUNWAY_FACETS = [
    Facet("brand", "brand_slug", label="brand_name", key="brand_id"),
    Facet("season_code", "season_code"),
    Facet("year", "year"),
    Facet("collection_type", "collection_type"),
]
STREET_SNAP_FACETS = [Facet("city", "city"), Facet("year", "year"), Facet("month", "month")]


def facet_counts(filterset, facets: list[Facet]) -> dict:
    """{"count": N, "facets": {name: [{"value", ("label",) "count"}, ...]}} for a bound
    FilterSet of a list (its queryset unfiltered)."""
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    chosen = {
        name: value
        for name, value in filterset.form.cleaned_data.items()
        if value not in (None, "")
    }
    base = filterset.queryset
    if "q" in chosen:
        # Every match counts: the ranking's cap (search.MAX_RANKED) is for ordering a list.
        q = chosen.pop("q")
        if search.parse(q):
            base = filterset.filters["q"].match(base, q)
    base = base.order_by()

    if base.db and connections[base.db].vendor == "postgresql":
        return _in_one_scan(base, filterset, chosen, facets)
    return _per_facet(base, filterset, chosen, facets)


def _per_facet(base, filterset, chosen: dict, facets: list[Facet]) -> dict:
    """One GROUP BY per facet and a count (SQLite, which has no GROUPING SETS)."""

    def filtered(leave_out: str | None):
        queryset = base
        for name, value in chosen.items():
            if name != leave_out:
                queryset = filterset.filters[name].filter(queryset, value)
        return queryset

    counts = {}
    for facet in facets:
        columns = [facet.column, *([facet.label] if facet.label else [])]
        rows = (
            filtered(facet.parameter)
            .values(*columns)
            .annotate(count=Count("id"))
            .order_by("-count", facet.column)[:MAX_VALUES]
        )
        counts[facet.parameter] = [
            {
                "value": row[facet.column],
                **({"label": row[facet.label]} if facet.label else {}),
                "count": row["count"],
            }
            for row in rows
        ]
    return {"count": filtered(None).count(), "facets": counts}


def _in_one_scan(base, filterset, chosen: dict, facets: list[Facet]) -> dict:
    """Every facet and the total in one query (PostgreSQL): the rows that pass all filters
    but at most one, each with a flag per filter, grouped by GROUPING SETS, one per facet;
    each facet's count takes the rows that pass every *other* filter (COUNT FILTER), and a
    window keeps its MAX_VALUES first values."""
    conditions = {
        name: _condition(filterset.filters[name], value) for name, value in chosen.items()
    }
    flags = {
        f"passes_{name}": ExpressionWrapper(condition, output_field=BooleanField())
        for name, condition in conditions.items()
    }
    rows = base
    if len(conditions) > 1:  # a row that fails two filters counts nowhere
        rows = rows.filter(
            reduce(
                operator.or_,
                (
                    reduce(operator.and_, (c for other, c in conditions.items() if other != name))
                    for name in conditions
                ),
            )
        )
    columns = [c for facet in facets for c in (facet.column, facet.label) if c]
    # What each facet groups by: its key, or its value (and label).
    grouping = {
        f.parameter: [f.key] if f.key else [c for c in (f.column, f.label) if c] for f in facets
    }
    inner_columns = [c for f in facets for c in grouping[f.parameter]]
    inner = rows.annotate(**flags).values(*inner_columns, *flags)
    inner_sql, params = inner.query.sql_with_params()
    quote = connections[base.db].ops.quote_name
    view = quote(base.model._meta.db_table)

    def passing(leave_out: str | None) -> str:
        others = [quote(f"passes_{name}") for name in chosen if name != leave_out]
        return " AND ".join(others) if others else "TRUE"

    grouped = [quote(grouping[f.parameter][0]) for f in facets]
    sets = ", ".join("(" + ", ".join(quote(c) for c in grouping[f.parameter]) + ")" for f in facets)
    # GROUPING(...) is a bit mask, one bit per facet column, set where the row is not grouped
    # by it: facet n's rows have every bit but its own; the total's has them all.
    every = (1 << len(facets)) - 1
    masks = [every ^ (1 << (len(facets) - 1 - n)) for n in range(len(facets))]
    counts = ", ".join(
        f"COUNT(*) FILTER (WHERE {passing(f.parameter)})" + f" AS n{n}"
        for n, f in enumerate(facets)
    )
    chosen_count = " ".join(f"WHEN {mask} THEN n{n}" for n, mask in enumerate(masks))
    # A keyed facet's value and label, read from any public row of its key, for its groups
    # only; the other columns come from the grouping itself.
    lookups, shown = [], {}
    for n, (facet, mask) in enumerate(zip(facets, masks, strict=True)):
        for c in grouping[facet.parameter]:
            shown[c] = f"c.{quote(c)}"
        if facet.key:
            looked = [c for c in (facet.column, facet.label) if c]
            key = quote(facet.key)
            picked = ", ".join(quote(c) for c in looked)
            lookup = f"SELECT {picked} FROM {view} k WHERE k.{key} = c.{key} LIMIT 1"  # noqa: S608
            lookups.append(f"LEFT JOIN LATERAL ({lookup}) l{n} ON c.mask = {mask}")
            shown.update({c: f"l{n}.{quote(c)}" for c in looked})
    all_columns = ", ".join(quote(c) for c in columns)
    selected = ", ".join(f"{shown[c]} AS {quote(c)}" for c in columns)
    order = ", ".join(quote(f.column) for f in facets)
    sql = f"""
        SELECT mask, {all_columns}, n FROM (
            SELECT mask, {all_columns}, n,
                   row_number() OVER (PARTITION BY mask ORDER BY n DESC, {order}) AS place
            FROM (
                SELECT c.mask, {selected}, c.n
                FROM (
                    SELECT mask, {", ".join(quote(c) for c in inner_columns)},
                           CASE mask {chosen_count} ELSE total END AS n
                    FROM (
                        SELECT GROUPING({", ".join(grouped)}) AS mask,
                               {", ".join(quote(c) for c in inner_columns)}, {counts},
                               COUNT(*) FILTER (WHERE {passing(None)}) AS total
                        FROM ({inner_sql}) rows
                        GROUP BY GROUPING SETS ({sets}, ())
                    ) g
                ) c
                {" ".join(lookups)}
                WHERE c.n > 0 OR c.mask = {every}
            ) v
        ) r
        WHERE place <= {MAX_VALUES}
    """  # noqa: S608 - our own column names; the values are parameters
    with connections[base.db].cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    by_mask = {mask: facet for mask, facet in zip(masks, facets, strict=True)}
    position = {c: n + 1 for n, c in enumerate(columns)}
    total = 0
    values: dict[str, list] = {f.parameter: [] for f in facets}
    for row in sorted(found, key=lambda r: (r[0], -r[-1])):
        mask, n = row[0], row[-1]
        if mask == every:
            total = n
            continue
        facet = by_mask[mask]
        values[facet.parameter].append(
            {
                "value": row[position[facet.column]],
                **({"label": row[position[facet.label]]} if facet.label else {}),
                "count": n,
            }
        )
    for facet in facets:
        values[facet.parameter].sort(key=lambda v: (-v["count"], v["value"]))
    return {"count": total, "facets": values}


def _condition(filter_, value) -> Q:
    """The condition a django-filter filter applies for this value, as a Q."""
    return Q(**{f"{filter_.field_name}__{filter_.lookup_expr}": value})
