"""The filter counts of /facets/."""

from rest_framework import serializers


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
