"""Runways, street snaps and brands, as lists and details show them, and the home page."""

import datetime

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from publicapi.grouping import group_details, group_looks
from publicapi.models import PublicBrand, PublicRunway, PublicStreetSnap
from publicapi.serializers.images import RunwayImageSerializer, StreetSnapImageSerializer
from publicapi.serializers.table import DirectRendering, described

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


RECORD_TEXTS = described(
    id="The album's id; it never changes.",
    title="As published; may be empty.",
    description="Plain text; may be empty.",
    image_count="How many images the album shows.",
    published_at="When it was first published (UTC). Null only for some imported albums.",
)


class BrandRefSerializer(serializers.Serializer):
    slug = serializers.SlugField(
        source="brand_slug", read_only=True, help_text="For /api/v1/brands/<slug>/."
    )
    name = serializers.CharField(source="brand_name", read_only=True)


RECORD_FIELDS = ["title", "description", "cover", "image_count", "published_at"]


class RunwaySerializer(DirectRendering, serializers.ModelSerializer):
    """A runway as lists show it."""

    @staticmethod
    def render(runway, request, rendered: dict | None = None) -> dict:
        cover = runway.cover
        if cover is not None:
            cover = (rendered or {}).get(cover.id) or RunwayImageSerializer.render(cover, request)
        return {
            "id": runway.id,
            "brand": {"slug": runway.brand_slug, "name": runway.brand_name},
            "season_code": runway.season_code,
            "season": runway.season,
            "year": runway.year,
            "collection_type": runway.collection_type,
            "title": runway.title,
            "description": runway.description,
            "cover": cover,
            "image_count": runway.image_count,
            "published_at": datetime_text(runway.published_at, request),
        }

    brand = BrandRefSerializer(source="*", read_only=True)
    cover = RunwayImageSerializer(
        read_only=True, allow_null=True, help_text="The album's cover image, or null."
    )

    class Meta:
        model = PublicRunway
        fields = [
            "id",
            "brand",
            "season_code",
            "season",
            "year",
            "collection_type",
            *RECORD_FIELDS,
        ]
        read_only_fields = fields
        extra_kwargs = {
            **RECORD_TEXTS,
            **described(
                season_code="Normalized, e.g. `FW24`, `SS25`.",
                season="As the show names it, e.g. `Fall/Winter 2024`.",
                collection_type="e.g. `ready-to-wear`, `couture`, `menswear`, `resort`.",
            ),
        }


class LookSerializer(serializers.Serializer):
    look_index = serializers.IntegerField(read_only=True)
    image_ids = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="The look's images by `id` (in `images`): the look, then its detail shots, "
        "in album order.",
    )


def looks(images) -> list[dict]:
    """The album's looks, each naming its images by id (the detail's `images` holds them)."""
    return [
        {"look_index": look.look_index, "image_ids": [image.id for image in look.images]}
        for look in group_looks(images)
    ]


class RunwayDetailSerializer(RunwaySerializer):
    """A runway with its images in album order, and the same images grouped into looks."""

    images = RunwayImageSerializer(many=True, read_only=True)
    looks = serializers.SerializerMethodField()

    class Meta(RunwaySerializer.Meta):
        fields = [*RunwaySerializer.Meta.fields, "images", "looks"]
        read_only_fields = fields

    @staticmethod
    def render(runway, request) -> dict:  # type: ignore[override]  # no list-rendered images: it renders its own
        images = album_images(runway)
        # Each image rendered once; the cover reuses its dict.
        rendered = {image.id: RunwayImageSerializer.render(image, request) for image in images}
        return {
            **RunwaySerializer.render(runway, request, rendered),
            "images": [rendered[image.id] for image in images],
            "looks": looks(images),
        }

    @extend_schema_field(LookSerializer(many=True))
    def get_looks(self, runway: PublicRunway) -> list[dict]:
        return looks(album_images(runway))


class StreetSnapSerializer(DirectRendering, serializers.ModelSerializer):
    """A street-style album as lists show it."""

    @staticmethod
    def render(snap, request, rendered: dict | None = None) -> dict:
        cover = snap.cover
        if cover is not None:
            cover = (rendered or {}).get(cover.id) or StreetSnapImageSerializer.render(
                cover, request
            )
        return {
            "id": snap.id,
            "city": snap.city,
            "year": snap.year,
            "month": snap.month,
            "title": snap.title,
            "description": snap.description,
            "cover": cover,
            "image_count": snap.image_count,
            "published_at": datetime_text(snap.published_at, request),
        }

    cover = StreetSnapImageSerializer(
        read_only=True, allow_null=True, help_text="The album's cover image, or null."
    )

    class Meta:
        model = PublicStreetSnap
        fields = ["id", "city", "year", "month", *RECORD_FIELDS]
        read_only_fields = fields
        extra_kwargs = {
            **RECORD_TEXTS,
            **described(year="0 = unknown (legacy albums only).", month="1-12; 0 = unknown."),
        }


class GroupSerializer(serializers.Serializer):
    main_id = serializers.IntegerField(
        read_only=True, help_text="The main image's `id` (in `images`)."
    )
    detail_ids = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="Its close-ups by `id` (in `images`), in album order.",
    )


def groups(images) -> list[dict]:
    """The album's main images with their details, by id (the detail's `images` holds them)."""
    return [
        {"main_id": group.main.id, "detail_ids": [detail.id for detail in group.details]}
        for group in group_details(images)
    ]


class StreetSnapDetailSerializer(StreetSnapSerializer):
    """An album with its images in album order, and the same images grouped main -> details."""

    images = StreetSnapImageSerializer(many=True, read_only=True)
    groups = serializers.SerializerMethodField()

    class Meta(StreetSnapSerializer.Meta):
        fields = [*StreetSnapSerializer.Meta.fields, "images", "groups"]
        read_only_fields = fields

    @staticmethod
    def render(snap, request) -> dict:  # type: ignore[override]  # no list-rendered images: it renders its own
        images = album_images(snap)
        rendered = {image.id: StreetSnapImageSerializer.render(image, request) for image in images}
        return {
            **StreetSnapSerializer.render(snap, request, rendered),
            "images": [rendered[image.id] for image in images],
            "groups": groups(images),
        }

    @extend_schema_field(GroupSerializer(many=True))
    def get_groups(self, snap: PublicStreetSnap) -> list[dict]:
        return groups(album_images(snap))


class BrandSerializer(serializers.ModelSerializer):
    class Meta:
        model = PublicBrand
        fields = ["slug", "name", "is_featured", "runway_count", "latest_published_at"]
        read_only_fields = fields
        extra_kwargs = described(
            slug="The brand's id in URLs and in the runway filter `brand`.",
            is_featured="Chosen by the editors for the home page.",
            runway_count="How many published runways it has (at least 1).",
            latest_published_at="When its newest runway was published.",
        )


class BrandDetailSerializer(BrandSerializer):
    """A brand with all its published runways, newest first."""

    runways = RunwaySerializer(many=True, read_only=True)

    class Meta(BrandSerializer.Meta):
        fields = [*BrandSerializer.Meta.fields, "runways"]
        read_only_fields = fields


class IndexSerializer(serializers.Serializer):
    latest_runways = RunwaySerializer(many=True, read_only=True)
    latest_street_snaps = StreetSnapSerializer(many=True, read_only=True)
    featured_brands = BrandSerializer(many=True, read_only=True)
