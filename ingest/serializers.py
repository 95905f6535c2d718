"""The album a crawler sends, validated and normalised; and the job status it reads back.

Validation is strict on purpose: the contract is pinned and crawlers are written against it,
so a misspelt or misplaced field (a street ``look_index``, a runway ``city``) is an error with
the field's name, never silently dropped data.
"""

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.validators import URLValidator
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.keys import (
    KeyValueError,
    fold_whitespace,
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
    normalize_source,
    normalize_source_url,
)
from catalog.models import YEAR_MAX, YEAR_MIN, Runway, StreetSnap
from ingest.content import content_checksum
from ingest.models import IngestJob
from ingest.report import COUNT_NAMES, Report, sent_image_name


class HttpUrlField(serializers.CharField):
    """An absolute http(s) URL; other schemes (file:, ftp:, data:, gopher:) are refused here,
    and the fetcher checks again where the URL resolves to."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators.append(
            URLValidator(schemes=["http", "https"], message="Enter an absolute http(s) URL.")
        )


class SourceUrlField(HttpUrlField):
    """The crawled article's URL in the form every writer stores (part of the source key)."""

    def to_internal_value(self, data):
        return normalize_source_url(super().to_internal_value(data))


class NormalisedCharField(serializers.CharField):
    """Text put in its stored form by one of `catalog.keys`' functions, the same the editors'
    form and the legacy import use, so every writer stores one key for one value.

    The length limit (a validator, run after this) applies to the normalised value: that is
    what the column must hold.
    """

    def __init__(self, *, normalise: Callable[[str], str], **kwargs):
        self.normalise = normalise
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        try:
            return self.normalise(super().to_internal_value(data))
        except KeyValueError as error:
            raise serializers.ValidationError(str(error)) from None


