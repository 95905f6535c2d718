"""The images of other albums that look like an image (/similar/)."""

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from publicapi.serializers.images import RunwayImageSerializer, StreetSnapImageSerializer

# Each kind's image serializer, by the kind its model says.
IMAGE_SERIALIZERS = {
    serializer.model.kind: serializer
    for serializer in (RunwayImageSerializer, StreetSnapImageSerializer)
}


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
        return IMAGE_SERIALIZERS[value.kind](value, context=self.context).data


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
