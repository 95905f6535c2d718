"""Image objects: every image of an album, a cover, a similar image.

Plain serializers with their fields declared (not ModelSerializer, which builds them from the
model again for every serializer a request makes), read-only, over a view model's rows or
their `.values()` alike: fields read their source by attribute or by key.
"""

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


@extend_schema_field(OpenApiTypes.URI)
class FileURLField(serializers.Field):
    """A storage key, shown as its absolute URL in the public store."""

    def to_representation(self, value):
        return absolute_url(value, self.context.get("request"))


def renditions(value, request) -> list[dict]:
    """A renditions column, ascending width, each key shown as its absolute URL."""
    return [
        {"width": r["width"], "height": r["height"], "url": absolute_url(r["key"], request)}
        for r in sorted(value, key=lambda r: r["width"])
    ]


@extend_schema_field(RenditionSerializer(many=True))
class RenditionsField(serializers.Field):
    def get_attribute(self, instance):
        return super().get_attribute(instance) or []  # a JSON null: none, as an empty list

    def to_representation(self, value):
        return renditions(value, self.context.get("request"))


@extend_schema_field(OpenApiTypes.STR)
class SrcsetField(RenditionsField):
    """The renditions as an `<img srcset>` value."""

    def to_representation(self, value):
        sizes = renditions(value, self.context.get("request"))
        return ", ".join(f"{r['url']} {r['width']}w" for r in sizes)


@extend_schema_field({"type": "string", "nullable": True})
class BlankAsNullField(serializers.CharField):
    """A text column whose empty value means "none yet": null in the JSON."""

    def to_representation(self, value):
        return value or None


@extend_schema_field(
    {"type": "string", "nullable": True, "pattern": "^#[0-9a-f]{6}$", "example": "#a0856c"}
)
class ColorField(BlankAsNullField):
    pass


class ImageSerializer(serializers.Serializer):
    """The fields every image has, whatever its album's kind."""

    id = serializers.IntegerField(read_only=True, help_text="The image's id; it never changes.")
    url = FileURLField(
        source="storage_key",
        read_only=True,
        help_text="Absolute URL of the image file, ready for `<img src>`.",
    )
    width = serializers.IntegerField(read_only=True, help_text="Pixels.")
    height = serializers.IntegerField(read_only=True, help_text="Pixels.")
    mime_type = serializers.CharField(read_only=True, help_text="e.g. `image/jpeg`.")
    renditions = RenditionsField(
        read_only=True,
        help_text="WebP copies at fixed widths (400, 1200), ascending width; only those that "
        "exist: an image narrower than a width has none of it, and an image whose renditions "
        "are not made yet has none at all (use `url`).",
    )
    srcset = SrcsetField(
        source="renditions",
        read_only=True,
        help_text="The renditions as an `<img srcset>` value (`<url> 400w, <url> 1200w`); "
        "empty when there are none.",
    )
    placeholder = BlankAsNullField(
        read_only=True,
        help_text="A ThumbHash of the picture (base64) to show while it loads; null if none yet.",
    )
    color = ColorField(
        read_only=True, help_text="The picture's average colour, `#rrggbb`; null if none yet."
    )


class RunwayImageSerializer(ImageSerializer):
    """An image of a runway show."""

    model = PublicRunwayImage

    look_index = serializers.IntegerField(
        read_only=True,
        help_text="The look this image shows; its detail shots share the index. 0 when the "
        "source gave no look number.",
    )


class StreetSnapImageSerializer(ImageSerializer):
    """An image of a street-style album: a main image, or a detail of one (`parent`)."""

    model = PublicStreetSnapImage

    is_detail = serializers.BooleanField(
        read_only=True, help_text="A close-up of the look in its `parent` image."
    )
    # DRF's metaclass takes declared fields off the class; the stubs see Field.parent here.
    parent = serializers.IntegerField(  # type: ignore[assignment]
        source="parent_id",
        allow_null=True,
        read_only=True,
        help_text="The id of the main image this detail belongs to; null for a main image.",
    )
