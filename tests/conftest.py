import os
import uuid

import pytest
import time_machine
from django.db import connection, connections
from django.test import override_settings
from hypothesis import HealthCheck, settings
from playwright.sync_api import sync_playwright

from tests.support import TEST_REDIS_URL

# Property tests: thorough in CI on PostgreSQL, production's database; quicker by hand and in
# CI's SQLite pass, which checks that the suite is portable (the thorough search for a
# counter-example has run on PostgreSQL). Database examples are slow-ish, so no deadline; the
# function-scoped `db` fixture is fine because each example rolls back its own savepoint (see
# tests.support.rollback_each_example).
for name, examples in (("thorough", 200), ("quick", 50)):
    settings.register_profile(
        name,
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def pytest_configure(config):
    thorough = os.environ.get("CI") and connection.vendor == "postgresql"
    settings.load_profile("thorough" if thorough else "quick")


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
def _redis_breakers_closed():
    # A breaker's state is the process's: one test's dead Redis must not make the next test
    # skip its own.
    from config.health import redis_breaker as probes
    from ingest.queueing import redis_breaker as enqueues
    from publicapi.throttling import redis_breaker as throttle

    breakers = [probes, enqueues, throttle]
    for breaker in breakers:
        breaker.close()
    yield
    for breaker in breakers:
        breaker.close()


@pytest.fixture(autouse=True)
def _background_jobs_end_before_the_flush(request):
    # A test that commits (transaction=True) may leave an in-process job running (the embedded
    # mode's thread pool: a visibility run after a commit); the database's flush at teardown
    # must not race it for the tables' locks.
    marker = request.node.get_closest_marker("django_db")
    if marker is None or not marker.kwargs.get("transaction"):
        yield
        return
    request.getfixturevalue("_django_db_helper")  # set up first, so torn down after this
    yield
    from ingest import thread_pool

    thread_pool.wait_idle(timeout=60)


@pytest.fixture
def embargo_clock():
    """``embargo_clock(start)``: time-machine's clock at ``start`` (frozen), with the
    database's embargo clock following it (archive_now(), catalog/public_rows.py: PostgreSQL's
    now() otherwise; on SQLite it is the application's clock already). ``.move_to(moment)``
    moves both."""
    from django.db import connection

    from catalog.public_rows import CLOCK

    class Clock:
        def __init__(self, traveller):
            self.traveller = traveller

        def move_to(self, moment) -> None:
            self.traveller.move_to(moment)
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(  # our own value, not a parameter: none in a function body
                        "CREATE OR REPLACE FUNCTION archive_now() RETURNS timestamptz "
                        f"LANGUAGE sql STABLE AS $$ SELECT '{moment.isoformat()}'::timestamptz $$"
                    )

    travels = []

    def start(moment):
        travel = time_machine.travel(moment, tick=False)
        clock = Clock(travel.start())
        travels.append(travel)
        clock.move_to(moment)
        return clock

    yield start
    for travel in travels:
        travel.stop()
    if connection.vendor == "postgresql" and travels:
        with connection.cursor() as cursor:
            cursor.execute(CLOCK)


@pytest.fixture
def hung_redis():
    """A Redis that accepts connections and never answers (tests.support.HungRedis)."""
    from tests.support import HungRedis

    server = HungRedis()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _test_settings(settings, tmp_path):
    # Tests write media to a throwaway folder (plain HTTP: see the session fixture above).
    # The embedded mode's stores: one private folder, the media route as its public face.
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_PUBLIC_COPIES = False
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": tmp_path / "media", "base_url": "/admin/media/"},
        },
        "public": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": tmp_path / "media", "base_url": "/media/"},
        },
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.EDGE_PURGE_BACKEND = ""


# --- Shared by the ingest, operations and scenario tests ------------------------------------------


@pytest.fixture
def image_server():
    """A local HTTP server: the "internet" the worker downloads from (tests.ingest.support)."""
    from tests.ingest.support import ImageServer

    server = ImageServer()
    yield server
    server.close()


