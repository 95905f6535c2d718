import os

import pytest
from django.db import connection
from django.test import override_settings
from hypothesis import HealthCheck, settings

# Property tests: thorough in CI, quicker by hand. Database examples are slow-ish, so no
# deadline; the function-scoped `db` fixture is fine because each example rolls back its own
# savepoint (see tests.support.rollback_each_example).
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_collection_modifyitems(config, items):
    # The portable part of the suite runs on SQLite too; tests about PostgreSQL itself (row
    # locks, concurrent connections, query plans) are deselected there, not skipped.
    if connection.vendor == "postgresql":
        return
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker("postgres") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def _plain_http_for_the_live_server():
    # pytest-django's live_server is session-scoped and its SecurityMiddleware reads
    # SECURE_SSL_REDIRECT once, when the server starts: turn it off before that, or a browser
    # test is redirected to https that the live server does not speak.
    with override_settings(SECURE_SSL_REDIRECT=False):
        yield


@pytest.fixture(autouse=True)
def _test_settings(settings, tmp_path):
    # Tests write media to a throwaway folder (plain HTTP: see the session fixture above).
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": tmp_path / "media", "base_url": "/media/"},
        },
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
