"""ingest.tasks on real rq workers against the real Redis: a job enqueued by the endpoint's path
runs end to end, transient errors are retried by rq, a worker killed mid-job is reclaimed, and a
dropped database connection is survived. Rows must be committed for a worker to see them, hence
transactional tests."""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from rq import SimpleWorker
from rq.job import Job, JobStatus

from catalog.models import Runway, RunwayImage
from ingest import downloads
from ingest.maintenance import ingest_jobs_reconcile
from ingest.models import IngestJob
from ingest.queueing import rq_job_id
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, runway_album, worker_env
from tests.support import TEST_REDIS_URL, descendants

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _brand():
    BrandFactory(name="Acme", slug="acme")


def accept(urls: list[str]) -> IngestJob:
    """Accept an album as the endpoint does: the enqueue runs once the job row is committed."""
    return ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(runway_album(urls))
    )


def burst(queue) -> None:
    """A real rq worker (no fork) in this thread: runs the queue empty, then returns."""
    worker = SimpleWorker([queue], connection=queue.connection, name=f"{queue.name}-simple")
    worker.work(burst=True)


def test_a_real_rq_worker_runs_an_accepted_job_end_to_end(rq_queue, image_server):
    urls = [
        image_server.add("/1.jpg", jpeg("astronaut", size=256)),
        image_server.add("/2.jpg", jpeg("coffee", size=256)),
    ]

    job = accept(urls)

    job.refresh_from_db()
    assert job.enqueued_at is not None
    assert rq_queue.get_job_ids() == [rq_job_id(job.pk)]
    burst(rq_queue)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.attempts == 1
    assert Runway.objects.get().image_count == 2
    rq_job = Job.fetch(rq_job_id(job.pk), connection=rq_queue.connection)
    assert rq_job.get_status() == JobStatus.FINISHED
    assert rq_job.return_value() == "succeeded"


def test_a_transient_error_of_the_whole_job_is_retried_by_rq(rq_queue, image_server, settings):
    # Interval 0: rq puts the job straight back on the queue, so a burst worker retries it
    # without waiting for its scheduler. The site is down for the first attempt's three tries.
    settings.INGEST_RETRY_INTERVALS = [0, 0]
    url = image_server.add("/flaky.jpg", jpeg("rocket", size=256), failures_first=(503,) * 3)

    job = accept([url])
    burst(rq_queue)

    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.attempts == 2
    assert image_server.hits["/flaky.jpg"] == 4


def test_an_image_that_stays_down_does_not_hold_the_album_back(rq_queue, image_server, settings):
    settings.INGEST_RETRY_INTERVALS = [0]
    good = image_server.add("/good.jpg", jpeg("rocket", size=256))
    down = image_server.add("/down.jpg", b"", failures_first=(503,) * 9)

    job = accept([good, down])
    burst(rq_queue)

    job.refresh_from_db()
    assert job.status == "succeeded"
    assert job.attempts == 1
    assert job.report["issues"] == [{"index": 1, "url": down, "reason": "HTTP 503 (3 tries)"}]
    assert image_server.hits["/good.jpg"] == 1


def test_an_rq_job_timeout_is_retried_like_any_transient_error(rq_queue, image_server, settings):
    # Given a two-second job timeout, a download budget it cannot cover, and a server that
    # holds the first request for the image: the download ends by its 3 s read timeout, after
    # rq's timeout. (The retry, served at once, has the full two seconds.)
    settings.INGEST_RETRY_INTERVALS = [0]
    settings.INGEST_JOB_TIMEOUT = 2
    settings.INGEST_READ_TIMEOUT = 3.0
    settings.INGEST_DOWNLOAD_BUDGET = 30
    url = image_server.add("/slow.jpg", jpeg("astronaut", size=256), hold_first=True)

    # When a real worker runs it: rq raises its timeout inside the job.
    job = accept([url])
    burst(rq_queue)

    # Then the first attempt was handed back for a retry, not failed as a bug, and the retry
    # (the server answers at once now) succeeded.
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.attempts == 2
    assert image_server.hits["/slow.jpg"] == 2
    rq_job = Job.fetch(rq_job_id(job.pk), connection=rq_queue.connection)
    assert rq_job.get_status() == JobStatus.FINISHED


def test_an_unknown_brand_is_not_retried(rq_queue, image_server):
    url = image_server.add("/1.jpg", jpeg("astronaut", size=256))
    job = ingest_job_accept(
        webhook_id="msg_nobody", album=album_validate(runway_album([url], brand="Nobody"))
    )

    burst(rq_queue)

    job.refresh_from_db()
    assert (job.status, job.reason, job.attempts) == ("failed", "unknown_brand", 1)
    rq_job = Job.fetch(rq_job_id(job.pk), connection=rq_queue.connection)
    assert rq_job.get_status() == JobStatus.FINISHED  # ended by us, not by an rq failure


