"""The deployment's rq worker class (ingest.worker.IngestWorker), one override at a time, on a
Redis that is down; the whole worker through a real outage is tests/faults'."""

import socket

import pytest
import redis
from django.utils import timezone
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq.job import Job

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


def test_a_heartbeat_while_redis_is_down_neither_ends_the_worker_nor_raises(down):
    # rq sends one between jobs and one right before it kills a hung work horse; its loop
    # quits on any error there.
    worker = worker_cut_off(down)

    worker.heartbeat()
    worker.heartbeat(90)


def test_maintenance_while_redis_is_down_waits_for_redis(down, monkeypatch):
    worker = worker_cut_off(down)
    waited = []
    monkeypatch.setattr(worker, "wait_for_redis", lambda: waited.append(True))

    worker.run_maintenance_tasks()

    assert waited == [True]


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
