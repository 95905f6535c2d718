"""Maintenance of the ingest app, run on a schedule (config/cron.py) or by hand
(`manage.py reconcile`, `purge_webhook_ids`, `gc_media`): the jobs Redis or a dead worker
lost, webhook ids too old to be replayed, stored images nothing references.

Each step is idempotent and safe beside the workers and beside itself.
"""

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_rq import get_queue
from redis.exceptions import RedisError
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.worker import Worker

from catalog.storage import CollectResult, stored_objects_collect
from ingest import queueing, services
from ingest.models import IngestJob, UsedWebhookId

logger = logging.getLogger(__name__)


@dataclass
class ReconcileResult:
    stale: list[int] = field(default_factory=list)
    enqueued: list[int] = field(default_factory=list)
    not_enqueued: list[int] = field(default_factory=list)
    # Failed as worker_died: their executions were lost INGEST_MAX_LOST_EXECUTIONS times.
    worker_died: list[int] = field(default_factory=list)


def ingest_jobs_reconcile(*, now: datetime | None = None) -> ReconcileResult:
    """Make sure every accepted job gets run: the durability half of "accepted means durable".

    1. A running job lost its execution when its lease went silent (no renewal for
       3 x INGEST_WORKER_HEARTBEAT_SECONDS: the work horse was killed, or its worker with it),
       or when it has run longer than INGEST_STALE_AFTER_SECONDS (far beyond the rq job
       timeout; the only judge of an execution that renews no lease). It is marked stale and
       queued again; the execution counts as lost, and a job that lost
       INGEST_MAX_LOST_EXECUTIONS of them fails as worker_died instead. The lease lives in the
       database, so neither a Redis outage nor a Redis that came back empty makes a healthy
       execution look dead.
    2. A queued or stale job that is not on the queue - it never reached Redis (down at
       accept time), Redis lost it (a restart without persistence), a worker took it and
       died before the pipeline claimed it, or its rq retry is overdue with no scheduler to
       move it - is enqueued again. Jobs younger than INGEST_RECONCILE_GRACE_SECONDS are
       left alone: their on-commit enqueue may still be under way.
    """
    now = now or timezone.now()
    result = ReconcileResult()
    stale_before = now - timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    grace_before = now - timedelta(seconds=settings.INGEST_RECONCILE_GRACE_SECONDS)

    running = IngestJob.objects.filter(status=IngestJob.Status.RUNNING)
    timed_out = set(running.filter(started_at__lt=stale_before).values_list("pk", flat=True))
    silent = set(
        running.filter(heartbeat_at__lt=services.lease_silent_since(now)).values_list(
            "pk", flat=True
        )
    )
    if timed_out or silent:
        _reclaim(timed_out | silent, timed_out, result, now=now)

    waiting = IngestJob.objects.filter(
        status__in=[IngestJob.Status.QUEUED, IngestJob.Status.STALE]
    ).filter(
        Q(enqueued_at__isnull=True, created_at__lt=grace_before)
        | Q(enqueued_at__isnull=True, pk__in=result.stale)
        | Q(enqueued_at__lt=grace_before)
    )
    for job_id, enqueued_at in waiting.order_by("pk").values_list("pk", "enqueued_at"):
        if enqueued_at is not None and _still_on_queue(job_id, enqueued_at, stale_before):
            continue
        if queueing.ingest_job_enqueue(job_id=job_id):
            result.enqueued.append(job_id)
        else:
            result.not_enqueued.append(job_id)
    return result


def _reclaim(
    job_ids: set[int], timed_out: set[int], result: ReconcileResult, *, now: datetime
) -> None:
    stale_before = now - timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    with transaction.atomic():
        # Still running (skip_locked: a job finishing right now holds its row and is no
        # candidate); the attempt's own fence stops its execution if it still breathes.
        running = IngestJob.objects.select_for_update(skip_locked=True).filter(
            pk__in=job_ids, status=IngestJob.Status.RUNNING
        )
        for job in running.order_by("pk"):
            # Judged again under the lock: a job claimed again (rq's retry, another
            # reconcile) or renewed since has a live execution, not ours to count.
            too_long = job.started_at is not None and job.started_at < stale_before
            silent = job.heartbeat_at is not None and not services.lease_alive(job, now=now)
            if not (too_long or silent):
                continue
            job.lost_executions += 1
            if services.lost_too_often(job, since=job.started_at):
                result.worker_died.append(job.pk)
                continue
            job.status = IngestJob.Status.STALE
            since = f"{job.started_at:%Y-%m-%d %H:%M:%S} UTC"
            if too_long:
                why = f"longer than {settings.INGEST_STALE_AFTER_SECONDS}s"
            else:
                renewed = f"{job.heartbeat_at:%H:%M:%S} UTC"
                why = f"but its worker is gone (lease last renewed {renewed})"
            job.error = f"attempt {job.attempts} reclaimed: running since {since}, {why}"
            job.enqueued_at = None
            job.save(
                update_fields=["status", "error", "lost_executions", "enqueued_at", "updated_at"]
            )
            result.stale.append(job.pk)


