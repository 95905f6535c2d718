"""Job transitions and maintenance: retry from the admin, reconcile (never-enqueued, lost by
Redis, stale), purging used webhook ids, and the commands cron runs."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from rq.job import Job

from ingest import maintenance, queueing
from ingest.maintenance import ingest_jobs_reconcile, webhook_ids_purge
from ingest.models import IngestJob, UsedWebhookId
from ingest.queueing import rq_job_id
from ingest.services import (
    JobStateError,
    ingest_job_claim,
    ingest_job_retry,
)
from tests.factories import IngestJobFactory, UsedWebhookIdFactory

pytestmark = pytest.mark.django_db


def ago(**delta) -> timezone.datetime:
    return timezone.now() - timedelta(**delta)


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    """Job ids handed to the queue, instead of running them."""
    calls: list[int] = []

    def fake_enqueue(*, job_id: int) -> bool:
        calls.append(job_id)
        IngestJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
        return True

    monkeypatch.setattr(queueing, "ingest_job_enqueue", fake_enqueue)
    return calls


# --- Retry (the admin's action) ------------------------------------------------------------------


@pytest.mark.parametrize("status", ["failed", "stale"])
def test_a_failed_or_stale_job_is_queued_again_after_commit(
    status, enqueued, django_capture_on_commit_callbacks
):
    job = IngestJobFactory(
        status=status, reason="unknown_brand", error="Unknown brand", attempts=1, report={"x": 1}
    )

    with django_capture_on_commit_callbacks(execute=True):
        ingest_job_retry(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.reason, job.error, job.report) == ("queued", "", "", {})
    assert job.attempts == 1  # keeps counting
    assert enqueued == [job.pk]


@pytest.mark.parametrize("status", ["queued", "running", "succeeded", "skipped"])
def test_other_jobs_cannot_be_retried(status, enqueued):
    job = IngestJobFactory(status=status)

    with pytest.raises(JobStateError):
        ingest_job_retry(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == status
    assert enqueued == []


# --- Claim ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["succeeded", "skipped", "failed"])
def test_claiming_a_finished_job_does_nothing(status):
    job = IngestJobFactory(status=status, attempts=1)

    assert ingest_job_claim(job_id=job.pk) is None
    job.refresh_from_db()
    assert (job.status, job.attempts) == (status, 1)


@pytest.mark.parametrize("status", ["queued", "stale", "running"])
def test_claiming_counts_the_attempt(status):
    job = IngestJobFactory(status=status, attempts=2)

    claim = ingest_job_claim(job_id=job.pk)

    job.refresh_from_db()
    assert claim.attempt == 3
    assert (job.status, job.attempts) == ("running", 3)
    assert job.started_at is not None


def test_claiming_a_missing_job_does_nothing():
    assert ingest_job_claim(job_id=123_456) is None


def test_a_job_that_keeps_losing_its_worker_fails_as_worker_died(settings, enqueued):
    # Given a job whose executions die with their worker: each next claim finds it running.
    settings.INGEST_MAX_LOST_EXECUTIONS = 3
    job = IngestJobFactory(status="running", attempts=1)

    claims = [ingest_job_claim(job_id=job.pk) for _ in range(3)]

    # Then the third lost execution ends it, readably, instead of a fourth run.
    assert [claim is not None for claim in claims] == [True, True, False]
    job.refresh_from_db()
    assert (job.status, job.reason, job.lost_executions, job.attempts) == (
        "failed",
        "worker_died",
        3,
        3,
    )
    assert "died 3 times" in job.error
    assert job.finished_at is not None
    # A person can still retry it, with a fresh count.
    ingest_job_retry(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.lost_executions) == ("queued", 0)


def test_executions_that_end_normally_are_not_counted_as_lost(settings):
    job = IngestJobFactory(status="queued", attempts=0)
    for _ in range(4):
        assert ingest_job_claim(job_id=job.pk) is not None
        IngestJob.objects.filter(pk=job.pk).update(status="queued")  # released for rq's retry

    job.refresh_from_db()
    assert (job.attempts, job.lost_executions) == (4, 0)


# --- Reconcile ------------------------------------------------------------------------------------


def test_reconcile_enqueues_a_job_that_never_reached_the_queue(enqueued, settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 60
    lost = IngestJobFactory()
    IngestJob.objects.filter(pk=lost.pk).update(created_at=ago(minutes=5))
    just_accepted = IngestJobFactory()  # its on-commit enqueue may still be under way

    result = ingest_jobs_reconcile()

    assert result.enqueued == [lost.pk]
    assert enqueued == [lost.pk]
    assert just_accepted.pk not in enqueued


def test_reconcile_marks_a_job_running_too_long_stale_and_queues_it(enqueued, settings):
    settings.INGEST_STALE_AFTER_SECONDS = 3600
    stuck = IngestJobFactory(status="running", attempts=1, enqueued_at=ago(hours=3))
    IngestJob.objects.filter(pk=stuck.pk).update(started_at=ago(hours=2), created_at=ago(hours=3))
    busy = IngestJobFactory(status="running", attempts=1, enqueued_at=ago(minutes=3))
    IngestJob.objects.filter(pk=busy.pk).update(started_at=ago(minutes=2))

    result = ingest_jobs_reconcile()

    stuck.refresh_from_db()
    busy.refresh_from_db()
    assert result.stale == [stuck.pk]
    assert result.enqueued == [stuck.pk]
    assert stuck.status == "stale"
    assert "reclaimed" in stuck.error
    assert stuck.lost_executions == 1
    assert busy.status == "running"


def test_reconcile_fails_a_job_reclaimed_too_often_as_worker_died(enqueued, settings):
    # Given a job whose worker died twice before, running for hours on a third that died.
    settings.INGEST_MAX_LOST_EXECUTIONS = 3
    poison = IngestJobFactory(status="running", attempts=3, lost_executions=2)
    IngestJob.objects.filter(pk=poison.pk).update(started_at=ago(hours=2), created_at=ago(hours=3))

    result = ingest_jobs_reconcile()

    poison.refresh_from_db()
    assert result.worker_died == [poison.pk]
    assert result.stale == result.enqueued == enqueued == []
    assert (poison.status, poison.reason, poison.lost_executions) == ("failed", "worker_died", 3)


def test_reconcile_leaves_a_job_claimed_again_since_it_was_judged(enqueued, settings):
    # Judged dead from an old execution, claimed again before reconcile took the row's lock.
    settings.INGEST_STALE_AFTER_SECONDS = 3600
    fresh = IngestJobFactory(status="running", attempts=2, lost_executions=1)
    IngestJob.objects.filter(pk=fresh.pk).update(
        started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    result = maintenance.ReconcileResult()

    maintenance._reclaim({fresh.pk}, {fresh.pk}, result, now=timezone.now())

    fresh.refresh_from_db()
    assert result.stale == result.worker_died == []
    assert (fresh.status, fresh.lost_executions) == ("running", 1)


def test_reconcile_leaves_finished_jobs_alone(enqueued):
    for status in ["succeeded", "skipped", "failed"]:
        job = IngestJobFactory(status=status)
        IngestJob.objects.filter(pk=job.pk).update(created_at=ago(days=1))

    assert ingest_jobs_reconcile().enqueued == []


def test_embedded_reconcile_requeues_a_queued_job_whose_process_died(enqueued, settings):
    settings.INGEST_STALE_AFTER_SECONDS = 3600
    orphan = IngestJobFactory(enqueued_at=ago(hours=2))
    IngestJob.objects.filter(pk=orphan.pk).update(created_at=ago(hours=2))
    waiting = IngestJobFactory(enqueued_at=ago(minutes=10))
    IngestJob.objects.filter(pk=waiting.pk).update(created_at=ago(minutes=10))

    assert ingest_jobs_reconcile().enqueued == [orphan.pk]


def test_reconcile_requeues_a_job_that_redis_lost(rq_queue, settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    on_queue = IngestJobFactory()
    lost = IngestJobFactory()
    assert queueing.ingest_job_enqueue(job_id=on_queue.pk)
    assert queueing.ingest_job_enqueue(job_id=lost.pk)
    # Redis restarted without persistence: the job is gone from it, not from the database.
    Job.fetch(rq_job_id(lost.pk), connection=rq_queue.connection).delete()

    result = ingest_jobs_reconcile()

    assert result.enqueued == [lost.pk]
    assert sorted(rq_queue.get_job_ids()) == sorted([rq_job_id(on_queue.pk), rq_job_id(lost.pk)])


def started_on(rq_queue, job_id: int, *, worker: str, heartbeat_ago: float) -> None:
    """The job's rq job as a worker that took it leaves it: STARTED, with its name and
    heartbeat (what rq's worker writes when it starts a job)."""
    rq_job = Job.fetch(rq_job_id(job_id), connection=rq_queue.connection)
    rq_queue.connection.lrem(rq_queue.key, 0, rq_job.id)
    rq_job.set_status("started")
    rq_job.worker_name = worker
    rq_job.last_heartbeat = timezone.now() - timedelta(seconds=heartbeat_ago)
    rq_job.save()


def test_reconcile_requeues_a_job_whose_worker_died_before_claiming_it(rq_queue, settings):
    # Given two queued jobs (never claimed: attempts 0) that workers took from the queue; one
    # worker is alive and sends heartbeats, the other was killed (its heartbeats stopped).
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    alive, orphan = IngestJobFactory(), IngestJobFactory()
    for job in (alive, orphan):
        assert queueing.ingest_job_enqueue(job_id=job.pk)
    name = f"{rq_queue.name}-alive"
    rq_queue.connection.hset(f"rq:worker:{name}", "last_heartbeat", "x")
    started_on(rq_queue, alive.pk, worker=name, heartbeat_ago=5)
    started_on(rq_queue, orphan.pk, worker=f"{rq_queue.name}-dead", heartbeat_ago=5)

    result = ingest_jobs_reconcile()

    # Then only the orphan goes back on the queue.
    assert result.enqueued == [orphan.pk]
    assert rq_queue.get_job_ids() == [rq_job_id(orphan.pk)]


def test_reconcile_reclaims_a_running_job_whose_lease_went_silent(enqueued, settings):
    # Given two jobs running for minutes: one's work horse renews its lease, the other's was
    # killed two minutes ago (three renewals missed: 3 x 30 s).
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    alive = IngestJobFactory(status="running", attempts=1)
    dead = IngestJobFactory(status="running", attempts=1)
    for job, renewed in ((alive, ago(seconds=20)), (dead, ago(minutes=2))):
        IngestJob.objects.filter(pk=job.pk).update(started_at=ago(minutes=5), heartbeat_at=renewed)

    result = ingest_jobs_reconcile()

    # Then only the dead one is reclaimed, long before INGEST_STALE_AFTER_SECONDS.
    alive.refresh_from_db()
    dead.refresh_from_db()
    assert result.stale == result.enqueued == [dead.pk]
    assert (dead.status, dead.lost_executions) == ("stale", 1)
    assert "worker is gone (lease last renewed" in dead.error
    assert (alive.status, alive.lost_executions) == ("running", 0)


def test_reconcile_leaves_a_leased_job_that_redis_forgot(rq_queue, settings):
    # Given a job running for minutes under a live lease, and a Redis that restarted empty
    # (or flushed): no rq job, no worker, no registry entry is left of it.
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    job = IngestJobFactory(status="running", attempts=1, enqueued_at=ago(minutes=6))
    IngestJob.objects.filter(pk=job.pk).update(
        started_at=ago(minutes=5), heartbeat_at=ago(seconds=10)
    )

    result = ingest_jobs_reconcile()

    # Then its execution is not judged dead: it finishes the job on its own.
    job.refresh_from_db()
    assert result.stale == result.enqueued == []
    assert (job.status, job.lost_executions) == ("running", 0)
    assert rq_queue.get_job_ids() == []


def test_a_second_delivery_of_a_leased_job_does_nothing_until_the_lease_dies(settings):
    # Given a job an execution claimed and renews (rq delivered it twice: a reconcile raced).
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    job = IngestJobFactory(status="queued")
    assert ingest_job_claim(job_id=job.pk, lease=True) is not None

    # Then the second delivery leaves it to the first: no attempt, no lost execution.
    assert ingest_job_claim(job_id=job.pk, lease=True) is None
    job.refresh_from_db()
    assert (job.status, job.attempts, job.lost_executions) == ("running", 1, 0)

    # And once the lease went silent (the first execution died), a delivery takes it over.
    IngestJob.objects.filter(pk=job.pk).update(heartbeat_at=ago(minutes=2))
    claim = ingest_job_claim(job_id=job.pk, lease=True)
    job.refresh_from_db()
    assert claim is not None and claim.attempt == 2
    assert (job.attempts, job.lost_executions) == (2, 1)
    assert job.heartbeat_at > ago(seconds=5)


def test_reconcile_requeues_a_job_a_dying_worker_took_but_never_started(rq_queue, settings):
    # Given a job a worker moved from the queue into rq's intermediate list and died before it
    # started it: rq's status still says queued, and rq looks there only every 10 minutes.
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    job = IngestJobFactory()
    assert queueing.ingest_job_enqueue(job_id=job.pk)
    redis = rq_queue.connection
    redis.lmove(rq_queue.key, rq_queue.intermediate_queue_key)

    # When reconcile first sees it there, a worker may be starting it this very instant.
    assert ingest_jobs_reconcile().enqueued == []
    # Seen there again 3 heartbeat intervals later, it is stuck.
    (seen,) = redis.scan_iter(match=f"*{rq_queue.name}*reconcile-seen-taken*")
    redis.set(seen, timezone.now().timestamp() - 100)
    result = ingest_jobs_reconcile()

    # Then it is on the queue again, once, and out of the intermediate list.
    assert result.enqueued == [job.pk]
    assert rq_queue.get_job_ids() == [rq_job_id(job.pk)]
    assert redis.lrange(rq_queue.intermediate_queue_key, 0, -1) == []


def test_reconcile_requeues_a_retry_no_scheduler_moved_in_time(rq_queue, settings):
    # Given two jobs whose first execution failed: rq scheduled each one's retry. One is due in
    # a minute; the other was due 100 s ago, and the worker holding rq's scheduler lock was
    # killed, so nothing moved it (the other workers take the role only every 10 minutes).
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    later, overdue = IngestJobFactory(), IngestJobFactory()
    redis = rq_queue.connection
    for job, due in ((later, timedelta(minutes=1)), (overdue, timedelta(seconds=-100))):
        assert queueing.ingest_job_enqueue(job_id=job.pk)
        rq_job = Job.fetch(rq_job_id(job.pk), connection=redis)
        redis.lrem(rq_queue.key, 0, rq_job.id)
        rq_queue.schedule_job(rq_job, timezone.now() + due)

    result = ingest_jobs_reconcile()

    # Then the overdue one is on the queue, once, and no longer scheduled; the other waits.
    assert result.enqueued == [overdue.pk]
    assert rq_queue.get_job_ids() == [rq_job_id(overdue.pk)]
    assert rq_queue.scheduled_job_registry.get_job_ids() == [rq_job_id(later.pk)]


def test_enqueuing_a_waiting_job_again_replaces_its_entry(rq_queue, settings):
    # Two reconciles at once, or the admin's retry racing one, enqueue the same job.
    job = IngestJobFactory()
    other = IngestJobFactory()
    for job_id in (job.pk, other.pk, job.pk):
        assert queueing.ingest_job_enqueue(job_id=job_id)

    assert rq_queue.get_job_ids() == [rq_job_id(other.pk), rq_job_id(job.pk)]


def test_the_reconcile_command_reports_what_it_did(enqueued, settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    job = IngestJobFactory()
    IngestJob.objects.filter(pk=job.pk).update(created_at=ago(minutes=1))
    out = StringIO()

    call_command("reconcile", stdout=out)

    assert f"enqueued: 1 [{job.pk}]" in out.getvalue()


def test_the_reconcile_command_fails_when_the_queue_is_down(settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        settings.INGEST_QUEUE: {"URL": settings.REDIS_URL, "DEFAULT_TIMEOUT": 60},
    }
    job = IngestJobFactory()
    IngestJob.objects.filter(pk=job.pk).update(created_at=ago(minutes=1))

    with pytest.raises(SystemExit) as exited:
        call_command("reconcile", stdout=StringIO())

    assert exited.value.code == 1
    job.refresh_from_db()
    assert (job.status, job.enqueued_at) == ("queued", None)


# --- Used webhook ids -----------------------------------------------------------------------------


def test_purge_keeps_ids_that_could_still_be_replayed(settings):
    settings.INGEST_SIGNATURE_TOLERANCE_SECONDS = 300
    old = UsedWebhookIdFactory()
    recent = UsedWebhookIdFactory()
    UsedWebhookId.objects.filter(pk=old.pk).update(received_at=ago(seconds=601))
    # Stamped up to 5 minutes ahead, a request stays valid until 10 minutes after it arrived.
    UsedWebhookId.objects.filter(pk=recent.pk).update(received_at=ago(seconds=590))

    assert webhook_ids_purge() == 1
    assert list(UsedWebhookId.objects.values_list("pk", flat=True)) == [recent.pk]


def test_the_purge_command(settings):
    UsedWebhookId.objects.filter(pk=UsedWebhookIdFactory().pk).update(received_at=ago(days=1))
    out = StringIO()

    call_command("purge_webhook_ids", stdout=out)

    assert "purged 1 webhook id(s)" in out.getvalue()
    assert not UsedWebhookId.objects.exists()


def test_the_gc_media_command_dry_run(settings):
    from django.core.files.storage import default_storage

    from catalog.storage import image_store
    from ingest.hashing import sha1_hex

    settings.INGEST_MEDIA_GC_GRACE_SECONDS = 0
    key = image_store(data=b"x", sha1=sha1_hex(b"x"), mime_type="image/jpeg")
    out = StringIO()

    call_command("gc_media", "--dry-run", stdout=out)

    assert f"would delete {key}" in out.getvalue()
    assert "stored by ingest 1:" in out.getvalue()
    assert default_storage.exists(key)
