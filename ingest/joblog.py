"""Which ingest job a log line belongs to, how long its phases took, and its one summary line.

The task entry points (``ingest.tasks``, run by rq or by the embedded mode's
``ingest.thread_pool``) run a job inside ``run_logged``: it binds the ingest job id and rq job
id for the job's log lines (JobFilter stamps them on every record: settings.LOGGING names it on
the console handler), collects the phase
timings the pipeline reports through ``phase``, and ends with exactly one ``ingest job ended``
line: outcome, reason, record, counts, durations.
"""

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

logger = logging.getLogger("ingest.jobs")


@dataclass
class JobContext:
    ingest_job_id: int | None  # None for an rq job that is not an ingest job (renditions)
    rq_job_id: str | None
    seconds: dict[str, float] = field(default_factory=dict)


current: ContextVar[JobContext | None] = ContextVar("ingest_job", default=None)


class JobFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        job = current.get()
        record.ingest_job_id = job.ingest_job_id if job else None
        record.rq_job_id = job.rq_job_id if job else None
        return True


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time one step of the current job (adds up if the step runs more than once)."""
    job = current.get()
    started = time.perf_counter()
    try:
        yield
    finally:
        if job is not None:
            job.seconds[name] = job.seconds.get(name, 0.0) + time.perf_counter() - started


def run_logged(
    job_id: int,
    run: Callable[[], str],
    *,
    rq_job_id: str | None = None,
    queue_wait: float | None = None,
) -> str:
    """Run ``run`` (one execution of ingest job ``job_id``) and log how it ended."""
    context = JobContext(ingest_job_id=job_id, rq_job_id=rq_job_id)
    token = current.set(context)
    started = time.perf_counter()
    outcome = "error"
    try:
        outcome = run()
        return outcome
    except Exception:
        # A transient error on its way to rq's retry (the row says so), or a bug.
        outcome = "retrying"
        raise
    finally:
        try:
            _log_end(context, outcome, time.perf_counter() - started, queue_wait)
        finally:
            current.reset(token)


def _log_end(context: JobContext, outcome: str, total: float, queue_wait: float | None) -> None:
    from django.db import DatabaseError

    from ingest.models import IngestJob

    job_id = cast(int, context.ingest_job_id)  # run_logged's context: an ingest job's
    row: Mapping[str, Any] | None
    try:
        row = (
            IngestJob.objects.filter(pk=job_id)
            .values("status", "reason", "runway_id", "street_snap_id", "attempts", "report")
            .first()
        )
    except DatabaseError:
        # The database went away with the job (a transient error on its way to a retry):
        # the line still says how the execution ended.
        row = None
    if row is None:
        row = {
            "status": "",
            "reason": "",
            "runway_id": None,
            "street_snap_id": None,
            "attempts": None,
            "report": {},
        }
    record_id = row["runway_id"] or row["street_snap_id"]
    counts = (row["report"] or {}).get("counts", {})
    durations = {
        "queue_wait": _round(queue_wait),
        "download": _round(context.seconds.get("download")),
        "write": _round(context.seconds.get("write")),
        "total": _round(total),
    }
    logger.info(
        "ingest job ended: %s%s, record %s, counts %s, seconds %s",
        outcome,
        f" ({row['reason']})" if row["reason"] else "",
        record_id,
        counts,
        durations,
        extra={
            "outcome": outcome,
            "status": row["status"],
            "reason": row["reason"],
            "record_id": record_id,
            "attempt": row["attempts"],
            "counts": counts,
            "durations": durations,
        },
    )


def _round(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)
