"""The project's OpenAPI generation (drf-spectacular): an operation that authenticates nobody
carries no security requirement.

drf-spectacular gives a view that allows anyone an empty requirement (``security: [{}]``,
"authentication optional"); client generators read that as "may need credentials" and type
every public call as needing an authenticated client. The public API has no authentication
at all, so its operations say nothing about security; the ingest's signed endpoints keep
theirs.
"""

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class AutoSchema(SpectacularAutoSchema):
    def get_auth(self) -> list[dict[str, list[str]]]:
        if not self.view.get_authenticators():
            return []
        return super().get_auth()
