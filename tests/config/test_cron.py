"""Scheduled maintenance without cron: rq's cron scheduler (`make scheduler`) enqueues
reconcile, purge_webhook_ids and gc_media on the maintenance queue, and a worker runs them.
Two schedulers at once do no harm, and a Redis outage does not end one. Real processes, short
intervals."""

import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone
from rq import Queue, SimpleWorker
from rq.job import Job

from catalog.models import StoredObject
from ingest.models import IngestJob, UsedWebhookId
from tests.factories import IngestJobFactory, StoredObjectFactory, UsedWebhookIdFactory
from tests.faults.harness import RedisServer, wait_for
from tests.ingest.support import worker_env

ROOT = Path(__file__).resolve().parents[2]
TASKS = ("ingest.tasks.reconcile", "ingest.tasks.purge_webhook_ids", "ingest.tasks.gc_media")

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def manage_process(*args: str, env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    """`manage.py` with `args`; its stderr is a pipe, or with `log` both streams go there."""
    output = log.open("ab") if log else None
    return subprocess.Popen(  # noqa: S603 - our own manage.py, fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=output or subprocess.DEVNULL,
        stderr=output or subprocess.PIPE,
        start_new_session=True,
    )


def enqueued(queue: Queue) -> dict[str, int]:
    counts = dict.fromkeys(TASKS, 0)
    for job in Job.fetch_many(queue.get_job_ids(), connection=queue.connection):
        if job is not None:
            counts[job.func_name] = counts.get(job.func_name, 0) + 1
    return counts


@pytest.fixture
def maintenance_env(rq_queue, settings):
    ingest_queue = f"{rq_queue.name}-ingest"
    yield {
        **worker_env(ingest_queue),
        "MAINTENANCE_QUEUE": rq_queue.name,
        # Every second instead of every minute, hour, day.
        "MAINTENANCE_RECONCILE_SCHEDULE": "1",
        "MAINTENANCE_PURGE_WEBHOOK_IDS_SCHEDULE": "1",
        "MAINTENANCE_GC_MEDIA_SCHEDULE": "1",
        "INGEST_RECONCILE_GRACE_SECONDS": "0",
        "INGEST_MEDIA_GC_GRACE_SECONDS": "0",
        "LOG_LEVEL": "INFO",
    }
    # The schedulers registered themselves under names of their own, listing our queue.
    redis = rq_queue.connection
    for key in list(redis.scan_iter(match="rq:cron_scheduler:*", count=1000)):
        if redis.type(key) == b"hash" and rq_queue.name.encode() in (
            redis.hget(key, "cron_jobs") or b""
        ):
            redis.delete(key)


def test_two_schedulers_and_a_worker_run_every_maintenance_job(rq_queue, maintenance_env):
    # given: work for each job: a queued job that never reached the queue, a webhook id long
    # past its tolerance, an object ingest stored that nothing references
    lost = IngestJobFactory(status="queued")
    IngestJob.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(hours=1))
    old_id = UsedWebhookIdFactory()
    UsedWebhookId.objects.filter(pk=old_id.pk).update(
        received_at=timezone.now() - timedelta(hours=1)
    )
    orphan = StoredObjectFactory(last_stored_at=timezone.now() - timedelta(days=2))
    default_storage.save(orphan.key, ContentFile(b"orphan bytes"))

    # when: two schedulers run by mistake, for a few of their (1 s) periods
    schedulers = [manage_process("rqcron", "config.cron", env=maintenance_env) for _ in range(2)]
    try:
        deadline = time.monotonic() + 90
        while min(enqueued(rq_queue).values()) < 3:
            assert all(s.poll() is None for s in schedulers), schedulers[0].stderr.read()
            assert time.monotonic() < deadline, enqueued(rq_queue)
            time.sleep(0.5)  # waiting for other processes' periods to pass
    finally:
        for scheduler in schedulers:
            os.killpg(scheduler.pid, signal.SIGTERM)
        for scheduler in schedulers:
            scheduler.communicate(timeout=30)

    # and a worker serving the maintenance queue runs what they enqueued
    worker = manage_process("rqworker", rq_queue.name, "--burst", env=maintenance_env)
    _, stderr = worker.communicate(timeout=180)
    assert worker.returncode == 0, stderr.decode()[-3000:]

    # then: each job ran, more than once, and none failed
    finished = rq_queue.finished_job_registry.get_job_ids()
    ran = Job.fetch_many(finished, connection=rq_queue.connection)
    names = [job.func_name for job in ran if job is not None]
    assert all(names.count(task) >= 3 for task in TASKS), names
    assert rq_queue.failed_job_registry.count == 0
    # and each did its work once, the repeats finding nothing left to do
    lost.refresh_from_db()
    assert lost.enqueued_at is not None
    assert Queue(f"{rq_queue.name}-ingest", connection=rq_queue.connection).count == 1
    assert not UsedWebhookId.objects.filter(pk=old_id.pk).exists()
    assert not StoredObject.objects.filter(pk=orphan.pk).exists()
    assert not default_storage.exists(orphan.key)


