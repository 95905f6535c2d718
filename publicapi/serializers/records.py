"""Runways, street snaps and brands, as lists and details show them, and the home page."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from publicapi.grouping import group_details, group_looks
from publicapi.models import PublicBrand, PublicRunway, PublicStreetSnap
from publicapi.serializers.images import RunwayImageSerializer, StreetSnapImageSerializer

ALBUM_HELP = {
    "id": {"help_text": "The album's id; it never changes."},
    "title": {"help_text": "As published; may be empty."},
    "description": {"help_text": "Plain text; may be empty."},
    "image_count": {"help_text": "How many images the album shows."},
    "published_at": {
        "help_text": "When it was first published (UTC). Null only for some imported albums."
    },
}
COVER_HELP = "The album's cover image, or null."


class BrandRefSerializer(serializers.Serializer):
    slug = serializers.SlugField(
        source="brand_slug", read_only=True, help_text="For /api/v1/brands/<slug>/."
    )
    name = serializers.CharField(source="brand_name", read_only=True)


class RunwaySerializer(serializers.ModelSerializer):
    """A runway as lists show it."""

    brand = BrandRefSerializer(source="*", read_only=True)
    cover = RunwayImageSerializer(read_only=True, allow_null=True, help_text=COVER_HELP)

    class Meta:
        model = PublicRunway
        fields = [
            "id",
            "brand",
            "season_code",
            "season",
            "year",
            "collection_type",
            "title",
            "description",
            "cover",
            "image_count",
            "published_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            **ALBUM_HELP,
            "season_code": {"help_text": "Normalized, e.g. `FW24`, `SS25`."},
            "season": {"help_text": "As the show names it, e.g. `Fall/Winter 2024`."},
            "collection_type": {
                "help_text": "e.g. `ready-to-wear`, `couture`, `menswear`, `resort`."
            },
        }


class LookSerializer(serializers.Serializer):
    look_index = serializers.IntegerField(read_only=True)
    images = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="The look's images by `id` (in the detail's `images`): the look, then its "
        "detail shots, in album order.",
    )


class RunwayDetailSerializer(RunwaySerializer):
    """A runway with its images in album order, and the same images grouped into looks."""

    images = RunwayImageSerializer(many=True, read_only=True)
    looks = serializers.SerializerMethodField()

    class Meta(RunwaySerializer.Meta):
        fields = [*RunwaySerializer.Meta.fields, "images", "looks"]
        read_only_fields = fields

    @extend_schema_field(LookSerializer(many=True))
    def get_looks(self, runway) -> list[dict]:
        return [
            {"look_index": look.look_index, "images": [image.id for image in look.images]}
            for look in group_looks(runway.images.all())
        ]


class StreetSnapSerializer(serializers.ModelSerializer):
    """A street-style album as lists show it."""

    cover = StreetSnapImageSerializer(read_only=True, allow_null=True, help_text=COVER_HELP)

    class Meta:
        model = PublicStreetSnap
        fields = [
            "id",
            "city",
            "year",
            "month",
            "title",
            "description",
            "cover",
            "image_count",
            "published_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            **ALBUM_HELP,
            "year": {"help_text": "0 = unknown (legacy albums only)."},
            "month": {"help_text": "1-12; 0 = unknown."},
        }


class GroupSerializer(serializers.Serializer):
    main = serializers.IntegerField(
        read_only=True, help_text="The main image's `id` (in the detail's `images`)."
    )
    details = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="Its close-ups by `id` (in the detail's `images`), in album order.",
    )


class StreetSnapDetailSerializer(StreetSnapSerializer):
    """An album with its images in album order, and the same images grouped main -> details."""

    images = StreetSnapImageSerializer(many=True, read_only=True)
    groups = serializers.SerializerMethodField()

    class Meta(StreetSnapSerializer.Meta):
        fields = [*StreetSnapSerializer.Meta.fields, "images", "groups"]
        read_only_fields = fields

    @extend_schema_field(GroupSerializer(many=True))
    def get_groups(self, snap) -> list[dict]:
        return [
            {"main": group.main.id, "details": [detail.id for detail in group.details]}
            for group in group_details(snap.images.all())
        ]


class BrandSerializer(serializers.ModelSerializer):
    """A brand with at least one published runway."""

    class Meta:
        model = PublicBrand
        fields = ["slug", "name", "is_featured", "runway_count", "latest_published_at"]
        read_only_fields = fields
        extra_kwargs = {
            "slug": {"help_text": "The brand's id in URLs and in the runway filter `brand`."},
            "is_featured": {"help_text": "Chosen by the editors for the home page."},
            "runway_count": {"help_text": "How many published runways it has (at least 1)."},
            "latest_published_at": {"help_text": "When its newest runway was published."},
        }


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
