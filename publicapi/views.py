"""The read-only public API. Every query reads the public_* view models only, so nothing that
is not published and live can be served (the views decide; see publicapi/sql.py).

Query counts are fixed, whatever the page or album size: a list is a count, the page, and
the page's covers; a detail is the record (cover joined in) and all its images.

Covers of a list are fetched by id after the page rather than joined into it: PostgreSQL
would otherwise join every public image before sorting and cutting the page (on a deep page
of 40k runways, 0.5 s instead of 0.2 s with 1M images, 1.9 s instead of 0.1 s with 2M; the
covers query itself takes a millisecond; bench/public_api.py).
"""

from django.db.models import F, Prefetch
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from publicapi.filters import BrandFilter, RunwayFilter, StreetSnapFilter
from publicapi.http import PublicAPIView
from publicapi.models import (
    PublicBrand,
    PublicRunway,
    PublicRunwayImage,
    PublicStreetSnap,
    PublicStreetSnapImage,
)
from publicapi.pagination import PublicPagination
from publicapi.schema import CACHE_HEADERS, NOT_MODIFIED, THROTTLED, detail_schema, list_schema
from publicapi.serializers import (
    BrandDetailSerializer,
    BrandSerializer,
    IndexSerializer,
    RunwayDetailSerializer,
    RunwaySerializer,
    StreetSnapDetailSerializer,
    StreetSnapSerializer,
)

# Newest publication first; a record without a publication date (possible only for imported
# legacy rows) goes last rather than first. The id breaks ties so pages never overlap.
NEWEST_FIRST = [F("published_at").desc(nulls_last=True), F("id").desc()]
ALBUM_ORDER = ["sort_order", "id"]
INDEX_LATEST = 12
INDEX_FEATURED_BRANDS = 48


class PublicReadOnlyViewSet(PublicAPIView, viewsets.ReadOnlyModelViewSet):
    pagination_class = PublicPagination
    detail_serializer_class = None

    def get_serializer_class(self):
        if self.action == "retrieve" and self.detail_serializer_class is not None:
            return self.detail_serializer_class
        return self.serializer_class

    def filter_queryset(self, queryset):
        # Filters are list parameters; a detail URL names its record whatever the query says.
        if self.action != "list":
            return queryset
        return super().filter_queryset(queryset)


@extend_schema_view(
    list=list_schema(
        RunwaySerializer,
        "runways",
        "List runways",
        "Published runway shows, newest published first. Filters combine with AND.",
    ),
    retrieve=detail_schema(
        RunwayDetailSerializer,
        "runways",
        "A runway with its images and looks",
        "`images` in album order; `looks` groups the same images by `look_index` "
        "(a look and its detail shots share one), looks in `look_index` order.",
    ),
)
class RunwayViewSet(PublicReadOnlyViewSet):
    serializer_class = RunwaySerializer
    detail_serializer_class = RunwayDetailSerializer
    filterset_class = RunwayFilter
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self):
        runways = PublicRunway.objects.order_by(*NEWEST_FIRST)
        if self.action == "retrieve":
            images = PublicRunwayImage.objects.order_by(*ALBUM_ORDER)
            return runways.select_related("cover").prefetch_related(
                Prefetch("images", queryset=images)
            )
        return runways.prefetch_related("cover")


@extend_schema_view(
    list=list_schema(
        StreetSnapSerializer,
        "street snaps",
        "List street-style albums",
        "Published street-style albums, newest published first. Filters combine with AND.",
    ),
    retrieve=detail_schema(
        StreetSnapDetailSerializer,
        "street snaps",
        "A street-style album with its images and groups",
        "`images` in album order; `groups` has each main image with its details, in album "
        "order. A detail whose main image is no longer shown is shown as a main image.",
    ),
)
class StreetSnapViewSet(PublicReadOnlyViewSet):
    serializer_class = StreetSnapSerializer
    detail_serializer_class = StreetSnapDetailSerializer
    filterset_class = StreetSnapFilter
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self):
        snaps = PublicStreetSnap.objects.order_by(*NEWEST_FIRST)
        if self.action == "retrieve":
            images = PublicStreetSnapImage.objects.order_by(*ALBUM_ORDER)
            return snaps.select_related("cover").prefetch_related(
                Prefetch("images", queryset=images)
            )
        return snaps.prefetch_related("cover")


@extend_schema_view(
    list=list_schema(
        BrandSerializer,
        "brands",
        "List brands",
        "Brands with at least one published runway, by name. `?featured=true` for the "
        "featured ones.",
    ),
    retrieve=detail_schema(
        BrandDetailSerializer,
        "brands",
        "A brand with its published runways",
        "All the brand's published runways, newest first (the same objects as the runway "
        "list; page them with `/api/v1/runways/?brand=<slug>` instead if you prefer).",
        by_id=False,
    ),
)
class BrandViewSet(PublicReadOnlyViewSet):
    serializer_class = BrandSerializer
    detail_serializer_class = BrandDetailSerializer
    filterset_class = BrandFilter
    lookup_field = "slug"
    # Any slug the catalog holds (legacy slugs may carry dots or accents), not only [-\w]. Not
    # NUL, which PostgreSQL refuses in a query (a 500): that path is the catch-all's 404.
    lookup_value_regex = r"[^/\x00]+"

    def get_queryset(self):
        brands = PublicBrand.objects.order_by("name", "id")
        if self.action == "retrieve":
            runways = PublicRunway.objects.order_by(*NEWEST_FIRST).prefetch_related("cover")
            brands = brands.prefetch_related(Prefetch("runways", queryset=runways))
        return brands


class IndexView(PublicAPIView):
    """The home page in one call."""

    @extend_schema(
        tags=["home"],
        summary="The home page",
        description=(
            f"The {INDEX_LATEST} latest runways and street-style albums (newest published "
            f"first) and up to {INDEX_FEATURED_BRANDS} featured brands (by name)."
        ),
        parameters=CACHE_HEADERS,
        responses={200: IndexSerializer, 304: NOT_MODIFIED, 429: THROTTLED},
    )
    def get(self, request):
        runways = PublicRunway.objects.order_by(*NEWEST_FIRST).prefetch_related("cover")
        snaps = PublicStreetSnap.objects.order_by(*NEWEST_FIRST).prefetch_related("cover")
        brands = PublicBrand.objects.filter(is_featured=True).order_by("name", "id")
        index = {
            "latest_runways": runways[:INDEX_LATEST],
            "latest_street_snaps": snaps[:INDEX_LATEST],
            "featured_brands": brands[:INDEX_FEATURED_BRANDS],
        }
        return Response(IndexSerializer(index, context={"request": request}).data)


@extend_schema(exclude=True)
class NotFoundView(PublicAPIView):
    """Any other URL under /api/v1/: the same JSON 404 as a record that is not public."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # throttled like everything else
        raise NotFound()
