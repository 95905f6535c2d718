"""The embedded mode's runner: with no REDIS_URL, jobs run in this process.

A job is handed to one background thread after the request's transaction commits, so the
crawler gets its 202 at once, just as with a real worker, and the status endpoint shows the
job queued, running, then finished. One thread, so jobs run one at a time: on SQLite only one
writer can hold the database anyway. There is no scheduler, so no delayed retries: every run
is the job's last attempt (transient image errors become issues; a job-level one fails the
job, and an editor can retry it from the admin).

The thread pool's threads are joined at interpreter exit, so a job in progress completes
before `runserver` or a management command exits. A job lost with its process (killed) stays
queued or running in the database, and `manage.py reconcile` picks it up.
"""

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait

from django.db import connections

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pending: set[Future] = set()


def submit(job_id: int) -> Future:
    return _submit(_run, job_id, time.monotonic())


def submit_renditions(kind: str, record_id: int) -> Future:
    """The renditions of an album, on the same one thread: after the ingest jobs before it."""
    return _submit(_run_renditions, kind, record_id)


def _submit(fn, *args) -> Future:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-inline")
        future = _executor.submit(fn, *args)
        _pending.add(future)
    future.add_done_callback(_pending.discard)
    return future


def wait_idle(timeout: float | None = None) -> bool:
    """Block until every submitted job has finished (commands and tests); True if they did.

    Including what they submitted meanwhile: an ingest job's renditions follow it.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        with _lock:
            pending = {future for future in _pending if not future.done()}
        if not pending:
            return True
        left = None if deadline is None else max(deadline - time.monotonic(), 0)
        _, not_done = wait(pending, timeout=left)
        if not_done:
            return False


def _run(job_id: int, submitted: float) -> str:
    from ingest import joblog, pipeline

    try:
        return joblog.job_run(
            job_id,
            lambda: pipeline.run_job(job_id, final_attempt=True),
            queue_wait=time.monotonic() - submitted,
        )
    except Exception:
        # Already recorded on the job row when it could be; never let it kill the thread.
        logger.exception("in-process ingest job %s raised", job_id)
        return "error"
    finally:
        # This thread's own connections (Django's are per thread).
        connections.close_all()


def _run_renditions(kind: str, record_id: int) -> str:
    from catalog.services import record_renditions_make

    try:
        tally = record_renditions_make(kind=kind, record_id=record_id, final_attempt=True)
        return f"renditions done {tally.done}, failed {tally.failed + tally.missing}"
    except Exception:
        logger.exception("in-process renditions of %s %s raised", kind, record_id)
        return "error"
    finally:
        connections.close_all()
