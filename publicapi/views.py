"""The read-only public API. Every query reads the public_* view models only, so nothing that
is not published and live can be served (the views decide; see publicapi/sql.py).

Query counts are fixed, whatever the page or album size: a list is one statement, the page
with its covers and the count (none on a last page, nor for a search on PostgreSQL, nor while
a long list's estimate is kept); a detail is one query, the record left-joined to its
images. Lists and details run statements compiled once (publicapi.queries): under load every
round trip and every compile costs.

A list's covers are joined to the page after it is cut, not to the list before: PostgreSQL
would otherwise join every public image before sorting and cutting the page, which on a deep
page of a large archive costs many times the page itself (the figures are in docs/api.md).
"""

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import cast

from django.conf import settings
from django.db.models import Model, Prefetch, QuerySet
from django_filters.rest_framework import FilterSet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from publicapi import queries
from publicapi.facets import RUNWAY_FACETS, STREET_SNAP_FACETS, Facet, facet_counts
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
from publicapi.schema import (
    CACHE_HEADERS,
    NOT_MODIFIED,
    THROTTLED,
    detail_schema,
    facets_schema,
    list_schema,
    similar_schema,
)
from publicapi.search import NEWEST_FIRST
from publicapi.serializers import (
    BrandDetailSerializer,
    BrandSerializer,
    IndexSerializer,
    RunwayDetailSerializer,
    RunwayFacetsSerializer,
    RunwaySerializer,
    SimilarImagesSerializer,
    StreetSnapDetailSerializer,
    StreetSnapFacetsSerializer,
    StreetSnapSerializer,
)
from publicapi.similar import similar_images

__all__ = ["NEWEST_FIRST"]
MAX_OFFSET = 2**53
INDEX_LATEST = 12
INDEX_FEATURED_BRANDS = 48


@lru_cache(maxsize=256)
def page_links(url: str, number: int, has_next: bool) -> tuple[str | None, str | None]:
    """The previous and next pages' URLs of page `number` at `url`. Kept per URL: the same
    pages are asked for again and again, and DRF's helpers parse, sort and quote the whole
    query string each time (a tenth of a short page's time in Python)."""
    name = PublicPagination.page_query_param
    previous = None
    if number > 1:
        previous = (
            remove_query_param(url, name)
            if number == 2
            else replace_query_param(url, name, number - 1)
        )
    return previous, replace_query_param(url, name, number + 1) if has_next else None


class PublicReadOnlyViewSet(PublicAPIView, viewsets.ReadOnlyModelViewSet):
    pagination_class = PublicPagination
    detail_serializer_class: type[serializers.BaseSerializer] | None = None
    filterset_class: type[FilterSet]  # django-filter reads it (DjangoFilterBackend)
    facets: list[Facet] = []

    def get_serializer_class(self):
        if self.action == "retrieve" and self.detail_serializer_class is not None:
            return self.detail_serializer_class
        return self.serializer_class

    def filter_queryset(self, queryset):
        # Filters are list parameters; a detail URL names its record whatever the query says.
        if self.action != "list":
            return queryset
        return super().filter_queryset(queryset)


