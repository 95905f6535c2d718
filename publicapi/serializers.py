"""The JSON of the public API (docs/api.md). Read-only: every serializer here
only renders rows of the public_* views.

The record and image serializers declare their fields for the schema (drf-spectacular reads
them) and render with a to_representation of their own that builds the dict directly: DRF's
generic path deep-copies every declared field per serializer and walks them per object, which
was the largest share of a list request's time in Python (bench/public_api.py). The output is
the same (tests/publicapi/test_serializers.py renders both ways and compares).
"""

import datetime
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.core.files.storage import Storage, storages
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
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
        return absolute_url(value, self.context.get("request"))


def absolute_url(key: str, request) -> str:
    url = storage_url(key)
    if request is None:
        return url
    if url.startswith("/") and not url.startswith("//") and "/." not in url:
        # What build_absolute_uri makes of a plain path: the request's scheme and host before
        # it, taken once per request rather than parsed again for every image of a page.
        prefix = getattr(request, "_public_url_prefix", None)
        if prefix is None:
            prefix = request._public_url_prefix = request.build_absolute_uri("/")[:-1]
        return prefix + url
    if urlsplit(url).netloc:
        return url
    return request.build_absolute_uri(url)


# A storage key whose URL is the storage's URL prefix followed by the key as it is: path
# segments of URL-safe characters, none starting with a dot (no "." or ".." to resolve, nothing
# to quote). Every key catalog.keys makes is one; a legacy key may not be.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*\Z")
_PROBE = "probe/0.webp"
_url_prefixes: dict[Storage, str | None] = {}  # None: this storage's URLs are not plain


def storage_url(key: str) -> str:
    """The public store's URL of ``key`` (``storages["public"]``: a copy of exactly the
    public bytes, or the media route that answers from the database), without asking the
    storage for each image of a page.

    The local media folder and a bucket or CDN with plain URLs give the same prefix before
    every key; it is worked out once per storage, from the URL of a probe key, and a plain
    key is appended to it (a sixth to a ninth of the time of a storage's url() per image in
    bench/public_api.py; a page has an original and its renditions for each image). Signed
    URLs (a query string that changes per key), and keys that are not plain, are asked of the
    storage each time.
    """
    storage = storages["public"]
    try:
        prefix = _url_prefixes[storage]
    except KeyError:
        probe = storage.url(_PROBE)
        plain = probe.endswith(_PROBE) and "?" not in probe and "#" not in probe
        prefix = _url_prefixes[storage] = probe[: -len(_PROBE)] if plain else None
    if prefix is not None and _PLAIN_KEY.match(key):
        return prefix + key
    return storage.url(key)


@receiver(setting_changed)
def _forget_url_prefixes(**kwargs) -> None:
    # Tests change MEDIA_URL and STORAGES; a storage's URL settings are its own otherwise.
    _url_prefixes.clear()


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


if TYPE_CHECKING:
    # What the mixin is mixed into, for the type checker only (at run time it is a plain mixin).
    _Serializer = serializers.Serializer
else:
    _Serializer = object


class DirectRendering(_Serializer):
    """Mixin: `fast = False` on a class falls back to DRF's field-by-field rendering (the
    bench measures both; the tests compare them)."""

    fast = True

    if TYPE_CHECKING:

        @staticmethod
        def render(instance: Any, request: Any) -> dict: ...

    def to_representation(self, instance):
        if not self.fast:
            return super().to_representation(instance)
        return self.render(instance, self.context.get("request"))


def described(**texts: str) -> dict[str, dict[str, str]]:
    """extra_kwargs giving fields their description in the schema (and so in /api/docs/)."""
    return {name: {"help_text": text} for name, text in texts.items()}


