from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 100


def positive_int(value: str, name: str) -> int:
    """ASCII digits only ("+1", " 1" and "1.0" are refused), at least 1. Beyond 18 digits a
    number is simply "very large": int() would refuse over 4300 digits, and no page or page
    size comes anywhere near."""
    if value.isascii() and value.isdigit():
        digits = value.lstrip("0")
        if digits:
            return int(digits) if len(digits) <= 18 else 10**18
    raise ValidationError({name: ["Enter a whole number of 1 or more."]})


class PublicPagination(PageNumberPagination):
    """`page` from 1 and `page_size` up to 100, as the contract says.

    DRF on its own answers 404 to `page=abc` and silently serves the default size for
    `page_size=abc`; a client that sends garbage (or an empty value) here gets a 400 naming
    the parameter instead, like a bad filter.
    A page past the last one is a 404 (that page does not exist). A `page_size` above the
    maximum is capped, not refused: asking for "as many as you give" is a fair request.
    """

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    last_page_strings = ()  # `page` is documented as an integer; no "last".

    def get_page_number(self, request, paginator):
        return self.page_number(request.query_params)

    def get_page_size(self, request):
        return self.size(request.query_params)

    # From the query itself (a QueryDict): the lean path (publicapi.lean) has no DRF request.
    def page_number(self, query) -> int:
        value = query.get(self.page_query_param)
        return 1 if value is None else positive_int(value, self.page_query_param)

    def size(self, query) -> int:
        value = query.get(self.page_size_query_param)
        if value is None:
            return self.page_size
        return min(positive_int(value, self.page_size_query_param), self.max_page_size)

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": self.page_query_param,
                "required": False,
                "in": "query",
                "description": "Page number, from 1. A page past the last one is a 404.",
                "schema": {"type": "integer", "minimum": 1},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": (
                    f"Results per page, default {self.page_size}. Values above "
                    f"{self.max_page_size} are served as {self.max_page_size}."
                ),
                "schema": {"type": "integer", "minimum": 1},
            },
        ]

    def get_paginated_response_schema(self, schema):
        paginated = super().get_paginated_response_schema(schema)
        properties = paginated["properties"]
        properties["count"].update(description="Results on all pages.", example=57)
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