class FoldedCharField(NormalisedCharField):
    """Text with runs of whitespace folded to one space (brand as sent, season, titles)."""

    def __init__(self, **kwargs):
        super().__init__(normalise=fold_whitespace, **kwargs)


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know, naming the kind a misplaced key belongs to."""

    kind_label = ""

    def other_kinds(self) -> Iterable["StrictSerializer"]:
        """The serializers of the other kinds, whose own fields a refusal names as theirs."""
        return ()

    def to_internal_value(self, data):
        unknown: dict[str, list[str]] = {}
        if isinstance(data, Mapping):
            names = sorted(set(data) - set(self.fields))
            others = list(self.other_kinds()) if names else []
            for name in names:
                owner = next((other for other in others if name in other.fields), None)
                if owner is not None:
                    message = f"A {owner.kind_label} field, not allowed in a {self.kind_label}."
                else:
                    message = f"Unknown field; a {self.kind_label} has: {', '.join(self.fields)}."
                unknown[str(name)] = [message]
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            detail = (
                exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
            )
            raise serializers.ValidationError({**detail, **unknown}) from None
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class AlbumImageSerializerBase(StrictSerializer):
    # The image's fields the content checksum reads (ingest.content): all of them, its URL and
    # its place in the album's structure.
    content_fields: tuple[str, ...]

    def other_kinds(self) -> Iterable[StrictSerializer]:
        return (
            album.image_serializer()
            for album in ALBUM_SERIALIZERS.values()
            if album.image_serializer is not type(self)
        )


class RunwayAlbumImageSerializer(AlbumImageSerializerBase):
    kind_label = "runway image"
    content_fields = ("url", "look_index")

    url = HttpUrlField(max_length=2048)
    look_index = serializers.IntegerField(min_value=0, max_value=100_000, required=False)


class StreetImagesSerializer(serializers.ListSerializer):
    """A street album's images: each image's own fields (the child serializer), then how
    details point at main images. The second check runs over every image whose own fields are
    valid even when others are not, and as part of the `images` field, so one answer names every
    mistake of the album (a wrong `year` and a wrong `parent` together)."""

    def to_internal_value(self, data):
        item_errors: dict[Any, Any] = {}
        try:
            checked = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            detail: Any = exc.detail
            # Per-image errors are keyed by index; anything else (not a list, too many) is not.
            if not isinstance(detail, dict) or not all(isinstance(k, int) for k in detail):
                raise
            item_errors = detail
            child: Any = self.child  # a ListSerializer always has one; the stubs allow None
            checked = [
                None if index in item_errors else child.run_validation(item)
                for index, item in enumerate(data)
            ]
        errors: dict[Any, Any] = {**item_errors, **parent_errors(checked)}
        if errors:
            # Keyed by image index, as DRF's own list errors are.
            raise serializers.ValidationError(dict(sorted(errors.items())))
        return checked


def parent_errors(images: list[Mapping[str, Any] | None]) -> dict[int, dict[str, list[str]]]:
    """The `parent` mistakes of a street album's images, keyed by index (DRF's shape for a
    list's errors). An image given as None had invalid fields of its own: it is not checked,
    and whether it is a detail is not guessed."""
    errors: dict[int, dict[str, list[str]]] = {}
    for position, image in enumerate(images):
        if image is None:
            continue
        parent = image.get("parent")
        is_detail = image.get("is_detail", parent is not None)
        error = None
        if is_detail and parent is None:
            error = "A detail (is_detail: true) needs the index of its main image."
        elif not is_detail and parent is not None:
            error = "Only a detail has a parent; set is_detail: true or drop parent."
        elif parent is not None and parent >= len(images):
            error = (
                f"{sent_image_name(parent)} does not exist: this album's images are "
                f"{sent_image_name(0)} to {sent_image_name(len(images) - 1)}."
            )
        elif parent == position:
            error = "An image cannot be its own parent."
        elif parent is not None and images[parent] is not None and _is_detail(images[parent]):
            error = f"{sent_image_name(parent)} is a detail; a parent must be a main image."
        if error:
            errors[position] = {"parent": [error]}
    return errors


class StreetAlbumImageSerializer(AlbumImageSerializerBase):
    kind_label = "street image"
    content_fields = ("url", "is_detail", "parent")

    url = HttpUrlField(max_length=2048)
    is_detail = serializers.BooleanField(required=False)
    # DRF's metaclass takes declared fields off the class; the stubs see Field.parent here.
    parent = serializers.IntegerField(min_value=0, required=False, allow_null=True)  # type: ignore[assignment]

    class Meta:
        list_serializer_class = StreetImagesSerializer


class InstantField(serializers.DateTimeField):
    """An ISO 8601 moment with its offset (``2027-03-03T20:30:00+01:00``, ``...Z``), validated
    as that moment in UTC, in ISO text: the album is stored as JSON (the job's payload), and
    one moment has one text whatever offset it was sent in (the content checksum reads it).
    A time without an offset names no moment (whose 20:30?): refused, not guessed."""

    default_error_messages = {
        "naive": "{name} needs an offset (+01:00, Z): without one, {value!r} is not one moment.",
    }

    def to_internal_value(self, value):
        if isinstance(value, str):
            value = value.strip()
            try:
                parsed = parse_datetime(value)
            except ValueError:  # well formed, out of range (month 13): DRF's own message
                parsed = None
            if parsed is not None and parsed.tzinfo is None:
                self.fail("naive", name=self.field_name, value=value)
        return super().to_internal_value(value).astimezone(UTC).isoformat()


def instant(text: str | None) -> datetime | None:
    """An InstantField's value as the moment it is (None stays None)."""
    return None if text is None else datetime.fromisoformat(text)


class AlbumSerializerBase(StrictSerializer):
    kind = serializers.ChoiceField(choices=IngestJob.Kind.choices)
    # DRF's metaclass takes declared fields off the class; the stubs see Field.source here.
    source = serializers.RegexField(  # type: ignore[assignment]
        r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        max_length=32,
        error_messages={"invalid": "A site id: letters, digits, '-', '_' or '.'."},
    )
    source_url = SourceUrlField(max_length=1024)
    year = serializers.IntegerField(min_value=YEAR_MIN, max_value=YEAR_MAX)
    description = serializers.CharField(
        max_length=20_000, required=False, allow_blank=True, default="", trim_whitespace=True
    )
    # A house's release time: the album's go-live; approved before it, it is scheduled.
    embargo_until = InstantField(
        required=False,
        allow_null=True,
        default=None,
        help_text="When the album may first be shown (ISO 8601 with an offset, e.g. "
        "2027-03-03T20:30:00+01:00): approved before it, the album waits for it. Optional.",
    )
    # The catalog's model of the kind: the album's "kind" is its word (catalog.models).
    record_model: type[Runway] | type[StreetSnap]
    image_serializer: type[AlbumImageSerializerBase]
    # The fields an editor reviews: what the content checksum reads (ingest.content), beside the
    # images and the embargo. The source fields are not content: they say where the album
    # came from, not what it is.
    content_fields: tuple[str, ...]

    def get_fields(self):
        fields = super().get_fields()
        # Read at validation time so the limit follows the setting (and tests can lower it).
        # many=True makes a ListSerializer, which takes the lengths; the stubs check the child's
        # signature.
        fields["images"] = self.image_serializer(  # type: ignore[call-arg]
            many=True,
            min_length=1,
            max_length=settings.INGEST_MAX_IMAGES,
            error_messages={
                "min_length": "An album needs at least one image.",
                "max_length": f"At most {settings.INGEST_MAX_IMAGES} images per album.",
            },
        )
        return fields

    def other_kinds(self) -> Iterable[StrictSerializer]:
        return (album() for album in ALBUM_SERIALIZERS.values() if album is not type(self))

    def validate_source(self, value: str) -> str:
        # The source key (source, source_url) must not depend on how a crawler spells its id.
        return normalize_source(value)

    def validate(self, attrs):
        attrs = dict(attrs)
        attrs["images"] = self.normalise_images(attrs["images"])
        return attrs

    def normalise_images(self, images: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        raise NotImplementedError


class RunwayAlbumSerializer(AlbumSerializerBase):
    kind_label = "runway album"
    record_model = Runway
    image_serializer = RunwayAlbumImageSerializer
    content_fields = (
        "brand",
        "season_code",
        "season",
        "collection_type",
        "year",
        "title",
        "description",
    )

    brand = FoldedCharField(max_length=128)
    # Entity-key parts: "fw 24" -> "FW24", "Ready to Wear" -> "ready-to-wear".
    season_code = NormalisedCharField(normalise=normalize_season_code, max_length=16)
    season = FoldedCharField(max_length=64, required=False, allow_blank=True, default="")
    collection_type = NormalisedCharField(normalise=normalize_collection_type, max_length=32)
    title = FoldedCharField(max_length=255, required=False, allow_blank=True, default="")

    def normalise_images(self, images):
        # Without look_index each image is its own look, numbered in list order.
        return [
            {"url": image["url"], "look_index": image.get("look_index", position + 1)}
            for position, image in enumerate(images)
        ]


class StreetAlbumSerializer(AlbumSerializerBase):
    kind_label = "street album"
    record_model = StreetSnap
    image_serializer = StreetAlbumImageSerializer
    content_fields = ("city", "year", "month", "title", "description")

    city = NormalisedCharField(normalise=normalize_city, max_length=64)
    month = serializers.IntegerField(min_value=1, max_value=12)
    # Part of the street entity key, so it cannot be blank.
    title = FoldedCharField(max_length=255)

    def normalise_images(self, images):
        # StreetImagesSerializer checked every parent; a detail is what has one, unless said.
        return [
            {
                "url": image["url"],
                "is_detail": _is_detail(image),
                "parent": image.get("parent"),
            }
            for image in images
        ]


def _is_detail(image: Mapping[str, Any]) -> bool:
    return image.get("is_detail", image.get("parent") is not None)


# By the kind's word (the payload's "kind").
ALBUM_SERIALIZERS: dict[str, type[AlbumSerializerBase]] = {
    serializer.record_model.kind: serializer
    for serializer in (RunwayAlbumSerializer, StreetAlbumSerializer)
}


def album_validate(data: Any) -> dict[str, Any]:
    """The validated, normalised album; raises ``ValidationError`` with field messages."""
    if not isinstance(data, Mapping):
        raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
    kind = data.get("kind")
    # A list or an object is unhashable: look it up only when it is a string.
    serializer_class = ALBUM_SERIALIZERS.get(kind) if isinstance(kind, str) else None
    if serializer_class is None:
        raise serializers.ValidationError({"kind": ['Must be "runway" or "street".']})
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    album = dict(serializer.validated_data)
    album["images"] = [dict(image) for image in album["images"]]
    return album


def album_checksum(album: Mapping[str, Any]) -> str:
    """The content checksum of a validated album (ingest.content), over its kind's content
    fields."""
    serializer = ALBUM_SERIALIZERS[album["kind"]]
    return content_checksum(
        album,
        fields=serializer.content_fields,
        image_fields=serializer.image_serializer.content_fields,
    )


# --- Responses -----------------------------------------------------------------------------


class AcceptedSerializer(serializers.Serializer):
    job_id = serializers.IntegerField()
    status = serializers.CharField()
    status_url = serializers.CharField()


class ReportCountsSerializer(serializers.Serializer):
    # One integer per ingest.report.COUNT_NAMES, in that order. (A comment, not a docstring:
    # drf-spectacular would publish a docstring as the schema's description.)
    def get_fields(self):
        return {name: serializers.IntegerField() for name in COUNT_NAMES}


class ReportIssueSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    url = serializers.CharField()
    reason = serializers.CharField()


class ReportSerializer(serializers.Serializer):
    album_images = serializers.IntegerField()
    counts = ReportCountsSerializer()
    issues = ReportIssueSerializer(many=True)
    issues_truncated = serializers.BooleanField()


class JobStatusSerializer(serializers.Serializer):
    job_id = serializers.IntegerField(source="pk")
    kind = serializers.CharField()
    status = serializers.CharField()
    reason = serializers.CharField()
    error = serializers.CharField()
    record_id = serializers.IntegerField(allow_null=True)
    attempts = serializers.IntegerField()
    report = serializers.SerializerMethodField()

    @extend_schema_field(ReportSerializer)
    def get_report(self, job: IngestJob) -> dict[str, Any]:
        # A job that has not run yet has no report: an empty one, so the shape never changes.
        if not job.report:
            return Report(album_images=len(job.payload.get("images", []))).as_dict()
        report = dict(job.report)
        # jsonb keeps no key order; give the counts in the order docs/crawlers.md documents.
        counts = report.get("counts", {})
        report["counts"] = {name: counts.get(name, 0) for name in COUNT_NAMES}
        return report
