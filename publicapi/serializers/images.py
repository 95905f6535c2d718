"""Image objects: every image of an album, a cover, a similar image."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from publicapi.models import PublicRunwayImage, PublicStreetSnapImage
from publicapi.serializers.table import DirectRendering, described
from publicapi.serializers.urls import ImageURLField, absolute_url


class RenditionSerializer(serializers.Serializer):
    width = serializers.IntegerField(read_only=True, help_text="Pixels: 400 or 1200.")
    height = serializers.IntegerField(read_only=True, help_text="Pixels, keeping the aspect.")
    url = serializers.URLField(read_only=True, help_text="Absolute URL of the WebP file.")


def image_fields(image, request) -> dict:
    """What every image object shows (ImageSerializer's fields), rendered directly."""
    renditions = [
        {"width": r["width"], "height": r["height"], "url": absolute_url(r["key"], request)}
        for r in sorted(image.renditions or [], key=lambda r: r["width"])
    ]
    return {
        "id": image.id,
        "url": absolute_url(image.storage_key, request),
        "width": image.width,
        "height": image.height,
        "mime_type": image.mime_type,
        "renditions": renditions,
        "srcset": ", ".join(f"{r['url']} {r['width']}w" for r in renditions),
        "placeholder": image.placeholder or None,
        "color": image.color or None,
    }


IMAGE_TEXTS = described(
    id="The image's id; it never changes.",
    width="Pixels.",
    height="Pixels.",
    mime_type="e.g. `image/jpeg`.",
)


class ImageSerializer(DirectRendering, serializers.ModelSerializer):
    url = ImageURLField(
        source="storage_key", help_text="Absolute URL of the image file, ready for `<img src>`."
    )
    renditions = serializers.SerializerMethodField(
        help_text="WebP copies at fixed widths (400, 1200), ascending width; only those that "
        "exist: an image narrower than a width has none of it, and an image whose renditions "
        "are not made yet has none at all (use `url`)."
    )
    srcset = serializers.SerializerMethodField(
        help_text="The renditions as an `<img srcset>` value (`<url> 400w, <url> 1200w`); empty "
        "when there are none."
    )
    placeholder = serializers.SerializerMethodField(
        help_text="A ThumbHash of the picture (base64) to show while it loads; null if none yet."
    )
    color = serializers.SerializerMethodField(
        help_text="The picture's average colour, `#rrggbb`; null if none yet."
    )

    class Meta:
        fields = [
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
        read_only_fields = fields
        extra_kwargs = IMAGE_TEXTS

    def _renditions(self, image) -> list[dict]:
        # One image object is rendered once per field; compute its URLs once.
        cached = getattr(image, "_public_renditions", None)
        if cached is None:
            request = self.context.get("request")
            cached = [
                {"width": r["width"], "height": r["height"], "url": absolute_url(r["key"], request)}
                for r in sorted(image.renditions or [], key=lambda r: r["width"])
            ]
            image._public_renditions = cached
        return cached

    @extend_schema_field(RenditionSerializer(many=True))
    def get_renditions(self, image) -> list[dict]:
        return self._renditions(image)

    @extend_schema_field(OpenApiTypes.STR)
    def get_srcset(self, image) -> str:
        return ", ".join(f"{r['url']} {r['width']}w" for r in self._renditions(image))

    @extend_schema_field({"type": "string", "nullable": True})
    def get_placeholder(self, image) -> str | None:
        return image.placeholder or None

    @extend_schema_field(
        {"type": "string", "nullable": True, "pattern": "^#[0-9a-f]{6}$", "example": "#a0856c"}
    )
    def get_color(self, image) -> str | None:
        return image.color or None


class RunwayImageSerializer(ImageSerializer):
    @staticmethod
    def render(image, request) -> dict:
        return {**image_fields(image, request), "look_index": image.look_index}

    class Meta(ImageSerializer.Meta):
        model = PublicRunwayImage
        fields = [*ImageSerializer.Meta.fields, "look_index"]
        read_only_fields = fields
        extra_kwargs = {
            **IMAGE_TEXTS,
            **described(
                look_index="The look this image shows; its detail shots share the index. "
                "0 when the source gave no look number."
            ),
        }


class StreetSnapImageSerializer(ImageSerializer):
    # DRF's metaclass takes declared fields off the class; the stubs see Field.parent here.
    parent = serializers.IntegerField(  # type: ignore[assignment]
        source="parent_id",
        allow_null=True,
        read_only=True,
        help_text="The id of the main image this detail belongs to; null for a main image.",
    )

    @staticmethod
    def render(image, request) -> dict:
        return {
            **image_fields(image, request),
            "is_detail": image.is_detail,
            "parent": image.parent_id,
        }

    class Meta(ImageSerializer.Meta):
        model = PublicStreetSnapImage
        fields = [*ImageSerializer.Meta.fields, "is_detail", "parent"]
        read_only_fields = fields
        extra_kwargs = {
            **IMAGE_TEXTS,
            **described(is_detail="A close-up of the look in its `parent` image."),
        }