def _still_on_queue(job_id: int, enqueued_at: datetime, stale_before: datetime) -> bool:
    if not settings.REDIS_URL:
        # In-process jobs live in the memory of the process that accepted them; one queued
        # for longer than a job may run has lost that process.
        return enqueued_at >= stale_before
    try:
        return _rq_job_waiting(job_id)
    except RedisError:
        logger.warning("reconcile: Redis unavailable asking about ingest job %s", job_id)
        return False  # enqueued again, which fails too while Redis is down


def _rq_job_waiting(job_id: int) -> bool:
    """Whether the job's rq job will still be run: on the queue, scheduled for a retry that a
    scheduler will move to the queue, or taken by a worker that is alive.

    rq's status alone does not say so. A worker killed outright (SIGKILL, OOM, a lost node)
    leaves its job STARTED, and rq's own cleanup notices only at its next maintenance run
    (about 10 minutes); its heartbeats stop at once, though. And a worker killed between
    taking a job from the queue and starting it leaves the job QUEUED in rq's intermediate
    list, where rq looks only every 10 minutes too.
    """
    queue = get_queue(settings.INGEST_QUEUE)
    connection = queue.connection
    try:
        rq_job = Job.fetch(queueing.rq_job_id(job_id), connection=connection)
    except NoSuchJobError:
        return False
    status = rq_job.get_status()
    if status == JobStatus.SCHEDULED:
        return _scheduled_in_time(queue, rq_job)
    if status == JobStatus.DEFERRED:
        return True
    if status == JobStatus.QUEUED:
        return _on_queue(queue, rq_job)
    if status != JobStatus.STARTED:
        return False
    if rq_job.worker_name and not connection.exists(
        f"{Worker.redis_worker_namespace_prefix}{rq_job.worker_name}"
    ):
        return False
    heartbeat = rq_job.last_heartbeat or rq_job.started_at
    if heartbeat is None:
        return True  # nothing to judge by: rq's own cleanup decides
    if heartbeat.tzinfo is None:
        heartbeat = heartbeat.replace(tzinfo=UTC)
    silent = (datetime.now(tz=UTC) - heartbeat).total_seconds()
    return silent <= 3 * settings.INGEST_WORKER_HEARTBEAT_SECONDS


def _scheduled_in_time(queue, rq_job) -> bool:
    """A SCHEDULED rq job (a retry waiting out its interval) is on its way until its time is
    more than 3 heartbeat intervals past: a live rq scheduler moves a due job to the queue
    within a second. One overdue longer has no scheduler: the worker holding rq's scheduler
    lock was killed, and the others take the role over only once the lock expired and their
    own maintenance comes round. Enqueued again, it leaves the scheduled registry in the same
    transaction (ingest_job_enqueue), so a scheduler that comes back does not deliver it too.
    """
    score = queue.connection.zscore(queue.scheduled_job_registry.key, rq_job.id)
    if score is None:
        return False  # in no registry: nothing will ever move it to the queue
    overdue = time.time() - float(score)
    return overdue <= 3 * settings.INGEST_WORKER_HEARTBEAT_SECONDS


def _on_queue(queue, rq_job) -> bool:
    """A QUEUED rq job is waiting if it is on the queue, or taken by a worker that is starting
    it: an instant, so one seen taken across 3 heartbeat intervals lost its worker. That one
    is taken out of rq's intermediate list, so rq's own cleanup does not run it once more."""
    connection = queue.connection
    if connection.lpos(queue.key, rq_job.id) is not None:
        return True
    taken = queue.intermediate_queue_key
    if connection.lpos(taken, rq_job.id) is None:
        return False
    # Keyed by this enqueue of the job: a later enqueue of the same id starts afresh.
    enqueued = rq_job.enqueued_at.timestamp() if rq_job.enqueued_at else 0
    seen_key = f"{queue.key}:reconcile-seen-taken:{rq_job.id}:{enqueued}"
    now = time.time()
    if connection.set(seen_key, now, nx=True, ex=3600):
        return True
    first_seen = float(connection.get(seen_key) or now)
    if now - first_seen < 3 * settings.INGEST_WORKER_HEARTBEAT_SECONDS:
        return True
    connection.lrem(taken, 0, rq_job.id)
    connection.delete(seen_key)
    return False


def webhook_ids_purge(*, now: datetime | None = None) -> int:
    """Forget webhook ids that can no longer be replayed.

    A request is accepted while its timestamp is within the tolerance of the server's clock,
    in either direction: one stamped up to a tolerance ahead stays replayable until a tolerance
    after that. So an id is kept for twice the tolerance after it was received.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=2 * settings.INGEST_SIGNATURE_TOLERANCE_SECONDS)
    deleted, _ = UsedWebhookId.objects.filter(received_at__lt=cutoff).delete()
    return deleted


def media_gc(*, now: datetime | None = None, dry_run: bool = False, storage=None) -> CollectResult:
    """Delete the images ingest stored that no image row references, once older than
    INGEST_MEDIA_GC_GRACE_SECONDS; never anything ingest did not store (the legacy archive's
    objects share the bucket and the key scheme). See catalog.storage for the protocol that
    keeps a job storing the same key again from ending with rows that point at nothing.

    Orphans come from jobs that stored their images and then lost the race, failed or were
    superseded. Rows of soft-deleted images and records still count as references.
    """
    now = now or timezone.now()
    return stored_objects_collect(
        older_than=now - timedelta(seconds=settings.INGEST_MEDIA_GC_GRACE_SECONDS),
        dry_run=dry_run,
        storage=storage,
    )