def test_gc_media_skips_while_another_run_holds_its_lock(rq_queue, settings):
    settings.INGEST_MEDIA_GC_GRACE_SECONDS = 0
    orphan = StoredObjectFactory(last_stored_at=timezone.now() - timedelta(days=2))
    queue = Queue(rq_queue.name, connection=rq_queue.connection)
    job = queue.enqueue("ingest.tasks.gc_media")
    lock = rq_queue.connection.lock(f"archive:lock:gc_media:{rq_queue.name}", timeout=60)
    assert lock.acquire(blocking=False)
    try:
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
    finally:
        lock.release()

    assert job.latest_result().return_value == "skipped: another gc_media is running"
    assert StoredObject.objects.filter(pk=orphan.pk).exists()

    # once the lock is free, the next run collects
    job = queue.enqueue("ingest.tasks.gc_media")
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    assert job.latest_result().return_value == "deleted 1"
    assert not StoredObject.objects.filter(pk=orphan.pk).exists()


@pytest.mark.slow
def test_the_scheduler_rides_out_a_redis_outage(tmp_path):
    # Given the scheduler on a Redis of the test's own, enqueueing reconcile every 2 s (the
    # media sweep keeps its schedule, every 5 minutes).
    server = RedisServer()
    server.start()
    queue_name = f"maintenance-{uuid.uuid4().hex[:8]}"
    env = {
        **worker_env(f"{queue_name}-ingest"),
        "REDIS_URL": server.url,
        "MAINTENANCE_QUEUE": queue_name,
        "MAINTENANCE_RECONCILE_SCHEDULE": "2",
        "LOG_LEVEL": "INFO",
    }
    log = tmp_path / "rqcron.log"
    scheduler = manage_process("rqcron", "config.cron", env=env, log=log)
    client = redis.Redis.from_url(server.url, socket_connect_timeout=2)
    queue = Queue(queue_name, connection=client)

    def enqueued() -> set[str]:
        try:
            jobs = Job.fetch_many(queue.get_job_ids(), connection=client)
        except redis.ConnectionError:
            return set()
        return {job.func_name for job in jobs if job is not None}

    try:
        wait_for(lambda: enqueued(), timeout=60, what="the first reconcile")

        # When Redis stops for a few seconds and comes back empty on the same port.
        server.stop()
        time.sleep(5)
        server.start()

        # Then the same process says Redis is back and enqueues again, the media sweep too
        # (at once, not at its next time): whatever the outage kept from the queues goes out.
        wait_for(lambda: "Redis is back" in log.read_text(), timeout=30, what="the notice")
        wanted = {"ingest.tasks.reconcile", "catalog.tasks.media_sweep"}
        wait_for(lambda: wanted <= enqueued(), timeout=30, what=f"{wanted} enqueued")
        assert scheduler.poll() is None, log.read_text()
        # and a worker runs them.
        worker = manage_process("rqworker", queue_name, "--burst", env=env, log=log)
        assert worker.wait(timeout=180) == 0, log.read_text()
        finished = Job.fetch_many(queue.finished_job_registry.get_job_ids(), connection=client)
        assert wanted <= {job.func_name for job in finished if job is not None}
        assert queue.failed_job_registry.count == 0

        # And stopped during the next outage, it stops cleanly.
        server.stop()
        wait_for(lambda: log.read_text().count(": Redis unavailable (") == 2, timeout=30)
        os.killpg(scheduler.pid, signal.SIGTERM)
        assert scheduler.wait(timeout=30) == 0
    finally:
        if scheduler.poll() is None:
            os.killpg(scheduler.pid, signal.SIGKILL)
            scheduler.wait(timeout=30)
        client.close()
        server.stop()

    # The log said once per outage that Redis went, once that it came back, without a
    # traceback.
    text = log.read_text()
    assert text.count(": Redis unavailable (") == 2, text
    assert text.count(": Redis is back after") == 1, text
    assert "Traceback" not in text, text
