"""The JSON of the public API (docs/api.md). Read-only: every serializer here only renders
rows of the public_* views.

One module per part: images (and their URLs), records (runways, street snaps, brands, the
home page), facets, similar images and errors. Each shape is one serializer, which both
renders the response and describes it in the OpenAPI schema (drf-spectacular).
"""

from publicapi.serializers.errors import ErrorSerializer
from publicapi.serializers.facets import RunwayFacetsSerializer, StreetSnapFacetsSerializer
from publicapi.serializers.images import (
    RunwayImageSerializer,
    StreetSnapImageSerializer,
    absolute_url,
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

__all__ = [
    "BrandDetailSerializer",
    "BrandSerializer",
    "ErrorSerializer",
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
]
