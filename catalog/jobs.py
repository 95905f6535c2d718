"""Catalog's own work on rq: the renditions job of one album, put on the `renditions` queue by
its dotted path (catalog.tasks.run_renditions), as ingest's follow-up, the catch-up and the
backfill (`manage.py renditions`) do. Imports nothing of what the job runs."""

from django.conf import settings
from django_rq import get_queue
from rq import Retry
from rq.job import Job

RUN_RENDITIONS = "catalog.tasks.run_renditions"


def renditions_job_enqueue(
    *, kind: str, record_id: int, force: bool = False, at_front: bool = False
) -> Job:
    """Put the renditions job of one album on RENDITIONS_QUEUE, retried with backoff on
    storage errors (INGEST_RETRY_INTERVALS). ``force`` makes them again for images that have
    them; ``at_front``: before the albums waiting (the rest of one a job left for ingest).
    Raises redis' errors: the caller decides what a lost enqueue means."""
    intervals = settings.INGEST_RETRY_INTERVALS
    # (kind, record_id) as before unless forced: the jobs read the same on either side of a
    # deployment.
    args = (kind, record_id, True) if force else (kind, record_id)
    return get_queue(settings.RENDITIONS_QUEUE, commit_mode="auto").enqueue(
        RUN_RENDITIONS,
        *args,
        retry=Retry(max=len(intervals), interval=intervals) if intervals else None,
        job_timeout=settings.INGEST_JOB_TIMEOUT,
        description=f"renditions of {kind} {record_id}" + (" (again)" if force else ""),
        at_front=at_front,
    )
