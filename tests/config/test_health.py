"""/healthz and /readyz: JSON, one entry per check, 503 when one fails, reachable by a probe
that knows neither the host name nor HTTPS, never cached."""

import pytest
from django.core.files.storage import FileSystemStorage
from django.db.migrations.recorder import MigrationRecorder

from config.health import Migrated
from tests.support import TEST_REDIS_URL

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _production_like(settings):
    # What a container probe meets: HTTPS redirects on and a host list without its address.
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["archive.example.com"]
    settings.REDIS_URL = ""


def test_healthz_answers_without_touching_anything(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz", HTTP_HOST="10.0.0.7:8000")

    assert response.status_code == 200
    assert response.json() == {"process": "OK"}
    assert "no-cache" in response["Cache-Control"]


def test_readyz_lists_each_check_and_is_ready(client, settings):
    settings.REDIS_URL = TEST_REDIS_URL

    response = client.get("/readyz", HTTP_HOST="10.0.0.7:8000", HTTP_ACCEPT="text/html")

    assert response.status_code == 200, response.content
    body = response.json()
    assert len(body) == 4
    assert set(body.values()) == {"OK"}
    assert any(name.startswith("Database") for name in body)
    assert any(name.startswith("Migrated") for name in body)
    assert any(name.startswith("Redis") for name in body)
    assert any(name.startswith("Storage") for name in body)
    assert "no-cache" in response["Cache-Control"]
    assert response["X-Request-ID"]


def test_readyz_leaves_redis_out_in_the_embedded_mode(client):
    body = client.get("/readyz").json()

    assert not any(name.startswith("Redis") for name in body)
    assert len(body) == 3


def test_readyz_is_503_when_redis_is_down(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1

    response = client.get("/readyz")

    assert response.status_code == 503
    failed = {name: state for name, state in response.json().items() if state != "OK"}
    assert list(failed) and all(name.startswith("Redis") for name in failed)


def test_readyz_is_503_while_a_migration_is_not_applied(client, monkeypatch):
    # given: the database as it is before `migrate` of a new release ran, seen by a process
    # that has not seen it migrated yet
    monkeypatch.setattr(Migrated, "applied", set())
    latest = MigrationRecorder.Migration.objects.filter(app="ingest").order_by("-id").first()
    latest.delete()
    try:
        response = client.get("/readyz")

        assert response.status_code == 503
        assert response.json()["Migrated(alias='default')"].endswith("1 migration(s) not applied")
        assert Migrated.applied == set()
    finally:
        MigrationRecorder.Migration.objects.create(app=latest.app, name=latest.name)


class FullDisk(FileSystemStorage):
    def _save(self, name, content):
        raise OSError(28, "No space left on device")


def test_readyz_is_503_when_storage_refuses_writes(client, settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": f"{__name__}.FullDisk", "OPTIONS": {"location": "/nonexistent"}},
    }

    response = client.get("/readyz")

    assert response.status_code == 503
    failed = [name for name, state in response.json().items() if state != "OK"]
    assert failed == ["Storage(alias='default')"]
