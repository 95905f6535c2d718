"""The JSON of the public API (SPEC.md "External contract"). Read-only: every serializer here
only renders rows of the public_* views."""

from urllib.parse import urlsplit

from django.core.files.storage import default_storage
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from publicapi.grouping import group_details, group_looks
from publicapi.models import (
    PublicBrand,
    PublicRunway,
    PublicRunwayImage,
    PublicStreetSnap,
    PublicStreetSnapImage,
)


@extend_schema_field(OpenApiTypes.URI)
class ImageURLField(serializers.Field):
    """The storage's public URL of an image, always absolute.

    With a bucket the storage gives an absolute URL already (the bucket or its CDN,
    AWS_S3_CUSTOM_DOMAIN). The local media folder gives a path (`/media/...`), which is made
    absolute with the request's scheme and host so a frontend on another origin can use it
    as it is.
    """

    def __init__(self, **kwargs):
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: str) -> str:
        url = default_storage.url(value)
        request = self.context.get("request")
        if request is not None and not urlsplit(url).netloc:
            url = request.build_absolute_uri(url)
        return url


class ImageSerializer(serializers.ModelSerializer):
    url = ImageURLField(source="storage_key")

    class Meta:
        fields = ["id", "url", "width", "height", "mime_type"]
        read_only_fields = fields


class RunwayImageSerializer(ImageSerializer):
    class Meta(ImageSerializer.Meta):
        model = PublicRunwayImage
        fields = [*ImageSerializer.Meta.fields, "look_index"]
        read_only_fields = fields


class StreetSnapImageSerializer(ImageSerializer):
    parent = serializers.IntegerField(
        source="parent_id",
        allow_null=True,
        read_only=True,
        help_text="The id of the main image this detail belongs to; null for a main image.",
    )

    class Meta(ImageSerializer.Meta):
        model = PublicStreetSnapImage
        fields = [*ImageSerializer.Meta.fields, "is_detail", "parent"]
        read_only_fields = fields


class BrandRefSerializer(serializers.Serializer):
    slug = serializers.SlugField(source="brand_slug", read_only=True)
    name = serializers.CharField(source="brand_name", read_only=True)


RECORD_FIELDS = ["title", "description", "cover", "image_count", "published_at"]


class RunwaySerializer(serializers.ModelSerializer):
    """A runway as lists show it."""

    brand = BrandRefSerializer(source="*", read_only=True)
    cover = RunwayImageSerializer(read_only=True, allow_null=True)

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


class LookSerializer(serializers.Serializer):
    look_index = serializers.IntegerField(read_only=True)
    images = RunwayImageSerializer(many=True, read_only=True)


class RunwayDetailSerializer(RunwaySerializer):
    """A runway with its images in album order, and the same images grouped into looks."""

    images = RunwayImageSerializer(many=True, read_only=True)
    looks = serializers.SerializerMethodField()

    class Meta(RunwaySerializer.Meta):
        fields = [*RunwaySerializer.Meta.fields, "images", "looks"]
        read_only_fields = fields

    @extend_schema_field(LookSerializer(many=True))
    def get_looks(self, runway: PublicRunway):
        # images.all() is the prefetched list, already in album order.
        looks = group_looks(list(runway.images.all()))
        return LookSerializer(looks, many=True, context=self.context).data


class StreetSnapSerializer(serializers.ModelSerializer):
    """A street-style album as lists show it."""

    cover = StreetSnapImageSerializer(read_only=True, allow_null=True)

    class Meta:
        model = PublicStreetSnap
        fields = ["id", "city", "year", "month", *RECORD_FIELDS]
        read_only_fields = fields


class GroupSerializer(serializers.Serializer):
    main = StreetSnapImageSerializer(read_only=True)
    details = StreetSnapImageSerializer(many=True, read_only=True)


class StreetSnapDetailSerializer(StreetSnapSerializer):
    """An album with its images in album order, and the same images grouped main -> details."""

    images = StreetSnapImageSerializer(many=True, read_only=True)
    groups = serializers.SerializerMethodField()

    class Meta(StreetSnapSerializer.Meta):
        fields = [*StreetSnapSerializer.Meta.fields, "images", "groups"]
        read_only_fields = fields

    @extend_schema_field(GroupSerializer(many=True))
    def get_groups(self, snap: PublicStreetSnap):
        groups = group_details(list(snap.images.all()))
        return GroupSerializer(groups, many=True, context=self.context).data


class BrandSerializer(serializers.ModelSerializer):
    class Meta:
        model = PublicBrand
        fields = ["slug", "name", "is_featured", "runway_count", "latest_published_at"]
        read_only_fields = fields


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


class ErrorSerializer(serializers.Serializer):
    """Every error response (publicapi.http.public_exception_handler)."""

    status = serializers.IntegerField(help_text="The HTTP status, repeated.")
    code = serializers.CharField(help_text="e.g. not_found, invalid, throttled.")
    detail = serializers.CharField(help_text="A sentence for humans.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="For a 400: each invalid query parameter and its messages. Empty otherwise.",
    )
