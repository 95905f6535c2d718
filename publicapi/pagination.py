import json

from django.db import connections
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from publicapi.filters import given_twice

MAX_PAGE_SIZE = 100
# `count` is exact up to this many results; beyond, PostgreSQL's estimate (docs/api.md).
EXACT_COUNT_LIMIT = 1000
# Past any list, and past what SQL takes as an offset.
MAX_OFFSET = 2**53
WHOLE_NUMBER = "Enter a whole number of 1 or more."


def positive_int(value: str) -> int | None:
    """ASCII digits only ("+1", " 1" and "1.0" are refused), at least 1; None otherwise.
    Beyond 18 digits a number is simply "very large": int() would refuse over 4300 digits,
    and no page or page size comes anywhere near."""
    if value.isascii() and value.isdigit():
        digits = value.lstrip("0")
        if digits:
            return int(digits) if len(digits) <= 18 else 10**18
    return None


def capped_count(queryset, *, seen: int) -> int:
    """How many rows `queryset` has: exact up to EXACT_COUNT_LIMIT, beyond it PostgreSQL's
    estimate (counting a long list exactly reads all of it), never below `seen`, the rows the
    pages have shown. SQLite (the embedded mode's small archives) always counts."""
    if connections[queryset.db].vendor != "postgresql":
        return queryset.count()
    counted = queryset.order_by()[: EXACT_COUNT_LIMIT + 1].count()
    if counted <= EXACT_COUNT_LIMIT:
        return counted
    plan = json.loads(queryset.order_by().explain(format="json"))
    return max(int(plan[0]["Plan"]["Plan Rows"]), seen, counted)


class PublicPagination(PageNumberPagination):
    """`page` from 1 and `page_size` up to 100, as the contract says: garbage (or an empty
    value) in either is a 400 naming it, like a bad filter (DRF alone answers 404 to
    `page=abc` and ignores `page_size=abc`); a page past the last one is a 404; a `page_size`
    above the maximum is capped, not refused. A page is read with one row more than it shows,
    so the last page knows the count and needs no count query."""

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    page_query_description = "Page number, from 1. A page past the last one is a 404."
    page_size_query_description = (
        f"Results per page, default {page_size}. Values above {max_page_size} are served as "
        f"{max_page_size}."
    )

    def query_errors(self, request) -> dict[str, list[str]]:
        """The bad `page` and `page_size` values of the request, by name."""
        names = (self.page_query_param, self.page_size_query_param)
        return {
            name: [WHOLE_NUMBER]
            for name in names
            if name in request.query_params and positive_int(request.query_params[name]) is None
        } | given_twice(request.query_params, names)

    def get_page_size(self, request) -> int:
        value = request.query_params.get(self.page_size_query_param)
        return min(value and positive_int(value) or self.page_size, self.max_page_size)

    def paginate_queryset(self, queryset, request, view=None):
        errors = self.query_errors(request)
        if errors:
            raise ValidationError(errors)
        self.request = request
        value = request.query_params.get(self.page_query_param)
        self.number = value and positive_int(value) or 1
        size = self.get_page_size(request)
        offset = (self.number - 1) * size
        if offset > MAX_OFFSET:
            raise NotFound()
        rows = list(queryset[offset : offset + size + 1])
        if not rows and offset:
            raise NotFound()
        self.has_next = len(rows) > size
        page = rows[:size]
        if self.has_next:
            self.count = capped_count(queryset, seen=offset + len(rows))
        else:
            self.count = offset + len(page)
        return page

    def get_paginated_response(self, data):
        return Response(
            {
                "count": self.count,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_next_link(self) -> str | None:
        if not self.has_next or self.request is None:
            return None
        url = self.request.build_absolute_uri()
        return replace_query_param(url, self.page_query_param, self.number + 1)

    def get_previous_link(self) -> str | None:
        if self.number == 1 or self.request is None:
            return None
        url = self.request.build_absolute_uri()
        if self.number == 2:
            return remove_query_param(url, self.page_query_param)
        return replace_query_param(url, self.page_query_param, self.number - 1)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
        return parameters

    def get_paginated_response_schema(self, schema):
        paginated = super().get_paginated_response_schema(schema)
        properties = paginated["properties"]
        properties["count"].update(
            description=f"Results on all pages: exact up to {EXACT_COUNT_LIMIT}, an estimate "
            "beyond (never below what the pages have shown).",
            example=57,
        )
        properties["next"].update(
            description="The next page's URL, or null on the last page.",
            example="https://archive.example.com/api/v1/runways/?page=4&page_size=20",
        )
        properties["previous"].update(
            description="The previous page's URL, or null on the first page.",
            example="https://archive.example.com/api/v1/runways/?page=2&page_size=20",
        )
        paginated["required"] = ["count", "next", "previous", "results"]  # always present
        return paginated
