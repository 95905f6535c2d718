"""Runways, street snaps and brands, as lists and details show them, and the home page.

Plain read-only serializers with their fields declared (see publicapi.serializers.images).
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from publicapi.grouping import group_details, group_looks
from publicapi.serializers.images import RunwayImageSerializer, StreetSnapImageSerializer

ID_HELP = "The album's id; it never changes."
TITLE_HELP = "As published; may be empty."
DESCRIPTION_HELP = "Plain text; may be empty."
IMAGE_COUNT_HELP = "How many images the album shows."
PUBLISHED_AT_HELP = "When it was first published (UTC). Null only for some imported albums."
COVER_HELP = "The album's cover image, or null."


def text(help_text: str | None = None):
    return serializers.CharField(read_only=True, help_text=help_text)


def integer(help_text: str | None = None):
    return serializers.IntegerField(read_only=True, help_text=help_text)


def timestamp(help_text: str):
    return serializers.DateTimeField(read_only=True, allow_null=True, help_text=help_text)


class BrandRefSerializer(serializers.Serializer):
    slug = serializers.SlugField(
        source="brand_slug", read_only=True, help_text="For /api/v1/brands/<slug>/."
    )
    name = serializers.CharField(source="brand_name", read_only=True)


class RecordSerializer(serializers.Serializer):
    """An album, whatever its kind. Each one shown with an expiry to come (an embargo's end)
    adds it to the context's ``expiries``, when the view gives one: its response is not
    cached past the earliest (publicapi.http). The expiry itself is not shown."""

    def to_representation(self, instance):
        if instance.expires_at is not None and "expiries" in self.context:
            self.context["expiries"].append(instance.expires_at)
        return super().to_representation(instance)


class RunwaySerializer(RecordSerializer):
    """A runway as lists show it."""

    id = integer(ID_HELP)
    brand = BrandRefSerializer(source="*", read_only=True)
    season_code = text("Normalized, e.g. `FW24`, `SS25`.")
    season = text("As the show names it, e.g. `Fall/Winter 2024`.")
    year = integer()
    collection_type = text("e.g. `ready-to-wear`, `couture`, `menswear`, `resort`.")
    title = text(TITLE_HELP)
    description = text(DESCRIPTION_HELP)
    cover = RunwayImageSerializer(read_only=True, allow_null=True, help_text=COVER_HELP)
    image_count = integer(IMAGE_COUNT_HELP)
    published_at = timestamp(PUBLISHED_AT_HELP)


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

    @extend_schema_field(LookSerializer(many=True))
    def get_looks(self, runway) -> list[dict]:
        return [
            {"look_index": look.look_index, "images": [image.id for image in look.images]}
            for look in group_looks(runway.images.all())
        ]


class StreetSnapSerializer(RecordSerializer):
    """A street-style album as lists show it."""

    id = integer(ID_HELP)
    city = text()
    year = integer("0 = unknown (legacy albums only).")
    month = integer("1-12; 0 = unknown.")
    title = text(TITLE_HELP)
    description = text(DESCRIPTION_HELP)
    cover = StreetSnapImageSerializer(read_only=True, allow_null=True, help_text=COVER_HELP)
    image_count = integer(IMAGE_COUNT_HELP)
    published_at = timestamp(PUBLISHED_AT_HELP)


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

    @extend_schema_field(GroupSerializer(many=True))
    def get_groups(self, snap) -> list[dict]:
        return [
            {"main": group.main.id, "details": [detail.id for detail in group.details]}
            for group in group_details(snap.images.all())
        ]


class BrandSerializer(serializers.Serializer):
    """A brand with at least one published runway."""

    slug = serializers.SlugField(
        read_only=True, help_text="The brand's id in URLs and in the runway filter `brand`."
    )
    name = text()
    is_featured = serializers.BooleanField(
        read_only=True, help_text="Chosen by the editors for the home page."
    )
    runway_count = integer("How many published runways it has (at least 1).")
    latest_published_at = timestamp("When its newest runway was published.")


class BrandDetailSerializer(BrandSerializer):
    """A brand with all its published runways, newest first."""

    runways = RunwaySerializer(many=True, read_only=True)


class IndexSerializer(serializers.Serializer):
    latest_runways = RunwaySerializer(many=True, read_only=True)
    latest_street_snaps = StreetSnapSerializer(many=True, read_only=True)
    featured_brands = BrandSerializer(many=True, read_only=True)
