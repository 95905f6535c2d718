"""Writes of the ingest app: accept a submission, enqueue it, the job's state transitions
(claim, release for a retry, finish, retry from the admin), and the maintenance steps
(reconcile, purge used webhook ids, media GC).

Every transition locks the job row and checks the state it starts from. The worker's writes
are fenced by the attempt number it claimed with: once a job was taken over (reclaimed as
stale, or claimed again by an rq retry after its worker died), the old execution can no longer
finish it, so at most one execution's result is ever committed.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from catalog.models import Runway, StreetSnap
from catalog.storage import CollectResult, stored_objects_collect
from ingest.content import content_checksum
from ingest.models import IngestJob, UsedWebhookId

logger = logging.getLogger(__name__)

FINISHED = frozenset(
    {IngestJob.Status.SUCCEEDED, IngestJob.Status.SKIPPED, IngestJob.Status.FAILED}
)
RETRYABLE = frozenset({IngestJob.Status.FAILED, IngestJob.Status.STALE})


class WebhookReplayed(Exception):
    def __init__(self, webhook_id: str, job_id: int | None) -> None:
        super().__init__(f"webhook-id {webhook_id!r} was already used")
        self.webhook_id = webhook_id
        self.job_id = job_id


class JobStateError(Exception):
    """A transition asked of a job that is not in a state it starts from (``status``)."""

    def __init__(self, message: str, *, status: str) -> None:
        super().__init__(message)
        self.status = status


# --- Accept and enqueue ----------------------------------------------------------------------


def ingest_job_accept(*, webhook_id: str, album: dict[str, Any]) -> IngestJob:
    """Record a validated album as a queued job, and enqueue it once that is committed.

    The webhook id is stored in the same transaction as the job: the unique constraint refuses
    a replay even when two copies race, and a refused replay leaves nothing behind. Enqueueing
    waits for the commit, so a worker never looks for a row it cannot see yet; if Redis is down
    then, the job stays queued in the database and `reconcile` enqueues it later.
    """
    with transaction.atomic():
        try:
            with transaction.atomic():
                UsedWebhookId.objects.create(webhook_id=webhook_id)
        except IntegrityError:
            earlier = IngestJob.objects.filter(webhook_id=webhook_id).order_by("pk").first()
            raise WebhookReplayed(webhook_id, earlier.pk if earlier else None) from None
        job = IngestJob.objects.create(
            kind=album["kind"],
            source=album["source"],
            source_url=album["source_url"],
            payload=album,
            payload_checksum=content_checksum(album),
            webhook_id=webhook_id,
        )
        transaction.on_commit(partial(ingest_job_enqueue, job_id=job.pk))
    return job


def rq_job_id(job_id: int) -> str:
    # One rq id per ingest job (e.g. "ingest-job-17"): reconcile can ask Redis whether the job
    # is still there, and a second enqueue of a waiting job replaces it instead of doubling it.
    return f"{settings.INGEST_QUEUE}-job-{job_id}"


def ingest_job_enqueue(*, job_id: int) -> bool:
    """The one way a job reaches a worker (the endpoint, the admin's retry, reconcile).

    With REDIS_URL: the `ingest` rq queue, retried with backoff on transient errors. Without:
    the in-process runner (the embedded mode). Returns whether the job was handed over; a
    failure is logged, never raised: the job row is the durable record and `reconcile` will
    hand it over later.
    """
    if settings.REDIS_URL:
        from django_rq import get_queue
        from redis.exceptions import RedisError
        from rq import Retry

        from ingest.tasks import run_ingest_job

        intervals = settings.INGEST_RETRY_INTERVALS
        try:
            # commit_mode="auto": we are already past the commit (on_commit or outside any
            # transaction), and we need to know whether the enqueue reached Redis.
            get_queue(settings.INGEST_QUEUE, commit_mode="auto").enqueue(
                run_ingest_job,
                job_id,
                job_id=rq_job_id(job_id),
                retry=Retry(max=len(intervals), interval=intervals) if intervals else None,
                job_timeout=settings.INGEST_JOB_TIMEOUT,
                description=f"ingest job {job_id}",
            )
        except RedisError:
            logger.warning("ingest job %s: Redis unavailable; reconcile will enqueue it", job_id)
            return False
        IngestJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
    else:
        from ingest import inline

        # Marked first: once submitted, the job's own writes start at once, and on SQLite two
        # writers contend for the one database lock.
        IngestJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
        inline.submit(job_id)
    return True


def renditions_enqueue(*, kind: str, record_id: int) -> bool:
    """Hand the renditions of one album to a worker: the `ingest` rq queue (retried with
    backoff on storage errors), or the in-process runner in the embedded mode. Returns whether
    it was handed over; never raises: an album whose renditions never ran is shown with its
    originals, and `manage.py renditions` makes them later.

    A follow-up job rather than a step of the ingest job: bench/renditions.py measured the
    album reaching the review queue about as fast as without renditions this way, where
    rendering inside the job would delay it by the whole album's rendering time (README,
    "Renditions").
    """
    if not settings.RENDITIONS_AT_INGEST:
        return False
    if settings.REDIS_URL:
        from django_rq import get_queue
        from redis.exceptions import RedisError
        from rq import Retry

        from ingest.tasks import run_renditions

        intervals = settings.INGEST_RETRY_INTERVALS
        try:
            get_queue(settings.INGEST_QUEUE, commit_mode="auto").enqueue(
                run_renditions,
                kind,
                record_id,
                retry=Retry(max=len(intervals), interval=intervals) if intervals else None,
                job_timeout=settings.INGEST_JOB_TIMEOUT,
                description=f"renditions of {kind} {record_id}",
            )
        except RedisError:
            logger.warning("renditions of %s %s: Redis unavailable; not enqueued", kind, record_id)
            return False
    else:
        from ingest import inline

        inline.submit_renditions(kind, record_id)
    return True


# --- The worker's transitions ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """A job as one execution claimed it. ``attempt`` is the fencing token."""

    job_id: int
    attempt: int
    kind: str
    payload: dict[str, Any]
    payload_checksum: str


class Superseded(Exception):
    """This execution no longer owns the job (it was reclaimed or claimed again)."""


def ingest_job_claim(*, job_id: int) -> Claim | None:
    """Mark the job running and count the attempt; ``None`` when there is nothing to do.

    A finished job is a no-op: rq may deliver a job twice (a retry racing a reconcile), and a
    job is idempotent. A job found running is taken over: only a dead or superseded execution
    leaves it so (an rq retry after its worker died, or after it raised with the database
    gone); the old execution, if it still breathes, loses the fence at its next write.
    """
    with transaction.atomic():
        job = IngestJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in FINISHED:
            return None
        job.status = IngestJob.Status.RUNNING
        job.attempts += 1
        job.started_at = timezone.now()
        job.finished_at = None
        job.save(update_fields=["status", "attempts", "started_at", "finished_at", "updated_at"])
    return Claim(
        job_id=job.pk,
        attempt=job.attempts,
        kind=job.kind,
        payload=job.payload,
        payload_checksum=job.payload_checksum,
    )


def ingest_job_lock_claimed(*, claim: Claim) -> IngestJob:
    """Lock the job row for the final transaction; raise :class:`Superseded` if it is not ours.

    Taken first in that transaction, so whoever commits a record also holds the job it
    finishes, and a reclaim (which needs the same lock) waits for it or wins outright.
    """
    job = IngestJob.objects.select_for_update().get(pk=claim.job_id)
    if job.status != IngestJob.Status.RUNNING or job.attempts != claim.attempt:
        raise Superseded(f"ingest job {claim.job_id} attempt {claim.attempt} was superseded")
    return job


def ingest_job_finish(
    *,
    claim: Claim,
    status: str,
    reason: str = "",
    error: str = "",
    report: dict[str, Any],
    runway: Runway | None = None,
    street_snap: StreetSnap | None = None,
) -> None:
    """End a claimed job as succeeded, skipped or failed. Raises :class:`Superseded`."""
    if status not in FINISHED:
        raise ValueError(f"{status} is not a finished status")
    with transaction.atomic():
        job = ingest_job_lock_claimed(claim=claim)
        job.status = status
        job.reason = reason[:255]
        job.error = error
        job.report = report
        job.runway = runway
        job.street_snap = street_snap
        job.finished_at = timezone.now()
        job.save(
            update_fields=[
                "status",
                "reason",
                "error",
                "report",
                "runway",
                "street_snap",
                "finished_at",
                "updated_at",
            ]
        )
        record = runway or street_snap
        if status == IngestJob.Status.SUCCEEDED and record is not None:
            # After the commit: the follow-up job must find the image rows.
            kind = IngestJob.Kind.RUNWAY if runway is not None else IngestJob.Kind.STREET
            transaction.on_commit(partial(renditions_enqueue, kind=str(kind), record_id=record.pk))


def ingest_job_release(*, claim: Claim, error: str) -> None:
    """Hand a job back to the queue for rq's retry after a transient error."""
    with transaction.atomic():
        job = ingest_job_lock_claimed(claim=claim)
        job.status = IngestJob.Status.QUEUED
        job.error = f"attempt {claim.attempt}: {error} (will retry)"
        job.save(update_fields=["status", "error", "updated_at"])


