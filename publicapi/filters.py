"""Query filters of the list endpoints (django-filter).

A value that does not parse, is out of range, or is empty (`?year=`) is a 400 naming the
parameter: leave a parameter out to not filter by it. The schema states the same types and
bounds (extend_schema_field), so the docs and schemathesis know exactly what is accepted.
"""

from django import forms
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field

from publicapi import search
from publicapi.models import PublicBrand, PublicRunway, PublicStreetSnap

EMPTY_MESSAGE = "Give a value, or leave the parameter out."
ONCE_MESSAGE = "Give this parameter once."


def given_twice(query_params, names) -> dict[str, list[str]]:
    """The parameters among ``names`` the query gives more than once: each takes one value,
    and reading only the last (``?year=abc&year=2020``) would answer a query with a bad value
    as if it had none."""
    return {name: [ONCE_MESSAGE] for name in names if len(query_params.getlist(name)) > 1}


class RequireValue(forms.Field):
    """A form field mixin: present but empty is an error (absent is fine: no filter)."""

    def to_python(self, value):
        if value == "":
            raise forms.ValidationError(EMPTY_MESSAGE, code="empty")
        return super().to_python(value)


class IntegerValueField(RequireValue, forms.IntegerField):
    pass


class TextValueField(RequireValue, forms.CharField):
    # Kept as sent (no stripping): a filter compares whole values. Django's CharField already
    # refuses NUL characters, which PostgreSQL could not take in a query.
    def __init__(self, **kwargs):
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)


class BooleanValueField(RequireValue, forms.Field):
    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        text = str(value).lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise forms.ValidationError("Enter true or false.", code="invalid")


class IntegerFilter(filters.Filter):
    field_class = IntegerValueField


class TextFilter(filters.Filter):
    field_class = TextValueField


class BooleanFilter(filters.Filter):
    # Not django-filter's BooleanFilter: its widget turns any unknown value into "no filter".
    field_class = BooleanValueField


def integer(name: str, *, minimum: int, maximum: int, description: str):
    # Bounded, so a huge value is a 400 rather than an out-of-range integer in SQL.
    schema = {"type": "integer", "minimum": minimum, "maximum": maximum}
    return extend_schema_field({**schema, "description": description})(
        IntegerFilter(field_name=name, min_value=minimum, max_value=maximum)
    )


def text(name: str, description: str, *, lookup_expr: str = "iexact"):
    schema = {"type": "string", "minLength": 1, "pattern": "^[^\\x00]*$"}
    return extend_schema_field({**schema, "description": description})(
        TextFilter(field_name=name, lookup_expr=lookup_expr)
    )


def boolean(name: str, description: str):
    return extend_schema_field({"type": "boolean", "description": description})(
        BooleanFilter(field_name=name)
    )


class SearchField(forms.CharField):
    # Empty (or only punctuation) is no filter; over MAX_QUERY_LENGTH characters is a 400.
    def __init__(self, **kwargs):
        kwargs.update(required=False, max_length=search.MAX_QUERY_LENGTH)
        super().__init__(**kwargs)


class SearchFilter(filters.Filter):
    field_class = SearchField


def words(search_function, description: str):
    """`?q=`: filters by publicapi.search and orders by relevance (newest first on a tie).
    `match` is the search without the ranking (facets count every match)."""

    def filter_q(queryset, name, value):
        if not search.parse(value):
            return queryset  # only punctuation: no search, as for an empty q
        return search.by_relevance(queryset, search_function(queryset, value))

    schema = {
        "type": "string",
        "maxLength": search.MAX_QUERY_LENGTH,
        "pattern": "^[^\\x00]*$",
        "description": description,
    }
    search_filter = SearchFilter(method=filter_q)
    search_filter.match = search_function
    return extend_schema_field(schema)(search_filter)


class SearchableFilterSet(filters.FilterSet):
    """`q` applied last, so the matches it ranks are among the rows every other filter
    leaves (a filter reaches a broad query's older matches)."""

    def filter_queryset(self, queryset):
        data = self.form.cleaned_data
        for name, value in data.items():
            if name != "q":
                queryset = self.filters[name].filter(queryset, value)
        return self.filters["q"].filter(queryset, data.get("q"))


SEARCH_RULES = (
    "Words in any order, any case, accents optional; the last word may be the start of a "
    "word (`acme cout` finds Acme couture). Results by relevance, then newest published. "
    f"At most {search.MAX_QUERY_LENGTH} characters; empty is no search. A search ranks its "
    f"{search.MAX_RANKED} newest matches (more words or a filter reach older ones)."
)


class RunwayFilter(SearchableFilterSet):
    q = words(
        search.runways,
        "Search brand names and aliases, title, season, season code, collection type, year "
        f"and description. {SEARCH_RULES}",
    )
    brand = text("brand_slug", "Brand slug, e.g. `acme`.", lookup_expr="exact")
    season_code = text("season_code", "Season code, e.g. `FW24` (any case).")
    year = integer("year", minimum=0, maximum=9999, description="Year of the season.")
    collection_type = text(
        "collection_type", "Collection type, e.g. `ready-to-wear`, `couture` (any case)."
    )

    class Meta:
        model = PublicRunway
        fields = ["q", "brand", "season_code", "year", "collection_type"]


class StreetSnapFilter(SearchableFilterSet):
    q = words(search.street_snaps, f"Search city, title and description. {SEARCH_RULES}")
    city = text("city", "City, e.g. `Copenhagen` (any case).")
    year = integer(
        "year", minimum=0, maximum=9999, description="Year; 0 = unknown (legacy albums only)."
    )
    month = integer("month", minimum=0, maximum=12, description="1-12; 0 = unknown.")

    class Meta:
        model = PublicStreetSnap
        fields = ["q", "city", "year", "month"]


class BrandFilter(filters.FilterSet):
    featured = boolean("is_featured", "`true`: only featured brands; `false`: only the others.")

    class Meta:
        model = PublicBrand
        fields = ["featured"]
