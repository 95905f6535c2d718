"""catalog.storage: the objects ingest stored are recorded before they are put, and the
collector deletes one only under its row's lock, so a job storing the same key again never ends
with rows pointing at a deleted object. The races run on PostgreSQL with real connections."""

import hashlib
import threading
import time
from datetime import timedelta

import psycopg
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, connections, transaction
from django.utils import timezone

from catalog.models import StoredObject
from catalog.storage import image_key, image_store, stored_objects_collect, stored_objects_hold
from tests.factories import RunwayImageFactory

SHA1 = "0123456789abcdef0123456789abcdef01234567"
WAIT = 60  # seconds: a bound for waits that end as soon as the other side acts


def store(data: bytes) -> str:
    sha1 = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    return image_store(data=data, sha1=sha1, mime_type="image/jpeg")


def age(key: str, days: int = 3) -> None:
    StoredObject.objects.filter(key=key).update(
        last_stored_at=timezone.now() - timedelta(days=days)
    )


def collect(**kwargs):
    return stored_objects_collect(older_than=timezone.now() - timedelta(days=1), **kwargs)


class WatchingStorage:
    """The default storage, noting whether the key's row existed when each object was put."""

    def __init__(self) -> None:
        self.row_at_put: list[bool] = []

    def __getattr__(self, name):
        return getattr(default_storage, name)

    def save(self, name, content, *args, **kwargs):
        self.row_at_put.append(StoredObject.objects.filter(key=name, preexisting=False).exists())
        return default_storage.save(name, content, *args, **kwargs)


@pytest.mark.django_db
def test_the_row_is_written_before_the_object_is_put():
    storage = WatchingStorage()
    data = b"first"
    sha1 = hashlib.sha1(data, usedforsecurity=False).hexdigest()

    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg", storage=storage)
    image_store(data=data, sha1=sha1, mime_type="image/jpeg", storage=storage)

    assert storage.row_at_put == [True, True]
    assert default_storage.exists(key)


@pytest.mark.django_db
def test_the_collector_skips_young_referenced_and_foreign_objects():
    young = store(b"young")
    referenced = store(b"referenced")
    orphan = store(b"orphan")
    # Foreign: the legacy archive's copy of these bytes was in the bucket before ingest met
    # them; and an object no row names at all. Neither is ever ingest's to delete.
    foreign_sha1 = hashlib.sha1(b"foreign", usedforsecurity=False).hexdigest()
    foreign = default_storage.save(
        image_key(sha1=foreign_sha1, mime_type="image/jpeg"), ContentFile(b"foreign")
    )
    assert store(b"foreign") == foreign
    untracked = default_storage.save("images/runway/untracked.jpg", ContentFile(b"legacy"))
    for key in (referenced, orphan, foreign):
        age(key)
    RunwayImageFactory(storage_key=referenced)

    result = collect()

    assert result.deleted == [orphan]
    assert (result.tracked, result.too_young, result.referenced) == (3, 1, 1)
    assert result.preexisting == 1
    assert set(StoredObject.objects.values_list("key", flat=True)) == {young, referenced, foreign}
    assert all(default_storage.exists(key) for key in (young, referenced, foreign, untracked))


@pytest.mark.django_db
def test_hold_reports_keys_the_collector_already_deleted():
    kept = store(b"kept")
    gone = store(b"gone")
    age(gone)
    collect()

    with transaction.atomic():
        missing = stored_objects_hold(keys=[kept, gone, kept])

    assert missing == [gone]


# --- Races on PostgreSQL -------------------------------------------------------------------------


def _backend_pid() -> int:
    connection.ensure_connection()
    return connection.connection.info.backend_pid


def _wait_until_blocked(waiting_pid: int, blocking_pid: int) -> None:
    """Return once ``waiting_pid`` waits for a lock ``blocking_pid`` holds (pg_blocking_pids)."""
    db = connection.settings_dict
    deadline = time.monotonic() + WAIT
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    ) as observer:
        while time.monotonic() < deadline:
            row = observer.execute(
                "SELECT %s = ANY(pg_blocking_pids(%s))", [blocking_pid, waiting_pid]
            ).fetchone()
            if row[0]:
                return
            time.sleep(0.01)  # polling the server's lock table, not guessing a duration
    raise AssertionError(f"backend {waiting_pid} never waited for {blocking_pid}")


