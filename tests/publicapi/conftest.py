import uuid

import pytest
from django.utils import timezone

UNTHROTTLED = "1000000/min"


@pytest.fixture(autouse=True)
def _public_api_settings(settings):
    # A private in-memory cache per test: throttle counters (and anything else cached) never
    # leak between tests, nor into a Redis that other runs share. The throttle stays on, at a
    # rate no test reaches; tests/publicapi/test_http.py tests the throttle itself.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"publicapi-{uuid.uuid4()}",
        }
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": UNTHROTTLED},
    }
    settings.PUBLIC_API_CACHE_SECONDS = 60


@pytest.fixture
def at():
    """Distinct, increasing publication times, so "newest first" is testable."""
    start = timezone.now() - timezone.timedelta(days=30)

    def at(minutes: int):
        return start + timezone.timedelta(minutes=minutes)

    return at
