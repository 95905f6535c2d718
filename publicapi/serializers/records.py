"""Runways, street snaps and brands, as lists and details show them, and the home page."""

import datetime

from django.utils import timezone
from rest_framework import serializers

from publicapi.grouping import group_details, group_looks
from publicapi.models import PublicBrand, PublicRunway, PublicStreetSnap
from publicapi.serializers.images import RunwayImageSerializer, StreetSnapImageSerializer
from publicapi.serializers.table import Column, Computed, Table, TableSerializer

_DATETIME = serializers.DateTimeField()
_ZERO = datetime.timedelta(0)


def datetime_text(value, request=None) -> str | None:
    """As DRF's DateTimeField renders it (ISO 8601, UTC as Z). The database gives UTC, so its
    conversion to the current time zone (UTC) is skipped when there is nothing to convert."""
    if value is None:
        return None
    if value.utcoffset() == _ZERO and _current_zone_is_utc(request):
        return value.isoformat().replace("+00:00", "Z")
    return _DATETIME.to_representation(value)


def _current_zone_is_utc(request) -> bool:
    # Looked up once per request, not per record: the current zone is a context-local lookup,
    # half of a list record's rendering time (bench/public_api.py's profile).
    if request is None:
        return timezone.get_current_timezone_name() == "UTC"
    utc = getattr(request, "_public_zone_is_utc", None)
    if utc is None:
        utc = request._public_zone_is_utc = timezone.get_current_timezone_name() == "UTC"
    return utc


def album_images(record) -> list:
    """A record's images in album order: the list publicapi.queries reads, or what
    prefetch_related left on a model instance."""
    images = record.images
    return images if isinstance(images, list) else list(images.all())


def published_at(record, request) -> str | None:
    value = record.published_at
    # Every row of a page from PostgreSQL, once the first has looked up the current zone:
    # datetime_text's answer without its calls (a list page renders one per record).
    if (
        value is not None
        and value.tzinfo is datetime.UTC
        and getattr(request, "_public_zone_is_utc", False)
    ):
        return value.isoformat().replace("+00:00", "Z")
    return datetime_text(value, request)


def album(*own: Column, image: type[TableSerializer]) -> list[Column]:
    """The columns of an album of either kind, its own columns after its id."""
    return [
        Column("id", "The album's id; it never changes."),
        *own,
        Column("title", "As published; may be empty."),
        Column("description", "Plain text; may be empty."),
        Column(
            "cover",
            field=image(
                read_only=True, allow_null=True, help_text="The album's cover image, or null."
            ),
        ),
        Column("image_count", "How many images the album shows."),
        Column(
            "published_at",
            "When it was first published (UTC). Null only for some imported albums.",
            render=published_at,
        ),
    ]


class BrandRefSerializer(serializers.Serializer):
    slug = serializers.SlugField(
        source="brand_slug", read_only=True, help_text="For /api/v1/brands/<slug>/."
    )
    name = serializers.CharField(source="brand_name", read_only=True)


RUNWAY = Table(
    PublicRunway,
    *album(
        Column(
            "brand",
            field=BrandRefSerializer(source="*", read_only=True),
            render=lambda runway, request: {"slug": runway.brand_slug, "name": runway.brand_name},
        ),
        Column("season_code", "Normalized, e.g. `FW24`, `SS25`."),
        Column("season", "As the show names it, e.g. `Fall/Winter 2024`."),
        Column("year"),
        Column("collection_type", "e.g. `ready-to-wear`, `couture`, `menswear`, `resort`."),
        image=RunwayImageSerializer,
    ),
)


class RunwaySerializer(TableSerializer):
    """A runway as lists show it."""

    table = RUNWAY


class LookSerializer(serializers.Serializer):
    look_index = serializers.IntegerField(read_only=True)
    image_ids = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="The look's images by `id` (in `images`): the look, then its detail shots, "
        "in album order.",
    )


def looks(runway, request) -> list[dict]:
    """The album's looks, each naming its images by id (the detail's `images` holds them)."""
    return [
        {"look_index": look.look_index, "image_ids": [image.id for image in look.images]}
        for look in group_looks(album_images(runway))
    ]


class RunwayDetailSerializer(TableSerializer):
    """A runway with its images in album order, and the same images grouped into looks."""

    table = RUNWAY.extended(
        Column("images", field=RunwayImageSerializer(many=True, read_only=True)),
        Column("looks", field=Computed(looks, LookSerializer(many=True))),
    )


STREET_SNAP = Table(
    PublicStreetSnap,
    *album(
        Column("city"),
        Column("year", "0 = unknown (legacy albums only)."),
        Column("month", "1-12; 0 = unknown."),
        image=StreetSnapImageSerializer,
    ),
)


class StreetSnapSerializer(TableSerializer):
    """A street-style album as lists show it."""

    table = STREET_SNAP


class GroupSerializer(serializers.Serializer):
    main_id = serializers.IntegerField(
        read_only=True, help_text="The main image's `id` (in `images`)."
    )
    detail_ids = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="Its close-ups by `id` (in `images`), in album order.",
    )


def groups(snap, request) -> list[dict]:
    """The album's main images with their details, by id (the detail's `images` holds them)."""
    return [
        {"main_id": group.main.id, "detail_ids": [detail.id for detail in group.details]}
        for group in group_details(album_images(snap))
    ]


class StreetSnapDetailSerializer(TableSerializer):
    """An album with its images in album order, and the same images grouped main -> details."""

    table = STREET_SNAP.extended(
        Column("images", field=StreetSnapImageSerializer(many=True, read_only=True)),
        Column("groups", field=Computed(groups, GroupSerializer(many=True))),
    )


BRAND = Table(
    PublicBrand,
    Column("slug", "The brand's id in URLs and in the runway filter `brand`."),
    Column("name"),
    Column("is_featured", "Chosen by the editors for the home page."),
    Column("runway_count", "How many published runways it has (at least 1)."),
    Column(
        "latest_published_at",
        "When its newest runway was published.",
        render=lambda brand, request: datetime_text(brand.latest_published_at, request),
    ),
)


class BrandSerializer(TableSerializer):
    """A brand with at least one published runway."""

    table = BRAND


class BrandDetailSerializer(TableSerializer):
    """A brand with all its published runways, newest first."""

    table = BRAND.extended(Column("runways", field=RunwaySerializer(many=True, read_only=True)))


class IndexSerializer(serializers.Serializer):
    latest_runways = RunwaySerializer(many=True, read_only=True)
    latest_street_snaps = StreetSnapSerializer(many=True, read_only=True)
    featured_brands = BrandSerializer(many=True, read_only=True)
