"""Query filters of the list endpoints (django-filter). A value that does not parse, or is out
of range, is a 400 naming the parameter; the schema states the same types and bounds."""

from django import forms
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field

from publicapi.models import PublicBrand, PublicRunway, PublicStreetSnap


class IntegerFilter(filters.Filter):
    field_class = forms.IntegerField


def bounded_integer(name: str, *, minimum: int, maximum: int, description: str):
    # Bounded, so a huge value is a 400 rather than an out-of-range integer in SQL; the schema
    # says the same, so the docs and schemathesis know the range.
    schema = {"type": "integer", "minimum": minimum, "maximum": maximum}
    return extend_schema_field({**schema, "description": description})(
        IntegerFilter(field_name=name, min_value=minimum, max_value=maximum)
    )


class StrictBooleanField(forms.Field):
    """`true`/`false` (or 1/0); anything else is an error, not "no filter"."""

    def to_python(self, value):
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise forms.ValidationError("Enter true or false.", code="invalid")


class StrictBooleanFilter(filters.Filter):
    # Not django-filter's BooleanFilter: its widget turns any unknown value into "no filter".
    field_class = StrictBooleanField


def text_filter(name: str, description: str, lookup_expr: str = "iexact"):
    return filters.CharFilter(field_name=name, lookup_expr=lookup_expr, help_text=description)


class RunwayFilter(filters.FilterSet):
    brand = text_filter("brand_slug", "Brand slug, e.g. `acme`.", lookup_expr="exact")
    season_code = text_filter("season_code", "Season code, e.g. `FW24` (any case).")
    year = bounded_integer("year", minimum=0, maximum=9999, description="Year of the season.")
    collection_type = text_filter(
        "collection_type", "Collection type, e.g. `ready-to-wear`, `couture` (any case)."
    )

    class Meta:
        model = PublicRunway
        fields = ["brand", "season_code", "year", "collection_type"]


class StreetSnapFilter(filters.FilterSet):
    city = text_filter("city", "City, e.g. `Copenhagen` (any case).")
    year = bounded_integer(
        "year", minimum=0, maximum=9999, description="Year; 0 = unknown (legacy albums only)."
    )
    month = bounded_integer("month", minimum=0, maximum=12, description="1-12; 0 = unknown.")

    class Meta:
        model = PublicStreetSnap
        fields = ["city", "year", "month"]


class BrandFilter(filters.FilterSet):
    featured = extend_schema_field(
        {"type": "boolean", "description": "Only featured brands (`true`) or only the others."}
    )(StrictBooleanFilter(field_name="is_featured"))

    class Meta:
        model = PublicBrand
        fields = ["featured"]
