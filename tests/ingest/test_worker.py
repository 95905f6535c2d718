"""The deployment's rq worker class (ingest.worker.IngestWorker), one override at a time, on a
Redis that is down; the whole worker through a real outage is tests/faults'."""

import logging
import socket

import pytest
import redis
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq.job import Job

from ingest import worker as worker_module
from ingest.models import IngestJob
from ingest.services import ingest_job_claim
from ingest.tasks import run_ingest_job
from ingest.worker import IngestWorker
from tests.factories import IngestJobFactory
from tests.support import TEST_REDIS_URL


@pytest.fixture
def down() -> redis.Redis:
    """A Redis client for a port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return redis.Redis(
        host="127.0.0.1", port=port, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )


def worker_cut_off(down: redis.Redis) -> IngestWorker:
    """A worker that registered with Redis (rq's constructor needs it), which then went down."""
    worker = IngestWorker(["ingest-test"], connection=redis.Redis.from_url(TEST_REDIS_URL))
    worker.connection = down
    return worker


def test_a_heartbeat_while_a_horse_runs_neither_ends_the_worker_nor_waits(down, monkeypatch):
    # rq sends these while it watches a work horse, and right before it kills a hung one; its
    # loop quits on any error there, and waiting would spare the hung horse.
    worker = worker_cut_off(down)
    monkeypatch.setattr(IngestWorker, "horse_pid", property(lambda self: 4242))
    monkeypatch.setattr(worker, "wait_for_redis", lambda *args: pytest.fail("waited"))

    worker.heartbeat()
    worker.heartbeat(90)


def test_a_heartbeat_between_jobs_waits_for_redis(down, monkeypatch):
    # rq's dequeue loop sends one before each try: waiting there keeps it from logging a
    # retry after retry, and from going on without its scheduler.
    worker = worker_cut_off(down)
    waited = []
    monkeypatch.setattr(worker, "wait_for_redis", lambda *args: waited.append(True))

    worker.heartbeat()

    assert waited == [True]


def test_setting_its_state_while_redis_is_down_does_not_end_the_worker(down):
    # rq sets it first thing in its dequeue loop, outside the loop's own catch.
    worker = worker_cut_off(down)

    worker.set_state("idle")

    assert worker.get_state() == "idle"


def test_maintenance_while_redis_is_down_waits_for_redis(down, monkeypatch):
    worker = worker_cut_off(down)
    waited = []
    monkeypatch.setattr(worker, "wait_for_redis", lambda *args: waited.append(True))

    worker.run_maintenance_tasks()

    assert waited == [True]


def test_an_outage_is_one_warning_however_often_it_is_met(down, monkeypatch, caplog):
    worker = worker_cut_off(down)
    monkeypatch.setattr(IngestWorker, "horse_pid", property(lambda self: 4242))

    with caplog.at_level(logging.WARNING, logger="rq.worker"):
        for _ in range(5):
            worker.heartbeat()

    warnings = [r.getMessage() for r in caplog.records if "Redis unavailable" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"Worker {worker.name}: Redis unavailable (Error 111")


def test_redis_back_empty_gets_the_worker_registered_again(rq_queue, caplog):
    # Given a worker whose record Redis lost (restarted empty) but for the last_heartbeat a
    # heartbeat wrote since, as happens while a job runs through the outage.
    worker = IngestWorker([rq_queue.name], connection=rq_queue.connection, name=rq_queue.name)
    worker.register_birth()
    worker.connection.delete(worker.key)
    worker.connection.srem("rq:workers", worker.key)
    worker.connection.hset(worker.key, "last_heartbeat", "2026-01-01T00:00:00.000000Z")
    worker._redis_lost(redis.ConnectionError("gone"))

    # When the worker finds Redis answering again.
    with caplog.at_level(logging.INFO, logger="rq.worker"):
        worker.wait_for_redis()

    # Then it is registered again, in its hash and in rq's set of workers, and says so.
    assert worker.connection.hexists(worker.key, "birth")
    assert worker.key.encode() in worker.connection.smembers("rq:workers")
    back = [r.getMessage() for r in caplog.records if "Redis is back" in r.getMessage()]
    assert len(back) == 1 and back[0].startswith(f"Worker {worker.name}: Redis is back after")


@pytest.mark.django_db
def test_a_killed_work_horse_ends_its_jobs_lease(down, settings):
    # Given a job its work horse claimed and renews, and the horse killed (the OOM killer).
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    job = IngestJobFactory(status="queued")
    assert ingest_job_claim(job_id=job.pk, lease=True) is not None
    rq_job = Job.create(run_ingest_job, args=(job.pk,), connection=down)
    worker = worker_cut_off(down)

    worker.handle_work_horse_killed(rq_job, 4242, 9, None)

    # Then rq's retry, right after, takes the job over instead of waiting 90 s for silence.
    lease = IngestJob.objects.values_list("heartbeat_at", flat=True).get(pk=job.pk)
    assert lease < timezone.now() - timezone.timedelta(seconds=90)
    claim = ingest_job_claim(job_id=job.pk, lease=True)
    assert claim is not None and claim.attempt == 2


def test_the_pubsub_thread_waits_out_an_outage_quietly_and_ends_on_anything_else(
    rq_queue, monkeypatch, caplog
):
    # rq's handler logs an error every 2 s of an outage.
    worker = IngestWorker([rq_queue.name], connection=rq_queue.connection, name=rq_queue.name)
    worker.subscribe()
    handler = worker.pubsub_thread.exception_handler
    slept = []
    monkeypatch.setattr(worker_module.time, "sleep", slept.append)
    try:
        with caplog.at_level(logging.INFO, logger="rq.worker"):
            handler(redis.ConnectionError("gone"), worker.pubsub, worker.pubsub_thread)
        with pytest.raises(ValueError, match="a bug"):
            handler(ValueError("a bug"), worker.pubsub, worker.pubsub_thread)
    finally:
        worker.unsubscribe()

    assert slept == [2.0]
    assert "gone" not in caplog.text
