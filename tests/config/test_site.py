"""Reads of the public API go past sessions, CSRF, authentication and messages
(config.site); every other request, and any write to /api/v1/, still has them."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _private_cache(settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "site"}
    }


@pytest.mark.parametrize("method", ["get", "head", "options"])
def test_public_api_reads_skip_the_site_middleware(client, method):
    client.cookies["sessionid"] = "whatever"
    response = getattr(client, method)("/api/v1/runways/")

    assert response.status_code == 200
    request = response.wsgi_request
    assert not hasattr(request, "session")
    assert getattr(request, "user", None) is None  # DRF's anonymous user, not auth's
    assert not hasattr(request, "_messages")
    # What the API keeps: the security headers, X-Frame-Options, the request id.
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Request-ID"]
    assert "Cookie" not in response.get("Vary", "")


def test_other_requests_keep_the_site_middleware(client):
    response = client.get("/admin/login/")

    assert response.status_code == 200
    request = response.wsgi_request
    assert hasattr(request, "session")
    assert hasattr(request, "user")
    assert hasattr(request, "_messages")
    assert "csrftoken" in response.cookies


def test_a_write_to_the_public_api_keeps_them_too(client):
    # Not a read: the full chain, and the same 405 as before.
    response = client.post("/api/v1/runways/", {})

    assert response.status_code == 405
    assert hasattr(response.wsgi_request, "session")


def test_csrf_still_guards_the_admin(client):
    checked = type(client)(enforce_csrf_checks=True)
    response = checked.post("/admin/login/", {"username": "x", "password": "y"})

    assert response.status_code == 403
