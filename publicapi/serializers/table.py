"""What the record and image serializers share: their direct rendering and their texts."""

from typing import TYPE_CHECKING, Any

from rest_framework import serializers

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