IMAGE_TEXTS = described(
    id="The image's id; it never changes.",
    width="Pixels.",
    height="Pixels.",
    mime_type="e.g. `image/jpeg`.",
)
RECORD_TEXTS = described(
    id="The album's id; it never changes.",
    title="As published; may be empty.",
    description="Plain text; may be empty.",
    image_count="How many images the album shows.",
    published_at="When it was first published (UTC). Null only for some imported albums.",
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
    images = RunwayImageSerializer(
        many=True, read_only=True, help_text="The look, then its detail shots, in album order."
    )


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
        # Each image rendered once; the looks reuse the same dicts.
        rendered = {image.id: RunwayImageSerializer.render(image, request) for image in images}
        return {
            **RunwaySerializer.render(runway, request, rendered),
            "images": [rendered[image.id] for image in images],
            "looks": [
                {"look_index": look.look_index, "images": [rendered[i.id] for i in look.images]}
                for look in group_looks(images)
            ],
        }

    @extend_schema_field(LookSerializer(many=True))
    def get_looks(self, runway: PublicRunway):
        looks = group_looks(album_images(runway))
        return LookSerializer(looks, many=True, context=self.context).data


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
    main = StreetSnapImageSerializer(read_only=True)
    details = StreetSnapImageSerializer(
        many=True, read_only=True, help_text="Close-ups of the main image, in album order."
    )


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
            "groups": [
                {
                    "main": rendered[group.main.id],
                    "details": [rendered[d.id] for d in group.details],
                }
                for group in group_details(images)
            ],
        }

    @extend_schema_field(GroupSerializer(many=True))
    def get_groups(self, snap: PublicStreetSnap):
        groups = group_details(album_images(snap))
        return GroupSerializer(groups, many=True, context=self.context).data


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


class FacetValueSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Results with this value (and the other filters).")


class TextFacetValueSerializer(FacetValueSerializer):
    value = serializers.CharField(help_text="A value for the filter of the same name.")


class IntegerFacetValueSerializer(FacetValueSerializer):
    value = serializers.IntegerField(help_text="A value for the filter of the same name.")


class BrandFacetValueSerializer(TextFacetValueSerializer):
    # DRF's metaclass takes declared fields off the class; the stubs see Field.label here.
    label = serializers.CharField(help_text="The brand's name (`value` is its slug).")  # type: ignore[assignment]


class RunwayFacetCountsSerializer(serializers.Serializer):
    brand = BrandFacetValueSerializer(many=True)
    season_code = TextFacetValueSerializer(many=True)
    year = IntegerFacetValueSerializer(many=True)
    collection_type = TextFacetValueSerializer(many=True)


class StreetSnapFacetCountsSerializer(serializers.Serializer):
    city = TextFacetValueSerializer(many=True)
    year = IntegerFacetValueSerializer(many=True)
    month = IntegerFacetValueSerializer(many=True)


class RunwayFacetsSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Results of the list with every filter.")
    facets = RunwayFacetCountsSerializer()


class StreetSnapFacetsSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Results of the list with every filter.")
    facets = StreetSnapFacetCountsSerializer()


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="SimilarImageObject",
        serializers=[RunwayImageSerializer, StreetSnapImageSerializer],
        resource_type_field_name=None,
    )
)
class SimilarImageField(serializers.Field):
    """The image object of its kind: a runway image or a street-style image."""

    def __init__(self, **kwargs):
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        if isinstance(value, PublicRunwayImage):
            return RunwayImageSerializer(value, context=self.context).data
        return StreetSnapImageSerializer(value, context=self.context).data


class SimilarImageSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        # The ingest job's choices too, so the schema has one KindEnum.
        choices=[("runway", "Runway"), ("street", "Street")],
        help_text="`runway` or `street` (a street snap).",
    )
    record_id = serializers.IntegerField(
        help_text="The album's id: /api/v1/runways/<id>/ or /api/v1/street-snaps/<id>/."
    )
    image = SimilarImageField(help_text="As in the album's `images`.")
    distance = serializers.IntegerField(help_text="Differing bits of the two hashes (0-64).")


class SimilarImagesSerializer(serializers.Serializer):
    results = SimilarImageSerializer(many=True, help_text="Nearest first.")


class ErrorSerializer(serializers.Serializer):
    """Every error response (publicapi.http.public_exception_handler)."""

    status = serializers.IntegerField(help_text="The HTTP status, repeated.")
    code = serializers.CharField(help_text="e.g. not_found, invalid, throttled.")
    detail = serializers.CharField(help_text="A sentence for humans.")
    # DRF's metaclass takes declared fields off the class; the stubs see Serializer.errors.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        help_text="For a 400: each invalid query parameter and its messages. Empty otherwise.",
    )
