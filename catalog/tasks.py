"""rq entry points of the catalog's own work: thin, ids only.

The renditions of one album are catalog's (catalog.services.renditions); ingest enqueues them
by this dotted path (ingest.queueing), as the follow-up of an ingest job and from the catch-up.
So is visibility (catalog.visibility): the job that moves bytes and purges the edge after each
change the public may see (ingest.queueing.visibility_enqueue), and the sweep config/cron.py
schedules.
"""

import logging

from django.db import close_old_connections, connections
from rq import get_current_job

from catalog import visibility
from catalog.services import record_renditions_make

logger = logging.getLogger(__name__)


def run_renditions(kind: str, record_id: int, force: bool = False) -> str:
    """Make the renditions of one album's images (the follow-up of its ingest job, the
    catch-up's, or a backfill's: ``force`` makes them again), on an rq worker or the embedded
    mode's background thread (every run its last attempt).

    A storage error raises while rq has retries left (catalog.services.renditions.Transient),
    so rq retries with backoff; the images already done are skipped then. On the last attempt
    the images still failing are marked failed, and the album is shown with their originals.
    """
    close_old_connections()
    try:
        rq_job = get_current_job()
        final_attempt = rq_job is None or not rq_job.retries_left
        tally = record_renditions_make(
            kind=kind, record_id=record_id, force=force, final_attempt=final_attempt
        )
        return (
            f"done {tally.done}, skipped {tally.skipped}, original missing {tally.missing}, "
            f"failed {tally.failed}"
        )
    finally:
        connections.close_all()


class VisibilityIncomplete(Exception):
    """The store or the edge failed for some changes: rq tries the job again."""


def run_media_sync() -> str:
    """Run the waiting visibility changes (catalog.visibility.media_changes_process): move the
    bytes, purge the edge.

    One run at a time across the workers, waiting for the one before it (not skipping: the
    changes it missed would wait for the sweep). A storage or purge error raises while rq has
    retries left; after the last, the sweep tries again at each run.
    """
    rq_job = get_current_job()
    lock = None
    if rq_job is not None:
        lock = rq_job.connection.lock(
            f"archive:lock:media-sync:{rq_job.origin}", timeout=600, blocking_timeout=600
        )
        lock.acquire()
    close_old_connections()
    try:
        run = visibility.media_changes_process()
        summary = run.summary()
        logger.info("visibility: %s", summary)
        if not run.ok and rq_job is not None and rq_job.retries_left:
            raise VisibilityIncomplete(summary)
        return summary
    finally:
        connections.close_all()
        if lock is not None and lock.owned():
            lock.release()


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
