"""How a job reaches a worker: the rq queue in Redis, or the in-process runner in the embedded
mode (no REDIS_URL). The job's state machine (ingest.services) hands jobs over through here on
commit; reconcile and the renditions catch-up hand them over again when Redis lost them.

Tasks are named by their dotted path, as rq stores them anyway: this module does not import
what the tasks run (the pipeline, which builds on ingest.services), so no import runs back up.
"""

import logging
import time
from datetime import datetime, timedelta
from typing import Any

import pybreaker
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from django_rq import get_queue
from redis.exceptions import RedisError
from rq import Retry

from catalog.jobs import RUN_RENDITIONS, renditions_job_enqueue
from ingest import thread_pool
from ingest.models import IngestJob

logger = logging.getLogger(__name__)

# The tasks, by the path rq records in each job (Job.func_name).
RUN_INGEST_JOB = "ingest.tasks.run_ingest_job"
RUN_INGEST_JOB_IN_PROCESS = "ingest.tasks.run_ingest_job_in_process"
RUN_MEDIA_SYNC = "catalog.tasks.run_media_sync"
# The visibility job's one rq id: a burst of changes asks for one waiting run, not one each.
VISIBILITY_JOB_ID = "visibility-sync"
# After two failed enqueues in a row, the next skip Redis for ten seconds (per process): the
# crawler's 202 or the editor's retry need not wait for it to time out again.
redis_breaker = pybreaker.CircuitBreaker(
    fail_max=2, reset_timeout=10, throw_new_error_on_trip=False
)


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
    if not settings.REDIS_URL:
        # Marked first: once submitted, the job's own writes start at once, and on SQLite two
        # writers contend for the one database lock.
        _mark_enqueued(job_id)
        thread_pool.submit(RUN_INGEST_JOB_IN_PROCESS, job_id, time.monotonic())
        return True
    intervals = settings.INGEST_RETRY_INTERVALS
    try:
        # commit_mode="auto": we are already past the commit (on_commit or outside any
        # transaction), and we need to know whether the enqueue reached Redis.
        queue = get_queue(settings.INGEST_QUEUE, commit_mode="auto")
        with redis_breaker.calling(), queue.connection.pipeline() as pipe:
            # One transaction: the job's entry still waiting on the queue (two reconciles at
            # once, a retry racing one) is replaced, not doubled. A second delivery that still
            # gets through (a worker took the first meanwhile) finds the job leased, or
            # finished, and does nothing (ingest_job_claim).
            pipe.multi()
            pipe.lrem(queue.key, 0, rq_job_id(job_id))
            # A retry rq scheduled and no scheduler moved (reconcile's overdue ones) is
            # enqueued here instead, not by a scheduler that comes back as well.
            pipe.zrem(queue.scheduled_job_registry.key, rq_job_id(job_id))
            queue.enqueue(
                RUN_INGEST_JOB,
                job_id,
                job_id=rq_job_id(job_id),
                retry=Retry(max=len(intervals), interval=intervals) if intervals else None,
                job_timeout=settings.INGEST_JOB_TIMEOUT,
                description=f"ingest job {job_id}",
                pipeline=pipe,
            )
            pipe.execute()
    except pybreaker.CircuitBreakerError:
        logger.info(
            "ingest job %s: Redis skipped after failures; reconcile will enqueue it", job_id
        )
        return False
    except RedisError:
        logger.warning("ingest job %s: Redis unavailable; reconcile will enqueue it", job_id)
        return False
    _mark_enqueued(job_id)
    return True


def renditions_enqueue(*, kind: str, record_id: int, force: bool = False) -> bool:
    """Hand the renditions of one album to a worker: the `renditions` rq queue (retried with
    backoff on storage errors), or the in-process runner in the embedded mode. Returns whether
    it was handed over; never raises: an album whose renditions never ran is shown with its
    originals, and `manage.py renditions` makes them later. ``force`` makes them again for
    images that have them (`manage.py renditions --force`).

    A follow-up job rather than a step of the ingest job: bench/renditions.py measured the
    album reaching the review queue about as fast as without renditions this way, where
    rendering inside the job would delay it by the whole album's rendering time
    (docs/renditions.md). On a queue of its own that workers serve after `ingest`: a new
    album starts as soon as a worker is done with the renditions job in hand, not after every
    one waiting (bench/burst.py, docs/operations.md).
    """
    if not settings.RENDITIONS_AT_INGEST and not force:
        return False
    if not settings.REDIS_URL:
        thread_pool.submit(RUN_RENDITIONS, kind, record_id, *([True] if force else []))
        return True
    try:
        renditions_job_enqueue(kind=kind, record_id=record_id, force=force)
    except RedisError:
        logger.warning("renditions of %s %s: Redis unavailable; not enqueued", kind, record_id)
        return False
    return True


def visibility_enqueue(*, at: datetime | None = None, **kwargs: Any) -> bool:
    """Ask for a run of the visibility job (catalog.tasks.run_media_sync), on the visibility
    queue or the embedded mode's thread for it: the receiver of catalog's ``media_changed``
    signal, sent on commit of every write the public may see (``at``: an embargo's time to
    come, when the run is scheduled, by rq's scheduler, one run per second asked for). Never
    raises: the changes are rows, and the scheduler's catch-up (config/cron.py) runs what no
    job did.

    One waiting entry on the queue at most (its id is fixed): a burst of decisions (a bulk
    approve) asks once, and the run takes every change committed by then.
    """
    later = at if at is not None and at > timezone.now() else None
    if not settings.REDIS_URL:
        # No scheduler in the embedded mode: the views keep a record inside its embargo.
        if later is None:
            thread_pool.submit(RUN_MEDIA_SYNC, lane="visibility")
        return True
    try:
        queue = get_queue(settings.VISIBILITY_QUEUE, commit_mode="auto")
        if later is not None:
            if later.microsecond:  # the whole second at or just after it
                later = later.replace(microsecond=0) + timedelta(seconds=1)
            job = _visibility_job(f"{VISIBILITY_JOB_ID}-at-{int(later.timestamp())}")
            queue.enqueue_at(later, RUN_MEDIA_SYNC, **job)
            return True
        with queue.connection.pipeline() as pipe:
            pipe.multi()
            pipe.lrem(queue.key, 0, VISIBILITY_JOB_ID)
            queue.enqueue(RUN_MEDIA_SYNC, pipeline=pipe, **_visibility_job(VISIBILITY_JOB_ID))
            pipe.execute()
    except RedisError:
        logger.warning("visibility job: Redis unavailable; the catch-up will run the changes")
        return False
    return True


def _visibility_job(job_id: str) -> dict[str, Any]:
    return {
        "job_id": job_id,
        "job_timeout": 600,
        "description": "move bytes and purge the edge for the waiting changes",
    }


def _mark_enqueued(job_id: int) -> None:
    # The job is on its way whether or not this is recorded: a row without enqueued_at only
    # makes reconcile enqueue it once more later (its waiting entry replaced, not doubled).
    try:
        IngestJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
    except DatabaseError:
        logger.warning("ingest job %s: could not record the enqueue", job_id, exc_info=True)
