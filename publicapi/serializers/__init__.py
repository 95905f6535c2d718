"""The JSON of the public API (docs/api.md). Read-only: every serializer here only renders
rows of the public_* views.

One module per part: image URLs (urls), images, records (runways, street snaps, brands, the
home page), facets, similar images and errors. Images and records are TableSerializers: each
declares its fields once, in a table (publicapi/serializers/table.py) that makes both the
serializer drf-spectacular reads and the direct rendering the views use.
"""

from publicapi.serializers.errors import ErrorSerializer
from publicapi.serializers.facets import RunwayFacetsSerializer, StreetSnapFacetsSerializer
from publicapi.serializers.images import RunwayImageSerializer, StreetSnapImageSerializer
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
from publicapi.serializers.table import TableSerializer
from publicapi.serializers.urls import absolute_url, storage_url

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
    "TableSerializer",
    "absolute_url",
    "storage_url",
]