class PublicRecordViewSet(PublicReadOnlyViewSet):
    """Runways and street snaps: lists and details through publicapi.queries (statements
    compiled once, rows without model instances), the same JSON as the serializers give."""

    lookup_value_regex = r"[0-9]+"
    serializer_class: type[RunwaySerializer] | type[StreetSnapSerializer]

    def get_queryset(self):
        return self.serializer_class.table.model._default_manager.order_by(*NEWEST_FIRST)

    def list(self, request, *args, **kwargs):
        pagination = cast(PublicPagination, self.paginator)  # the pagination_class
        number = pagination.get_page_number(request, None)
        size = pagination.get_page_size(request)
        filtered = None
        if self.names_a_filter(request.query_params):
            filtered = lambda: self.filter_queryset(self.get_queryset())  # noqa: E731
        data = self.page_data(request, number, size, filtered, self.rendered)
        if data is None:
            raise NotFound()
        return Response(data)

    def retrieve(self, request, *args, **kwargs):
        record = self.record(self.kwargs[self.lookup_field])
        if record is None:
            raise NotFound()
        return Response(self.rendered(record))

    # The classmethods below are the whole of a list and a detail for this view and for the
    # lean path (publicapi.lean), which serves the common requests without a view instance.

    @classmethod
    def names_a_filter(cls, query) -> bool:
        """Whether the query names a filter (anything else in it is ignored)."""
        return any(name in query for name in cls.filterset_class.base_filters)

    @classmethod
    def page_data(
        cls, request, number: int, size: int, filtered: Callable[[], QuerySet] | None, render
    ) -> dict | None:
        """A list page's JSON (`filtered` gives the filtered queryset, after the page is
        known to be within reach; None: the whole list), its records rendered by
        `render(records, many=True)`; None if there is no such page."""
        offset = (number - 1) * size
        if offset > MAX_OFFSET:  # past any list (and past what SQL takes as an offset)
            return None
        model = cls.serializer_class.table.model
        queryset = None if filtered is None else filtered()
        page = queries.page(model, queryset, offset=offset, size=size)
        if page is None:
            return None
        previous, next_ = page_links(request.build_absolute_uri(), number, page.has_next)
        return {
            "count": page.count,
            "next": next_,
            "previous": previous,
            "results": render(page.records, many=True),
        }

    @classmethod
    def record(cls, pk: str):
        """The public record of id `pk` (digits) with its images, or None."""
        if len(pk) > 18:  # beyond any id (and a bigint: SQLite's driver would overflow)
            return None
        return queries.detail(cls.serializer_class.table.model, int(pk))

    @staticmethod
    def fast_rendered(serializer_class, instance, request, *, many: bool = False):
        """The serializer's table rendered directly: no serializer objects per request (their
        construction was a tenth of a list request's Python)."""
        render = serializer_class.table.render
        if many:
            return [render(record, request) for record in instance]
        return render(instance, request)

    def rendered(self, instance, *, many: bool = False):
        """The JSON of a record or a page of them: fast_rendered, or DRF's serializer when
        TableSerializer.fast is off."""
        serializer_class = self.get_serializer_class()
        if not serializer_class.fast:
            return self.get_serializer(instance, many=many).data
        return self.fast_rendered(serializer_class, instance, self.request, many=many)

    def facet_response(self, request):
        filterset = self.filterset_class(
            request.query_params, queryset=self.get_queryset(), request=request
        )
        return Response(facet_counts(filterset, self.facets))


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
        "`images` in album order; `looks` groups them by `look_index` (a look and its detail "
        "shots share one), looks in `look_index` order, each naming its images by `id`.",
    ),
)
class RunwayViewSet(PublicRecordViewSet):
    cache_kind = "runway"
    serializer_class = RunwaySerializer
    detail_serializer_class = RunwayDetailSerializer
    filterset_class = RunwayFilter
    facets = RUNWAY_FACETS

    @facets_schema(
        RunwayFacetsSerializer,
        "runways",
        "Filter counts for the runway list",
        "`brand` (with its name as `label`), `season_code`, `year`, `collection_type`.",
    )
    @action(detail=False, url_path="facets")
    def list_facets(self, request):
        return self.facet_response(request)


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
        "`images` in album order; `groups` names each main image and its details by `id`, in "
        "album order. A detail whose main image is no longer shown is shown as a main image.",
    ),
)
class StreetSnapViewSet(PublicRecordViewSet):
    cache_kind = "street"
    serializer_class = StreetSnapSerializer
    detail_serializer_class = StreetSnapDetailSerializer
    filterset_class = StreetSnapFilter
    facets = STREET_SNAP_FACETS

    @facets_schema(
        StreetSnapFacetsSerializer,
        "street snaps",
        "Filter counts for the street-style list",
        "`city`, `year`, `month`.",
    )
    @action(detail=False, url_path="facets")
    def list_facets(self, request):
        return self.facet_response(request)


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
    cache_kind = "brand"
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

    cache_kind = "index"

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


class SimilarImagesView(PublicAPIView):
    """Public images of other albums, of either kind, that look like this one."""

    kind = "runway"
    cache_kind = "similar"

    def get(self, request, pk: str):
        # More digits than any id: not public (and int() refuses past 4300 digits).
        image_id = int(pk) if len(pk) <= 19 else 0
        matches = similar_images(
            self.kind, image_id, max_distance=settings.PUBLIC_SIMILAR_MAX_DISTANCE
        )
        if matches is None:
            raise NotFound()
        images: dict[str, Mapping[int, Model]] = {
            "runway": PublicRunwayImage.objects.in_bulk(
                [m.image_id for m in matches if m.kind == "runway"]
            ),
            "street": PublicStreetSnapImage.objects.in_bulk(
                [m.image_id for m in matches if m.kind == "street"]
            ),
        }
        results = [
            {
                "kind": m.kind,
                "record_id": m.record_id,
                "image": images[m.kind][m.image_id],
                "distance": m.distance,
            }
            for m in matches
            # Unpublished between the two reads: left out rather than shown half.
            if m.image_id in images[m.kind]
        ]
        context = {"request": request}
        return Response(SimilarImagesSerializer({"results": results}, context=context).data)


@similar_schema("runway images", "Runway images")
class RunwayImageSimilarView(SimilarImagesView):
    kind = "runway"


@similar_schema("street snap images", "Street-style images")
class StreetSnapImageSimilarView(SimilarImagesView):
    kind = "street"


@extend_schema(exclude=True)
class NotFoundView(PublicAPIView):
    """Any other URL under /api/v1/: the same JSON 404 as a record that is not public."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # throttled like everything else
        raise NotFound()
