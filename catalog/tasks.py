"""rq entry points of the catalog's own work: thin, ids only.

The renditions of one album are catalog's (catalog.services.renditions); ingest enqueues them
by this dotted path (ingest.queueing), as the follow-up of an ingest job and from the catch-up.
So is visibility (catalog.visibility): the job that moves bytes and purges the edge after each
change the public may see (ingest.queueing.visibility_enqueue), and the sweep config/cron.py
schedules.
"""

import logging

from django.db import close_old_connections, connections
from redis.exceptions import RedisError
from rq import Queue, Worker, get_current_job
from rq.job import Job

from catalog import visibility
from catalog.jobs import renditions_job_enqueue
from catalog.services import record_renditions_make

logger = logging.getLogger(__name__)


def run_renditions(kind: str, record_id: int, force: bool = False) -> str:
    """Make the renditions of one album's images (the follow-up of its ingest job, the
    catch-up's, or a backfill's: ``force`` makes them again), on an rq worker or the embedded
    mode's background thread (every run its last attempt).

    A storage error raises while rq has retries left (catalog.services.renditions.Transient),
    so rq retries with backoff; the images already done are skipped then. On the last attempt
    the images still failing are marked failed, and the album is shown with their originals.

    On a worker that serves other queues before this job's (`ingest` before `renditions`),
    the job stops starting images as soon as a job waits there, and puts the rest of the
    album back at the front of the renditions queue: the worker takes the new album next,
    after the images in hand, and then carries on with this one (docs/operations.md,
    "Queues"). A forced run does not stop (its rest would be done again).
    """
    close_old_connections()
    try:
        rq_job = get_current_job()
        final_attempt = rq_job is None or not rq_job.retries_left
        ahead = _queues_ahead(rq_job) if rq_job is not None and not force else []
        tally = record_renditions_make(
            kind=kind,
            record_id=record_id,
            force=force,
            final_attempt=final_attempt,
            stop=(lambda: _waiting(ahead)) if ahead else None,
        )
        summary = (
            f"done {tally.done}, skipped {tally.skipped}, original missing {tally.missing}, "
            f"failed {tally.failed}"
        )
        if tally.left:
            try:
                renditions_job_enqueue(kind=kind, record_id=record_id, at_front=True)
            except RedisError:
                # The catch-up enqueues the album again once its images are old enough.
                logger.warning("renditions of %s %s: the rest not enqueued", kind, record_id)
            summary += f"; {tally.left} left to a new job, after the waiting ingest"
        return summary
    finally:
        connections.close_all()


def _queues_ahead(rq_job: Job) -> list[Queue]:
    """The queues the worker running ``rq_job`` serves before the job's own queue (none for
    a worker that serves only renditions)."""
    try:
        key = Worker.redis_worker_namespace_prefix + (rq_job.worker_name or "")
        raw = rq_job.connection.hget(key, "queues")
    except RedisError:
        return []
    names = raw.decode().split(",") if isinstance(raw, bytes) else []
    if rq_job.origin not in names:
        return []
    return [
        Queue(name, connection=rq_job.connection) for name in names[: names.index(rq_job.origin)]
    ]


def _waiting(queues: list[Queue]) -> bool:
    try:
        return any(queue.count for queue in queues)
    except RedisError:
        return False  # carry on: the album's images are this job's work either way


def run_media_sync() -> str:
    """Run the waiting visibility changes (catalog.visibility.media_changes_run): move the
    bytes, purge the edge. A change that fails waits out its back-off and the run asks for the
    next one itself; a run that finds another holding the lock leaves the changes to it."""
    close_old_connections()
    try:
        run = visibility.media_changes_run()
        summary = "another run holds the lock" if run is None else run.summary()
        logger.info("visibility: %s", summary)
        return summary
    finally:
        connections.close_all()


def media_sweep(full: bool = False) -> str:
    """The visibility sweep (catalog.visibility.media_sweep): every few minutes, and the full
    one daily (media_audit)."""
    close_old_connections()
    try:
        run = visibility.media_sweep(full=full)
        return f"{run.summary()}; failed {run.failed}"
    finally:
        connections.close_all()


def media_audit() -> str:
    return media_sweep(full=True)
