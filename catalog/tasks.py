"""rq entry points of the catalog's own work: thin, ids only.

The renditions of one album are catalog's (catalog.services.renditions); ingest enqueues them
by this dotted path (ingest.queueing), as the follow-up of an ingest job and from the catch-up.
"""

from django.db import close_old_connections, connections
from rq import get_current_job

from catalog.services import record_renditions_make


def run_renditions(kind: str, record_id: int) -> str:
    """Make the renditions of one album's images (the follow-up of its ingest job), on an rq
    worker or the embedded mode's background thread (every run its last attempt).

    A storage error raises while rq has retries left (catalog.services.renditions.Transient),
    so rq retries with backoff; the images already done are skipped then. On the last attempt
    the images still failing are marked failed, and the album is shown with their originals.
    """
    close_old_connections()
    try:
        rq_job = get_current_job()
        final_attempt = rq_job is None or not rq_job.retries_left
        tally = record_renditions_make(kind=kind, record_id=record_id, final_attempt=final_attempt)
        return (
            f"done {tally.done}, skipped {tally.skipped}, original missing {tally.missing}, "
            f"failed {tally.failed}"
        )
    finally:
        connections.close_all()
