"""rq entry points: thin, ids only (the job row holds everything else)."""

from django.db import close_old_connections, connections
from rq import get_current_job

from catalog import rendering
from ingest import pipeline


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
        return pipeline.run_job(job_id, final_attempt=final_attempt)
    finally:
        connections.close_all()


def run_renditions(kind: str, record_id: int) -> str:
    """Make the renditions of one album's images (the follow-up of its ingest job).

    A storage error raises while rq has retries left (rendering.Transient), so rq retries
    with backoff; the images already done are skipped then. On the last attempt the images
    still failing are marked failed, and the album is shown with their originals.
    """
    close_old_connections()
    try:
        rq_job = get_current_job()
        final_attempt = rq_job is None or not rq_job.retries_left
        tally = rendering.record_renditions_make(
            kind=kind, record_id=record_id, final_attempt=final_attempt
        )
        return (
            f"done {tally.done}, skipped {tally.skipped}, original missing {tally.missing}, "
            f"failed {tally.failed}"
        )
    finally:
        connections.close_all()
