"""Writes of the ingest app: accept a submission, and the job's state transitions (claim, renew
its lease, release for a retry, finish, retry from the admin). How a job reaches a worker is
ingest.queueing's; the maintenance steps are in ingest.maintenance.

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
from django.utils import timezone

from catalog.models import Runway, StreetSnap
from ingest import queueing
from ingest.models import IngestJob, UsedWebhookId
from ingest.serializers import album_checksum

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


def _job_update(job: IngestJob, **changes: Any) -> None:
    """Set ``changes`` on a locked job and save exactly those fields (and updated_at)."""
    for name, value in changes.items():
        setattr(job, name, value)
    job.save(update_fields=[*changes, "updated_at"])


# --- Accept ----------------------------------------------------------------------


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
            payload_checksum=album_checksum(album),
            webhook_id=webhook_id,
        )
        # robust: nothing after the commit may turn the crawler's 202 into an error; a job
        # that was not handed over is reconcile's (ingest_job_enqueue itself never raises).
        transaction.on_commit(partial(queueing.ingest_job_enqueue, job_id=job.pk), robust=True)
    return job


# --- The worker's transitions ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """A job as one execution claimed it. ``attempt`` is the fencing token."""

    job_id: int
    attempt: int
    kind: str
    payload: dict[str, Any]
    payload_checksum: str
    # Images an earlier attempt stored (IngestJob.downloaded).
    downloaded: dict[str, Any] = field(default_factory=dict)


class Superseded(Exception):
    """This execution no longer owns the job (it was reclaimed or claimed again)."""


def ingest_job_claim(*, job_id: int, lease: bool = False) -> Claim | None:
    """Mark the job running and count the attempt; ``None`` when there is nothing to do.

    ``lease``: this execution renews the job's lease while it runs (``ingest_job_renew``;
    rq's work horses do, the in-process runner does not).

    A finished job is a no-op: rq may deliver a job twice (a retry racing a reconcile), and a
    job is idempotent. So is a job running under a live lease: another execution has it. A job
    found running without one is taken over: only a dead or superseded execution leaves it so
    (an rq retry after its worker died, or after it raised with the database gone); the old
    execution, if it still breathes, loses the fence at its next write. That counts as a lost
    execution: a job that keeps killing its worker (a native crash, the OOM killer) ends
    ``failed``/``worker_died`` instead of being run forever.
    """
    now = timezone.now()
    with transaction.atomic():
        job = IngestJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in FINISHED:
            return None
        if job.status == IngestJob.Status.RUNNING:
            if lease_alive(job, now=now):
                logger.info("ingest job %s: already running under a live lease", job_id)
                return None
            job.lost_executions += 1
            if lost_too_often(job, since=job.started_at):
                return None
        _job_update(
            job,
            status=IngestJob.Status.RUNNING,
            attempts=job.attempts + 1,
            lost_executions=job.lost_executions,
            started_at=now,
            heartbeat_at=now if lease else None,
            finished_at=None,
        )
    return Claim(
        job_id=job.pk,
        attempt=job.attempts,
        kind=job.kind,
        payload=job.payload,
        payload_checksum=job.payload_checksum,
        downloaded=job.downloaded or {},
    )


def ingest_job_renew(*, claim: Claim) -> bool:
    """Renew the lease of a claimed job; False once this execution no longer owns it."""
    owned = IngestJob.objects.filter(
        pk=claim.job_id, status=IngestJob.Status.RUNNING, attempts=claim.attempt
    )
    return owned.update(heartbeat_at=timezone.now()) == 1


def ingest_job_lease_end(*, job_id: int) -> bool:
    """End the lease of a running job whose execution is known dead (its worker saw the work
    horse killed), so that rq's retry takes it over at once instead of waiting for the lease
    to go silent. True if there was one to end."""
    expired = lease_silent_since(timezone.now()) - timedelta(seconds=1)
    running = IngestJob.objects.filter(
        pk=job_id, status=IngestJob.Status.RUNNING, heartbeat_at__isnull=False
    )
    return running.update(heartbeat_at=expired) == 1


def lease_silent_since(now: datetime) -> datetime:
    # Three missed renewals: one late renewal (a loaded machine, a slow database) is no death.
    return now - timedelta(seconds=3 * settings.INGEST_WORKER_HEARTBEAT_SECONDS)


def lease_alive(job: IngestJob, *, now: datetime) -> bool:
    return job.heartbeat_at is not None and job.heartbeat_at >= lease_silent_since(now)


def lost_too_often(job: IngestJob, *, since: datetime | None) -> bool:
    """Fail ``job`` (locked) as worker_died if its lost executions reached the bound."""
    if job.lost_executions < settings.INGEST_MAX_LOST_EXECUTIONS:
        return False  # the caller saves the count with its own change
    started = f", the last one started {since:%Y-%m-%d %H:%M:%S} UTC" if since else ""
    _job_update(
        job,
        status=IngestJob.Status.FAILED,
        reason="worker_died",
        error=(
            f"The worker running this job died {job.lost_executions} times (killed, out of "
            f"memory or a crash{started}), so it is not run again: an album that kills its "
            "worker would otherwise be retried forever. Look at the workers' logs, then retry "
            "it here."
        ),
        lost_executions=job.lost_executions,
        enqueued_at=None,
        finished_at=timezone.now(),
    )
    logger.error("ingest job %s: %s", job.pk, job.error)
    return True


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
    record: Runway | StreetSnap | None = None,
) -> None:
    """End a claimed job as succeeded, skipped or failed, with the record it concerns (the
    one it wrote, or the one that made it a skip). Raises :class:`Superseded`."""
    if status not in FINISHED:
        raise ValueError(f"{status} is not a finished status")
    with transaction.atomic():
        job = ingest_job_lock_claimed(claim=claim)
        _job_update(
            job,
            status=status,
            reason=reason[:255],
            error=error,
            report=report,
            **IngestJob.record_fields(record),
            downloaded={},  # only a retry reads it
            finished_at=timezone.now(),
        )
        if status == IngestJob.Status.SUCCEEDED and record is not None:
            # After the commit: the follow-up job must find the image rows.
            transaction.on_commit(
                partial(queueing.renditions_enqueue, kind=record.kind, record_id=record.pk),
                robust=True,
            )


def ingest_job_release(
    *, claim: Claim, error: str, downloaded: dict[str, Any] | None = None
) -> None:
    """Hand a job back to the queue for rq's retry after a transient error, with the images
    this attempt stored (``downloaded``), which the retry then does not download again."""
    with transaction.atomic():
        job = ingest_job_lock_claimed(claim=claim)
        job.status = IngestJob.Status.QUEUED
        job.error = f"attempt {claim.attempt}: {error} (will retry)"
        fields = ["status", "error", "updated_at"]
        if downloaded is not None:
            job.downloaded = downloaded
            fields.append("downloaded")
        job.save(update_fields=fields)


# --- Admin -----------------------------------------------------------------------------------


def ingest_job_retry(*, job_id: int) -> IngestJob:
    """Queue a failed or stale job again (an editor added the missing brand alias, a site came
    back). Same enqueue path as the endpoint. The attempts counter keeps counting; the lost
    executions start again from 0 (someone looked), and so do the downloads (the hashing may
    have changed since)."""
    with transaction.atomic():
        job = IngestJob.objects.select_for_update().get(pk=job_id)
        if job.status not in RETRYABLE:
            raise JobStateError(
                f"Cannot retry a {job.status} job; only failed or stale ones.", status=job.status
            )
        _job_update(
            job,
            status=IngestJob.Status.QUEUED,
            reason="",
            error="",
            report={},
            lost_executions=0,
            downloaded={},
            enqueued_at=None,
            started_at=None,
            finished_at=None,
        )
        transaction.on_commit(partial(queueing.ingest_job_enqueue, job_id=job.pk), robust=True)
    return job
