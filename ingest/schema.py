"""OpenAPI description of the ingest signature (drf-spectacular picks it up on import)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class StandardWebhookScheme(OpenApiAuthenticationExtension):
    target_class = "ingest.auth.StandardWebhookAuthentication"
    name = "standardWebhooks"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "webhook-signature",
            "description": (
                "Standard Webhooks: send webhook-id (unique per request), webhook-timestamp "
                "(integer seconds) and webhook-signature (v1,<base64 HMAC-SHA256 of "
                "'{id}.{timestamp}.{content}'> under a whsec_ secret), where the content is the "
                "body of a POST and the path of a GET (/api/ingest/v1/jobs/17). See "
                "docs/crawlers.md."
            ),
        }
