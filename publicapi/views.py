"""The read-only public API. Every query reads the public_* view models only, so nothing that
is not published and live can be served (the views decide; see publicapi/sql.py).

Query counts are fixed, whatever the page or album size: a list page is its rows, their
covers (one query for the page, not a join over the whole list: PostgreSQL would join every
public image before sorting and cutting the page) and, unless it is the last page, the capped
count (publicapi.pagination); a detail is the record, and its images (its cover among them).
"""

from collections.abc import Mapping

from django.conf import settings
from django.db.models import Model, Prefetch
from django_filters import utils as filter_utils
from django_filters.rest_framework import DjangoFilterBackend, FilterSet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from publicapi.facets import RUNWAY_FACETS, STREET_SNAP_FACETS, Facet, facet_counts
from publicapi.filters import BrandFilter, RunwayFilter, StreetSnapFilter, given_twice
from publicapi.http import PublicAPIView
from publicapi.models import (
    PUBLIC_IMAGES,
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
from publicapi.serializers.facets import RunwayFacetsSerializer, StreetSnapFacetsSerializer
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
from publicapi.similar import similar_images

INDEX_LATEST = 12
INDEX_FEATURED_BRANDS = 48
ALBUM_ORDER = ["sort_order", "id"]


class PublicReadOnlyViewSet(PublicAPIView, viewsets.ReadOnlyModelViewSet):
    pagination_class = PublicPagination
    detail_serializer_class: type[serializers.BaseSerializer] | None = None
    filterset_class: type[FilterSet]  # django-filter reads it (DjangoFilterBackend)
    facets: list[Facet] = []

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "expiries": self.expiries}

    def get_serializer_class(self):
        if self.action == "retrieve" and self.detail_serializer_class is not None:
            return self.detail_serializer_class
        return self.serializer_class

    def filter_queryset(self, queryset):
        # Filters are list parameters, which list() applies; a detail URL names its record
        # whatever the query says.
        return queryset

    def list(self, request, *args, **kwargs):
        # The filters' errors and the page's in one 400; the filterset made once, and only
        # when the request names a filter (with none, it would validate and filter nothing).
        queryset = self.get_queryset()
        errors = self.paginator.query_errors(request)  # type: ignore[union-attr]
        errors |= given_twice(request.query_params, self.filterset_class.base_filters)
        if not request.query_params.keys().isdisjoint(self.filterset_class.base_filters):
            filterset = DjangoFilterBackend().get_filterset(request, queryset, self)
            if not filterset.is_valid():
                errors = {**filter_utils.translate_validation(filterset.errors).detail, **errors}
            queryset = filterset.qs
        if errors:
            raise ValidationError(errors)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class PublicRecordViewSet(PublicReadOnlyViewSet):
    """Runways and street snaps: a list shows each with its cover, a detail with its images."""

    lookup_value_regex = r"[0-9]+"
    record_model: type[Model]
    image_model: type[Model]

    def get_queryset(self):
        records = self.record_model._default_manager.order_by(*NEWEST_FIRST)
        if self.action == "retrieve":
            images = self.image_model._default_manager.order_by(*ALBUM_ORDER)
            return records.prefetch_related(Prefetch("images", queryset=images))
        if self.action == "list":
            return records.prefetch_related("cover")
        return records

    def get_object(self):
        # More digits than any id (a bigint; SQLite's driver would overflow): not public.
        if len(self.kwargs[self.lookup_field]) > 18:
            raise NotFound()
        record = super().get_object()
        # The view shows a cover only while it is one of the record's live images: taken from
        # them rather than joined again.
        images = record.images.all()
        record.cover = next((image for image in images if image.pk == record.cover_id), None)
        return record

    @action(detail=False, url_path="facets")
    def list_facets(self, request):
        twice = given_twice(request.query_params, self.filterset_class.base_filters)
        if twice:
            raise ValidationError(twice)
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
        "shots share one), looks in `look_index` order, each naming its `images` by `id`.",
    ),
    list_facets=facets_schema(
        RunwayFacetsSerializer,
        "runways",
        "Filter counts for the runway list",
        "`brand` (with its name as `label`), `season_code`, `year`, `collection_type`.",
    ),
)
class RunwayViewSet(PublicRecordViewSet):
    cache_kind = "runway"
    record_model = PublicRunway
    image_model = PublicRunwayImage
    serializer_class = RunwaySerializer
    detail_serializer_class = RunwayDetailSerializer
    filterset_class = RunwayFilter
    facets = RUNWAY_FACETS


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
        "`images` in album order; `groups` names each `main` image and its `details` by `id`, "
        "in album order. A detail whose main image is no longer shown is shown as a main image.",
    ),
    list_facets=facets_schema(
        StreetSnapFacetsSerializer,
        "street snaps",
        "Filter counts for the street-style list",
        "`city`, `year`, `month`.",
    ),
)
class StreetSnapViewSet(PublicRecordViewSet):
    cache_kind = "street"
    record_model = PublicStreetSnap
    image_model = PublicStreetSnapImage
    serializer_class = StreetSnapSerializer
    detail_serializer_class = StreetSnapDetailSerializer
    filterset_class = StreetSnapFilter
    facets = STREET_SNAP_FACETS


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
        context = {"request": request, "expiries": self.expiries}
        return Response(IndexSerializer(index, context=context).data)


class SimilarImagesView(PublicAPIView):
    """Public images of other albums, of either kind, that look like this one."""

    kind: str  # of the image it starts from
    cache_kind = "similar"

    def get(self, request, pk: str):
        # More digits than any id: not public (and int() refuses past 4300 digits).
        image_id = int(pk) if len(pk) <= 19 else 0
        matches = similar_images(
            self.kind, image_id, max_distance=settings.PUBLIC_SIMILAR_MAX_DISTANCE
        )
        if matches is None:
            raise NotFound()
        images: dict[str, Mapping[int, Model]] = {}
        for kind, model in PUBLIC_IMAGES.items():
            # With its album (a join of two views): whether its album expires, in one query.
            albums = model.objects.select_related(model.record_field)
            images[kind] = albums.in_bulk([m.image_id for m in matches if m.kind == kind])
            self.expiries += [
                album.expires_at
                for image in images[kind].values()
                if (album := getattr(image, model.record_field)).expires_at is not None
            ]
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
    kind = PublicRunwayImage.kind


@similar_schema("street snap images", "Street-style images")
class StreetSnapImageSimilarView(SimilarImagesView):
    kind = PublicStreetSnapImage.kind


@extend_schema(exclude=True)
class NotFoundView(PublicAPIView):
    """Any other URL under /api/v1/: the same JSON 404 as a record that is not public."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # throttled like everything else
        raise NotFound()