@pytest.fixture
def rq_queue(settings):
    """A queue of our own on TEST_REDIS_URL, so nothing else on that Redis is touched.

    Every key we create carries the queue's unique name: the queue and its registries, the rq
    job ids (ingest.queueing.rq_job_id) and their results, and the names we give workers. So
    cleaning up is deleting the keys that match it, and dropping our workers from rq's sets.
    """
    import django_rq

    name = f"ingest-test-{uuid.uuid4().hex[:10]}"
    settings.REDIS_URL = TEST_REDIS_URL
    settings.INGEST_QUEUE = name
    # Its renditions queue too (the `renditions_queue` fixture), named after it.
    settings.RENDITIONS_QUEUE = f"{name}-renditions"
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        name: {"URL": TEST_REDIS_URL, "DEFAULT_TIMEOUT": 120},
        settings.RENDITIONS_QUEUE: {"URL": TEST_REDIS_URL, "DEFAULT_TIMEOUT": 120},
    }
    queue = django_rq.get_queue(name)
    yield queue
    redis = queue.connection
    for key in list(redis.scan_iter(match=f"*{name}*", count=1000)):
        redis.delete(key)
    for registry_set in ("rq:workers", "rq:queues"):
        for member in redis.smembers(registry_set):
            if name.encode() in member:
                redis.srem(registry_set, member)
    # A worker run --with-scheduler registers its scheduler under a random id, naming the
    # queues it serves.
    for key in list(redis.scan_iter(match="rq:scheduler:*", count=1000)):
        if redis.type(key) == b"hash" and name.encode() in (redis.hget(key, "queues") or b""):
            redis.delete(key)


@pytest.fixture
def renditions_queue(rq_queue, settings):
    """The renditions queue of ``rq_queue``'s test (cleaned up with it)."""
    import django_rq

    return django_rq.get_queue(settings.RENDITIONS_QUEUE)


# --- S3 (moto in server mode) --------------------------------------------------------------------


@pytest.fixture(scope="session")
def moto_s3():
    """The tests' one S3 server (moto in server mode, on a free port): its URL. Each test that
    uses it makes a bucket of its own (s3_storage below, the fault suite's `bucket`)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_storage(settings, moto_s3):
    """STORAGES["default"] and ["public"] on a fresh bucket of the moto server, as production
    configures them."""
    import boto3

    bucket = f"archive-test-{uuid.uuid4().hex[:12]}"
    options = {
        "endpoint_url": moto_s3,
        "access_key": "testing",
        "secret_key": "testing",
        "region_name": "us-east-1",
    }
    boto3.client(
        "s3",
        endpoint_url=moto_s3,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    ).create_bucket(Bucket=bucket)
    # As production configures them: everything in the bucket, private, and the public
    # copies under public/ in the same bucket (catalog.visibility).
    settings.MEDIA_PUBLIC_COPIES = True
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                **options,
                "bucket_name": bucket,
                "querystring_auth": True,
                "file_overwrite": True,
            },
        },
        "public": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                **options,
                "bucket_name": bucket,
                "location": "public",
                "querystring_auth": False,
                "file_overwrite": True,
            },
        },
    }
    return bucket


# --- The browser tests (tests/review/test_browser_*.py, tests/scenarios/) -------------------------

CHROMIUM = "/usr/bin/chromium"  # Debian's package, installed by scripts/browser.sh
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser_page(monkeypatch):
    # Playwright's sync API runs an asyncio event loop in this thread, and Django refuses
    # ORM calls from a thread with a running loop (SynchronousOnlyOperation). The test's
    # own queries are plain synchronous ones between browser steps, so allow them here.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        # The review pages ask in a dialog of their own (review.js), never with the browser's
        # confirm() or alert(): one appearing is a failure of the test.
        native: list[str] = []
        page.on("dialog", lambda dialog: (native.append(dialog.message), dialog.dismiss()))
        # A script error on a page is a failure too, whatever the test looked at.
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        try:
            yield page
            assert native == [], f"the page opened the browser's own dialog: {native}"
            assert errors == [], f"a script of the page failed: {errors}"
        finally:
            browser.close()
            # Django keeps connections per execution context (asgiref Local), and Playwright's
            # sync API runs this test in a context of its own (a greenlet beside its event
            # loop), so the test's queries used a connection of their own: close it here, or
            # it outlives the test database.
            connections.close_all()


# --- Visibility: a folder of public copies (catalog.visibility) -------------------------------


@pytest.fixture
def public_copies(settings, tmp_path):
    """The public store as a folder of copies, as PUBLIC_MEDIA_ROOT configures it: bytes move
    there as albums are published and leave as they are withdrawn; /media/ serves it as it is."""
    settings.MEDIA_PUBLIC_COPIES = True
    settings.STORAGES = {
        **settings.STORAGES,
        "public": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": tmp_path / "public", "base_url": "/media/"},
        },
    }
    return tmp_path / "public"
