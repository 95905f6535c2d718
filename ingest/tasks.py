"""Task entry points: thin, ids only (the job row holds everything else). rq's workers run
them, and so does the embedded mode's background thread (ingest.thread_pool); ingest.queueing
names them by dotted path."""

import logging
import time
from datetime import UTC, datetime, timedelta

import django_rq
from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone
from rq import get_current_job

from catalog import selectors
from catalog import tasks as catalog_tasks
from ingest import joblog, pipeline
from ingest.maintenance import ingest_jobs_reconcile, media_gc, webhook_ids_purge
from ingest.queueing import renditions_enqueue

logger = logging.getLogger(__name__)


def run_ingest_job(job_id: int) -> str:
    """Run ingest job ``job_id`` on an rq worker.

    Database connections are closed around the job: a worker process outlives the server's
    idle timeout and any database restart, and a job that starts on a connection that died in
    between fails with "connection already closed" (rq's users learned this the hard way).
    """
    close_old_connections()
    try:
        rq_job = get_current_job()
        # rq counts the retries left of the current execution; none left (or no rq retry
        # configured) means a transient error must end the job now instead of raising.
        final_attempt = rq_job is None or not rq_job.retries_left
        queued_at = rq_job.enqueued_at if rq_job is not None else None
        if queued_at is not None and queued_at.tzinfo is None:
            queued_at = queued_at.replace(tzinfo=UTC)  # older rq stores naive UTC
        return joblog.run_logged(
            job_id,
            lambda: pipeline.run_job(job_id, final_attempt=final_attempt, lease=True),
            rq_job_id=rq_job.id if rq_job is not None else None,
            queue_wait=(datetime.now(UTC) - queued_at).total_seconds() if queued_at else None,
        )
    finally:
        connections.close_all()


def run_ingest_job_in_process(job_id: int, submitted: float) -> str:
    """Run ingest job ``job_id`` on the embedded mode's background thread, submitted at
    ``submitted`` (time.monotonic()). No scheduler, so every run is the job's last attempt; no
    lease, as the thread dies only with its process (reconcile judges such a job by its age).
    """
    return joblog.run_logged(
        job_id,
        lambda: pipeline.run_job(job_id, final_attempt=True),
        queue_wait=time.monotonic() - submitted,
    )


# rq jobs enqueued before the renditions task moved to catalog.tasks name this path; they
# still run.
run_renditions = catalog_tasks.run_renditions


# --- Maintenance (the `maintenance` queue; config/cron.py schedules them) -----------------------
# Each is idempotent, so two schedulers enqueuing the same run by mistake do no harm.


def reconcile() -> str:
    close_old_connections()
    try:
        result = ingest_jobs_reconcile()
        summary = (
            f"stale {len(result.stale)}, failed as worker_died {len(result.worker_died)}, "
            f"enqueued {len(result.enqueued)}, not enqueued {len(result.not_enqueued)}"
        )
        logger.info("reconcile: %s", summary)
        return summary
    finally:
        connections.close_all()


def purge_webhook_ids() -> str:
    close_old_connections()
    try:
        deleted = webhook_ids_purge()
        logger.info("purge_webhook_ids: purged %s", deleted)
        return f"purged {deleted}"
    finally:
        connections.close_all()


def gc_media() -> str:
    """Collect unreferenced media, one run at a time across every worker.

    Every deletion is safe on its own (catalog.storage locks and re-checks each row), but two
    runs at once would walk the same rows twice and double the storage calls: the second run
    skips while the first holds the lock. The lock expires by itself should a worker die.
    """
    rq_job = get_current_job()
    lock = None
    if rq_job is not None:
        # Keyed by the queue, so every scheduler's runs (one queue) share one lock.
        lock = rq_job.connection.lock(
            f"archive:lock:gc_media:{rq_job.origin}", timeout=6 * 3600, blocking=False
        )
        if not lock.acquire():
            logger.info("gc_media: another run holds the lock; skipped")
            return "skipped: another gc_media is running"
    close_old_connections()
    try:
        result = media_gc()
        logger.info("gc_media: deleted %s of %s tracked", len(result.deleted), result.tracked)
        return f"deleted {len(result.deleted)}"
    finally:
        connections.close_all()
        if lock is not None:
            lock.release()


# Albums per catch-up run: a backlog (Redis down for an hour of crawling) drains over a few runs
# instead of flooding the renditions queue ahead of new albums' renditions.
RENDITIONS_CATCH_UP_ALBUMS = 50


def renditions_catch_up() -> str:
    """Enqueue the renditions of albums whose follow-up job was lost (Redis down when their
    ingest job ended, a job that died): images neither made nor failed, stored longer ago
    than a job may run. At most RENDITIONS_CATCH_UP_ALBUMS per run.

    Each album enqueued is remembered in Redis for as long as its job may wait and retry, and
    is not enqueued again meanwhile: runs every few minutes add nothing while the jobs they
    enqueued wait in a long queue, and an album whose job keeps dying does not hold the others
    back. Once that time is over, a later run tries the album again.
    """
    if not settings.RENDITIONS_AT_INGEST or not settings.REDIS_URL:
        return "skipped: renditions are made by `manage.py renditions` only"

    close_old_connections()
    try:
        grace = settings.INGEST_JOB_TIMEOUT
        retries = settings.INGEST_RETRY_INTERVALS
        remember = grace * (1 + len(retries)) + sum(retries)
        redis = django_rq.get_connection(settings.INGEST_QUEUE)
        key = f"archive:renditions-catch-up:{settings.INGEST_QUEUE}"
        now = time.time()
        redis.zremrangebyscore(key, "-inf", now - remember)
        # redis-py types a reply as any reply type; without decode_responses members are bytes.
        recent = {_album(member) for member in redis.zrange(key, 0, -1)}  # type: ignore[arg-type]
        albums = selectors.records_without_renditions(
            limit=RENDITIONS_CATCH_UP_ALBUMS,
            stored_before=timezone.now() - timedelta(seconds=grace),
            exclude=recent,
        )
        enqueued = 0
        for kind, record_id in albums:
            # NX: of two runs at once (two schedulers), one enqueues the album.
            if redis.zadd(key, {f"{kind}:{record_id}": now}, nx=True) and renditions_enqueue(
                kind=kind, record_id=record_id
            ):
                enqueued += 1
        redis.expire(key, remember)
        summary = f"enqueued {enqueued} album(s) without renditions"
        logger.info("renditions_catch_up: %s", summary)
        return summary
    finally:
        connections.close_all()


def _album(member: bytes) -> tuple[str, int]:
    kind, _, record_id = member.decode().partition(":")
    return kind, int(record_id)
