"""Image objects: every image of an album, a cover, a similar image."""

from drf_spectacular.types import OpenApiTypes
from rest_framework import serializers

from publicapi.models import PublicRunwayImage, PublicStreetSnapImage
from publicapi.serializers.table import Column, Computed, Table, TableSerializer
from publicapi.serializers.urls import absolute_url


class RenditionSerializer(serializers.Serializer):
    width = serializers.IntegerField(read_only=True, help_text="Pixels: 400 or 1200.")
    height = serializers.IntegerField(read_only=True, help_text="Pixels, keeping the aspect.")
    url = serializers.URLField(read_only=True, help_text="Absolute URL of the WebP file.")


def renditions(image, request) -> list[dict]:
    # Two columns show them (renditions and srcset): their URLs are made once per image.
    made = getattr(image, "_public_renditions", None)
    if made is None:
        made = image._public_renditions = [
            {"width": r["width"], "height": r["height"], "url": absolute_url(r["key"], request)}
            for r in sorted(image.renditions or [], key=lambda r: r["width"])
        ]
    return made


def srcset(image, request) -> str:
    return ", ".join(f"{r['url']} {r['width']}w" for r in renditions(image, request))


IMAGE = [
    Column("id", "The image's id; it never changes."),
    Column(
        "url",
        field=Computed(
            lambda image, request: absolute_url(image.storage_key, request),
            OpenApiTypes.URI,
            help_text="Absolute URL of the image file, ready for `<img src>`.",
        ),
    ),
    Column("width", "Pixels."),
    Column("height", "Pixels."),
    Column("mime_type", "e.g. `image/jpeg`."),
    Column(
        "renditions",
        field=Computed(
            renditions,
            RenditionSerializer(many=True),
            help_text="WebP copies at fixed widths (400, 1200), ascending width; only those "
            "that exist: an image narrower than a width has none of it, and an image whose "
            "renditions are not made yet has none at all (use `url`).",
        ),
    ),
    Column(
        "srcset",
        field=Computed(
            srcset,
            OpenApiTypes.STR,
            help_text="The renditions as an `<img srcset>` value (`<url> 400w, <url> 1200w`); "
            "empty when there are none.",
        ),
    ),
    Column(
        "placeholder",
        field=Computed(
            lambda image, request: image.placeholder or None,
            {"type": "string", "nullable": True},
            help_text="A ThumbHash of the picture (base64) to show while it loads; null if "
            "none yet.",
        ),
    ),
    Column(
        "color",
        field=Computed(
            lambda image, request: image.color or None,
            {"type": "string", "nullable": True, "pattern": "^#[0-9a-f]{6}$", "example": "#a0856c"},
            help_text="The picture's average colour, `#rrggbb`; null if none yet.",
        ),
    ),
]


class RunwayImageSerializer(TableSerializer):
    """An image of a runway show."""

    table = Table(
        PublicRunwayImage,
        *IMAGE,
        Column(
            "look_index",
            "The look this image shows; its detail shots share the index. 0 when the source "
            "gave no look number.",
        ),
    )


class StreetSnapImageSerializer(TableSerializer):
    """An image of a street-style album: a main image, or a detail of one (`parent`)."""

    table = Table(
        PublicStreetSnapImage,
        *IMAGE,
        Column("is_detail", "A close-up of the look in its `parent` image."),
        Column(
            "parent",
            field=serializers.IntegerField(
                source="parent_id",
                allow_null=True,
                read_only=True,
                help_text="The id of the main image this detail belongs to; null for a main image.",
            ),
        ),
    )
