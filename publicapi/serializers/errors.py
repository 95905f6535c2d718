"""The one shape of every error response."""

from rest_framework import serializers


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
