"""Image objects: every image of an album, a cover, a similar image."""

from django.core.files.storage import storages
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from publicapi.models import PublicRunwayImage, PublicStreetSnapImage


def absolute_url(key: str, request) -> str:
    """The public store's URL of `key`: a bucket's or its CDN's as it is, the local media
    folder's (a path) made absolute with the request's scheme and host, so that a frontend on
    another origin can use it as it is."""
    url = storages["public"].url(key)
    return url if request is None else request.build_absolute_uri(url)


class RenditionSerializer(serializers.Serializer):
    width = serializers.IntegerField(read_only=True, help_text="Pixels: 400 or 1200.")
    height = serializers.IntegerField(read_only=True, help_text="Pixels, keeping the aspect.")
    url = serializers.URLField(read_only=True, help_text="Absolute URL of the WebP file.")


IMAGE_FIELDS = [
    "id",
    "url",
    "width",
    "height",
    "mime_type",
    "renditions",
    "srcset",
    "placeholder",
    "color",
]
IMAGE_HELP = {
    "id": {"help_text": "The image's id; it never changes."},
    "width": {"help_text": "Pixels."},
    "height": {"help_text": "Pixels."},
    "mime_type": {"help_text": "e.g. `image/jpeg`."},
}


class ImageSerializer(serializers.ModelSerializer):
    """The fields every image has, whatever its album's kind."""

    url = serializers.SerializerMethodField(
        help_text="Absolute URL of the image file, ready for `<img src>`."
    )
    renditions = serializers.SerializerMethodField(
        help_text="WebP copies at fixed widths (400, 1200), ascending width; only those that "
        "exist: an image narrower than a width has none of it, and an image whose renditions "
        "are not made yet has none at all (use `url`)."
    )
    srcset = serializers.SerializerMethodField(
        help_text="The renditions as an `<img srcset>` value (`<url> 400w, <url> 1200w`); "
        "empty when there are none."
    )
    placeholder = serializers.SerializerMethodField(
        help_text="A ThumbHash of the picture (base64) to show while it loads; null if none yet."
    )
    color = serializers.SerializerMethodField(
        help_text="The picture's average colour, `#rrggbb`; null if none yet."
    )

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, image) -> str:
        return absolute_url(image.storage_key, self.context.get("request"))

    @extend_schema_field(RenditionSerializer(many=True))
    def get_renditions(self, image) -> list[dict]:
        request = self.context.get("request")
        return [
            {"width": r["width"], "height": r["height"], "url": absolute_url(r["key"], request)}
            for r in sorted(image.renditions or [], key=lambda r: r["width"])
        ]

    def get_srcset(self, image) -> str:
        return ", ".join(f"{r['url']} {r['width']}w" for r in self.get_renditions(image))

    @extend_schema_field({"type": "string", "nullable": True})
    def get_placeholder(self, image) -> str | None:
        return image.placeholder or None

    @extend_schema_field(
        {"type": "string", "nullable": True, "pattern": "^#[0-9a-f]{6}$", "example": "#a0856c"}
    )
    def get_color(self, image) -> str | None:
        return image.color or None


class RunwayImageSerializer(ImageSerializer):
    """An image of a runway show."""

    class Meta:
        model = PublicRunwayImage
        fields = [*IMAGE_FIELDS, "look_index"]
        read_only_fields = fields
        extra_kwargs = {
            **IMAGE_HELP,
            "look_index": {
                "help_text": "The look this image shows; its detail shots share the index. 0 "
                "when the source gave no look number."
            },
        }


class StreetSnapImageSerializer(ImageSerializer):
    """An image of a street-style album: a main image, or a detail of one (`parent`)."""

    # DRF's metaclass takes declared fields off the class; the stubs see Field.parent here.
    parent = serializers.IntegerField(  # type: ignore[assignment]
        source="parent_id",
        allow_null=True,
        read_only=True,
        help_text="The id of the main image this detail belongs to; null for a main image.",
    )

    class Meta:
        model = PublicStreetSnapImage
        fields = [*IMAGE_FIELDS, "is_detail", "parent"]
        read_only_fields = fields
        extra_kwargs = {
            **IMAGE_HELP,
            "is_detail": {"help_text": "A close-up of the look in its `parent` image."},
        }