def test_redis_down_at_accept_time_loses_nothing(rq_queue, image_server, settings):
    url = image_server.add("/1.jpg", jpeg("astronaut", size=256))
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        rq_queue.name: {"URL": settings.REDIS_URL, "DEFAULT_TIMEOUT": 60},
    }

    job = accept([url])

    job.refresh_from_db()
    assert (job.status, job.enqueued_at) == ("queued", None)
    # Redis is back; reconcile (from cron) hands the job over once its grace has passed.
    settings.REDIS_URL = TEST_REDIS_URL
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        rq_queue.name: {"URL": TEST_REDIS_URL, "DEFAULT_TIMEOUT": 60},
    }
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    result = ingest_jobs_reconcile()
    assert result.enqueued == [job.pk]
    burst(rq_queue)
    job.refresh_from_db()
    assert job.status == "succeeded"


@pytest.mark.postgres
def test_a_dropped_database_connection_is_retried(rq_queue, image_server, settings, monkeypatch):
    settings.INGEST_RETRY_INTERVALS = [0]
    url = image_server.add("/1.jpg", jpeg("astronaut", size=256))
    real_download = downloads.download_all
    dropped = []

    def download_then_drop(urls, **kwargs):
        outcomes = real_download(urls, **kwargs)
        if not dropped:
            # The database restarts (or a proxy drops us) while the worker downloads.
            pid = connection.connection.info.backend_pid
            with psycopg.connect(**_libpq(), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            dropped.append(pid)
        return outcomes

    monkeypatch.setattr(downloads, "download_all", download_then_drop)

    job = accept([url])
    burst(rq_queue)

    job.refresh_from_db()
    assert dropped
    assert job.status == "succeeded", job.error
    assert job.attempts == 2
    assert Runway.objects.count() == 1


# --- The real command, in its own process ---------------------------------------------------------


def _libpq() -> dict:
    db = connection.settings_dict
    return {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "dbname": db["NAME"]}


def rqworker(queue_name: str, *extra: str, **popen) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
        [
            sys.executable,
            "manage.py",
            "rqworker",
            queue_name,
            "--with-scheduler",
            "--name",
            f"{queue_name}-{uuid.uuid4().hex[:6]}",
            *extra,
        ],
        cwd=ROOT,
        env=worker_env(queue_name),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **popen,
    )


@pytest.mark.postgres
@pytest.mark.slow
def test_the_rqworker_command_runs_jobs_and_their_retries(rq_queue, image_server, settings):
    settings.INGEST_RETRY_INTERVALS = [0]
    urls = [
        # The site is down for the first attempt (three tries of each image): rq retries.
        image_server.add("/1.jpg", jpeg("astronaut", size=256), failures_first=(502,) * 3),
        image_server.add("/2.jpg", jpeg("coffee", size=256), failures_first=(502,) * 3),
    ]
    job = accept(urls)

    worker = rqworker(rq_queue.name, "--burst")
    output, _ = worker.communicate(timeout=240)

    assert worker.returncode == 0, output
    job.refresh_from_db()
    assert job.status == "succeeded", (job.error, output)
    assert job.attempts == 2
    assert RunwayImage.objects.count() == 2
    for image in RunwayImage.objects.all():
        assert (Path(settings.MEDIA_ROOT) / image.storage_key).is_file()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_killed_mid_job_is_reclaimed_and_makes_one_record(
    rq_queue, image_server, settings
):
    # Given a worker process downloading a job's image (the server holds the first request).
    urls = [image_server.add("/held.jpg", jpeg("astronaut", size=256), hold_first=True)]
    job = accept(urls)
    worker = rqworker(rq_queue.name)
    try:
        assert image_server.held.wait(timeout=120), "the worker never started the download"
    finally:
        # When it is killed outright (OOM killer, node lost): no handler of ours runs. rq's
        # work horse runs in a session of its own, so it is killed by pid, with its parent.
        for pid in [*descendants(worker.pid), worker.pid]:
            os.kill(pid, signal.SIGKILL)
        output, _ = worker.communicate(timeout=60)
    job.refresh_from_db()
    assert job.status == "running", (job.error, job.attempts, output)

    # Then reconcile, once the job has run longer than any real job, reclaims it...
    settings.INGEST_STALE_AFTER_SECONDS = 0
    result = ingest_jobs_reconcile()
    assert result.stale == [job.pk]
    assert result.enqueued == [job.pk]
    job.refresh_from_db()
    assert job.status == "stale"

    # ...and the next worker finishes it: one record, nothing half-written.
    second = rqworker(rq_queue.name, "--burst")
    output, _ = second.communicate(timeout=240)
    job.refresh_from_db()
    assert job.status == "succeeded", (job.error, output)
    assert job.attempts == 2
    assert Runway.objects.count() == 1
    assert RunwayImage.objects.count() == 1
