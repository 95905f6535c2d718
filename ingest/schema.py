"""OpenAPI description of the ingest signature (drf-spectacular picks it up on import).

Standard Webhooks is three headers sent together, not a token: one apiKey scheme per header,
all three required by each ingest operation (a security requirement that names the three
ANDs them), so a generated client asks for three header values and sends them as named,
instead of a bearer token it would put in ``Authorization``. The values themselves change
with every request (a new id, the time, an HMAC over the body), which no scheme of OpenAPI
computes: the descriptions say how, and docs/crawlers.md shows a whole signed call.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension

GUIDE = "docs/crawlers.md, “Signing”"

HEADERS = {
    "webhookId": (
        "webhook-id",
        "Standard Webhooks message id: unique per request (e.g. msg_<uuid>); the server "
        "stores it for 10 minutes and answers 409 to a POST that reuses it.",
    ),
    "webhookTimestamp": (
        "webhook-timestamp",
        "Standard Webhooks timestamp: the time of signing in integer seconds since the Unix "
        "epoch, within 5 minutes of the server's clock.",
    ),
    "webhookSignature": (
        "webhook-signature",
        "Standard Webhooks signature: v1,<base64 of HMAC-SHA256 over "
        "'{webhook-id}.{webhook-timestamp}.{content}'>, keyed with the base64-decoded part of a "
        "whsec_ secret (INGEST_SECRETS), where the content is the body of a POST and the path "
        "of a GET (/api/ingest/v1/jobs/17: no host, no query string). Several space-separated "
        "signatures are accepted.",
    ),
}


class StandardWebhookScheme(OpenApiAuthenticationExtension):
    target_class = "ingest.auth.StandardWebhookAuthentication"
    name = list(HEADERS)

    def get_security_definition(self, auto_schema):
        return [
            {
                "type": "apiKey",
                "in": "header",
                "name": header,
                "description": f"{description} All three headers are required; see {GUIDE}.",
            }
            for header, description in HEADERS.values()
        ]