# --- Admin -----------------------------------------------------------------------------------


def ingest_job_retry(*, job_id: int) -> IngestJob:
    """Queue a failed or stale job again (an editor added the missing brand alias, a site came
    back). Same enqueue path as the endpoint. The attempts counter keeps counting."""
    with transaction.atomic():
        job = IngestJob.objects.select_for_update().get(pk=job_id)
        if job.status not in RETRYABLE:
            raise JobStateError(
                f"Cannot retry a {job.status} job; only failed or stale ones.", status=job.status
            )
        job.status = IngestJob.Status.QUEUED
        job.reason = ""
        job.error = ""
        job.report = {}
        job.enqueued_at = None
        job.started_at = None
        job.finished_at = None
        job.save(
            update_fields=[
                "status",
                "reason",
                "error",
                "report",
                "enqueued_at",
                "started_at",
                "finished_at",
                "updated_at",
            ]
        )
        transaction.on_commit(partial(ingest_job_enqueue, job_id=job.pk))
    return job


# --- Maintenance -----------------------------------------------------------------------------


@dataclass
class ReconcileResult:
    stale: list[int] = field(default_factory=list)
    enqueued: list[int] = field(default_factory=list)
    not_enqueued: list[int] = field(default_factory=list)


def ingest_jobs_reconcile(*, now: datetime | None = None) -> ReconcileResult:
    """Make sure every accepted job gets run: the durability half of "accepted means durable".

    1. A job running longer than INGEST_STALE_AFTER_SECONDS (far beyond the rq job timeout)
       lost its worker: it is marked stale and queued again.
    2. A queued or stale job that is not on the queue - it never reached Redis (down at
       accept time), or Redis lost it (a restart without persistence) - is enqueued again.
       Jobs younger than INGEST_RECONCILE_GRACE_SECONDS are left alone: their on-commit
       enqueue may still be under way.
    """
    now = now or timezone.now()
    result = ReconcileResult()
    stale_before = now - timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    grace_before = now - timedelta(seconds=settings.INGEST_RECONCILE_GRACE_SECONDS)

    with transaction.atomic():
        running = IngestJob.objects.select_for_update(skip_locked=True).filter(
            status=IngestJob.Status.RUNNING, started_at__lt=stale_before
        )
        for job in running:
            job.status = IngestJob.Status.STALE
            since = f"{job.started_at:%Y-%m-%d %H:%M:%S} UTC"
            job.error = (
                f"attempt {job.attempts} reclaimed: running since {since}, "
                f"longer than {settings.INGEST_STALE_AFTER_SECONDS}s"
            )
            job.enqueued_at = None
            job.save(update_fields=["status", "error", "enqueued_at", "updated_at"])
            result.stale.append(job.pk)

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
        if ingest_job_enqueue(job_id=job_id):
            result.enqueued.append(job_id)
        else:
            result.not_enqueued.append(job_id)
    return result


def _still_on_queue(job_id: int, enqueued_at: datetime, stale_before: datetime) -> bool:
    if not settings.REDIS_URL:
        # In-process jobs live in the memory of the process that accepted them; one queued
        # for longer than a job may run has lost that process.
        return enqueued_at >= stale_before
    from django_rq import get_queue
    from rq.exceptions import NoSuchJobError
    from rq.job import Job, JobStatus

    connection = get_queue(settings.INGEST_QUEUE).connection
    try:
        rq_job = Job.fetch(rq_job_id(job_id), connection=connection)
    except NoSuchJobError:
        return False
    return rq_job.get_status() in {
        JobStatus.QUEUED,
        JobStatus.STARTED,
        JobStatus.SCHEDULED,
        JobStatus.DEFERRED,
    }


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
