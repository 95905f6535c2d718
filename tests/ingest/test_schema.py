"""The ingest operations in the OpenAPI schema: signed with three Standard Webhooks headers,
each named as it is sent, never a bearer token."""

import json

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client) -> dict:
    response = client.get("/api/schema/", headers={"Accept": "application/json"})
    assert response.status_code == 200
    return json.loads(response.content)


def test_each_standard_webhooks_header_is_an_api_key_header_of_its_own(schema):
    schemes = schema["components"]["securitySchemes"]

    headers = {
        name: (scheme["type"], scheme["in"], scheme["name"])
        for name, scheme in schemes.items()
        if name.startswith("webhook")
    }

    assert headers == {
        "webhookId": ("apiKey", "header", "webhook-id"),
        "webhookTimestamp": ("apiKey", "header", "webhook-timestamp"),
        "webhookSignature": ("apiKey", "header", "webhook-signature"),
    }
    assert all(scheme.get("scheme") != "bearer" for scheme in schemes.values())
    assert "HMAC-SHA256" in schemes["webhookSignature"]["description"]
    assert "integer seconds" in schemes["webhookTimestamp"]["description"]


@pytest.mark.parametrize(
    ("method", "path"), [("post", "/api/ingest/v1/albums"), ("get", "/api/ingest/v1/jobs/{id}")]
)
def test_every_ingest_operation_requires_the_three_headers_together(schema, method, path):
    security = schema["paths"][path][method]["security"]

    # One requirement naming the three: all of them, on every call.
    assert security == [{"webhookId": [], "webhookTimestamp": [], "webhookSignature": []}]