class PausingStorage:
    """The default storage, except that delete() stops until the test lets it go on."""

    def __init__(self) -> None:
        self.deleting = threading.Event()
        self.go_on = threading.Event()

    def __getattr__(self, name):
        return getattr(default_storage, name)

    def delete(self, name: str) -> None:
        self.deleting.set()
        assert self.go_on.wait(WAIT), "the test never let the delete go on"
        default_storage.delete(name)


def _in_thread(target, results: dict, name: str) -> threading.Thread:
    def run():
        try:
            results[name] = target()
        except BaseException as exc:  # noqa: BLE001 - reported by the test's assertions
            results[name] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_job_storing_a_key_the_collector_is_deleting_waits_and_stores_it_after():
    # Given an old orphan ingest stored, and a collector that has locked its row and is
    # deleting the object right now.
    data = b"the same bytes again"
    key = store(data)
    age(key)
    storage = PausingStorage()
    results: dict = {}
    pids: dict[str, int] = {}

    def run_collector():
        pids["collector"] = _backend_pid()
        return collect(storage=storage)

    collector = _in_thread(run_collector, results, "collector")
    assert storage.deleting.wait(WAIT)

    # When a job stores the same bytes meanwhile (a re-crawl of that picture).
    def run_job():
        pids["job"] = _backend_pid()
        return store(data)

    job = _in_thread(run_job, results, "job")

    # Then the job waits for the collector's row lock before putting anything...
    while "job" not in pids:
        assert job.is_alive(), results
        time.sleep(0.01)  # until the thread has opened its connection
    _wait_until_blocked(pids["job"], pids["collector"])
    assert "job" not in results
    # ...the collector deletes object and row and commits...
    storage.go_on.set()
    collector.join(WAIT)
    job.join(WAIT)
    assert not collector.is_alive() and not job.is_alive()
    assert results["collector"].deleted == [key]
    # ...and only then the job records the key afresh and puts the object: it is there, young.
    assert results["job"] == key
    row = StoredObject.objects.get(key=key)
    assert not row.preexisting
    assert row.last_stored_at > timezone.now() - timedelta(minutes=5)
    with default_storage.open(key) as stored:
        assert stored.read() == data


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_collector_leaves_objects_a_job_is_committing_rows_for():
    # Given an old key that a job's final transaction is about to reference (it holds it).
    key = store(b"held by a job")
    age(key)
    results: dict = {}
    with transaction.atomic():
        assert stored_objects_hold(keys=[key]) == []

        # When the collector runs meanwhile (in its own connection).
        collector = _in_thread(collect, results, "collector")
        collector.join(WAIT)
        assert not collector.is_alive()

        RunwayImageFactory(storage_key=key)

    # Then it skipped the held row rather than waiting or deleting, and after the job's commit
    # the object is referenced: kept for good.
    assert results["collector"].deleted == []
    assert results["collector"].busy == 1
    assert collect().deleted == []
    assert default_storage.exists(key)
    assert StoredObject.objects.filter(key=key).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_jobs_holding_the_same_key_do_not_block_each_other_nor_its_renewal():
    key = store(b"shared")
    results: dict = {}
    with transaction.atomic():
        stored_objects_hold(keys=[key])

        def other_job():
            with transaction.atomic():
                missing = stored_objects_hold(keys=[key])
            return missing, store(b"shared")

        other = _in_thread(other_job, results, "other")
        other.join(WAIT)
        assert not other.is_alive()

    assert results["other"] == ([], key)


# --- Storage keys ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mime_type", "extension"),
    [("image/jpeg", "jpg"), ("image/png", "png"), ("image/webp", "webp"), ("image/gif", "gif")],
)
def test_the_key_is_content_addressed(mime_type, extension):
    assert image_key(sha1=SHA1, mime_type=mime_type) == f"images/01/{SHA1}.{extension}"


@pytest.mark.parametrize(
    ("sha1", "mime_type"),
    [("../../etc/passwd", "image/jpeg"), (SHA1.upper(), "image/jpeg"), (SHA1, "text/html")],
)
def test_a_key_is_only_made_of_a_sha1_and_a_known_type(sha1, mime_type):
    with pytest.raises(ValueError):
        image_key(sha1=sha1, mime_type=mime_type)
