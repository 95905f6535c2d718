"""Filter counts for a list's sidebar: for each facet, how many results each value would give
with every *other* filter of the request applied (so the sidebar can offer the alternatives
to the value chosen), by count then value, at most MAX_VALUES.

One query for the total and one per facet; a `q` is applied to each (on PostgreSQL its brand
lookup runs once: the search is applied to the base queryset before the facets branch off).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count
from rest_framework.exceptions import ValidationError

from publicapi import search

MAX_VALUES = 50


@dataclass(frozen=True)
class Facet:
    parameter: str  # the list's filter parameter, and the facet's name in the answer
    column: str
    label: str | None = None  # a column shown beside the value (a brand's name)


RUNWAY_FACETS = [
    Facet("brand", "brand_slug", label="brand_name"),
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
