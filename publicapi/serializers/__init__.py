"""The JSON of the public API (docs/api.md). Read-only: every serializer here
only renders rows of the public_* views.

The record and image serializers declare their fields for the schema (drf-spectacular reads
them) and render with a to_representation of their own that builds the dict directly: DRF's
generic path deep-copies every declared field per serializer and walks them per object, which
was the largest share of a list request's time in Python (bench/public_api.py). The output is
the same (tests/publicapi/test_serializers.py renders both ways and compares).

One module per part: image URLs (urls), images, records, facets, similar images, errors; what
the record and image serializers share is in table.
"""

from publicapi.serializers.errors import ErrorSerializer
from publicapi.serializers.facets import RunwayFacetsSerializer, StreetSnapFacetsSerializer
from publicapi.serializers.images import (
    ImageSerializer,
    RunwayImageSerializer,
    StreetSnapImageSerializer,
)
from publicapi.serializers.records import (
    BrandDetailSerializer,
    BrandSerializer,
    IndexSerializer,
    RunwayDetailSerializer,
    RunwaySerializer,
    StreetSnapDetailSerializer,
    StreetSnapSerializer,
)
from publicapi.serializers.similar import SimilarImagesSerializer
from publicapi.serializers.table import DirectRendering
from publicapi.serializers.urls import absolute_url, storage_url

__all__ = [
    "BrandDetailSerializer",
    "BrandSerializer",
    "DirectRendering",
    "ErrorSerializer",
    "ImageSerializer",
    "IndexSerializer",
    "RunwayDetailSerializer",
    "RunwayFacetsSerializer",
    "RunwaySerializer",
    "RunwayImageSerializer",
    "SimilarImagesSerializer",
    "StreetSnapDetailSerializer",
    "StreetSnapFacetsSerializer",
    "StreetSnapImageSerializer",
    "StreetSnapSerializer",
    "absolute_url",
    "storage_url",
]
