"""/healthz and /readyz: JSON, one entry per check, 503 when one fails, reachable by a probe
that knows neither the host name nor HTTPS, never cached."""

from typing import ClassVar

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
    assert response.json() == {
        "database": "OK",
        "migrations": "OK",
        "redis": "OK",
        "storage": "OK",
    }
    assert "no-cache" in response["Cache-Control"]
    assert response["X-Request-ID"]


def test_readyz_leaves_redis_out_in_the_embedded_mode(client):
    body = client.get("/readyz").json()

    assert body == {"database": "OK", "migrations": "OK", "storage": "OK"}


def test_readyz_is_503_when_redis_is_down_and_says_no_more(client, settings, caplog):
    settings.REDIS_URL = "redis://127.0.0.1:1/7"  # nothing listens on port 1

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json() == {
        "database": "OK",
        "migrations": "OK",
        "redis": "failing",
        "storage": "OK",
    }
    # where Redis is, and why it failed, is for the log only
    assert b"127.0.0.1" not in response.content and b"port" not in response.content
    assert "127.0.0.1" in caplog.text


def test_readyz_is_503_while_a_migration_is_not_applied(client, monkeypatch, caplog):
    # given: the database as it is before `migrate` of a new release ran, seen by a process
    # that has not seen it migrated yet
    monkeypatch.setattr(Migrated, "applied", set())
    latest = MigrationRecorder.Migration.objects.filter(app="ingest").order_by("-id").first()
    latest.delete()
    try:
        response = client.get("/readyz")

        assert response.status_code == 503
        assert response.json()["migrations"] == "failing"
        assert "1 migration(s) not applied" in caplog.text
        assert Migrated.applied == set()
    finally:
        MigrationRecorder.Migration.objects.create(app=latest.app, name=latest.name)


class CountingStorage(FileSystemStorage):
    """A local folder that counts what a probe costs."""

    calls: ClassVar[list[str]] = []

    def _save(self, name, content):
        CountingStorage.calls.append("save")
        return super()._save(name, content)

    def delete(self, name):
        CountingStorage.calls.append("delete")
        return super().delete(name)

    def exists(self, name):
        CountingStorage.calls.append("exists")
        return super().exists(name)


class FullDisk(CountingStorage):
    def _save(self, name, content):
        raise OSError(28, "No space left on device")


def test_readyz_reads_the_storage_and_writes_only_once(client, settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": f"{__name__}.CountingStorage", "OPTIONS": {"location": tmp_path}},
    }
    CountingStorage.calls.clear()

    statuses = [client.get("/readyz").status_code for _ in range(4)]

    # the first probe writes the object it reads; the others only read it
    assert statuses == [200, 200, 200, 200]
    assert CountingStorage.calls.count("save") == 1
    assert "delete" not in CountingStorage.calls
    assert CountingStorage.calls[-3:] == ["exists", "exists", "exists"]


def test_readyz_is_503_when_the_storage_cannot_be_read_or_written(client, settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": f"{__name__}.FullDisk", "OPTIONS": {"location": tmp_path}},
    }

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["storage"] == "failing"
