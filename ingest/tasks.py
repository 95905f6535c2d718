"""rq entry points: thin, ids only (the job row holds everything else)."""

from django.db import close_old_connections, connections
from rq import get_current_job

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
