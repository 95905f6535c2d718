"""The embedded mode's runner: with no REDIS_URL, jobs run in this process, on one background
thread (ingest.queueing submits them; the tasks are ingest.tasks', named by dotted path).

A job is handed to the thread after the request's transaction commits, so the crawler gets its
202 at once, just as with a real worker, and the status endpoint shows the job queued, running,
then finished. One thread, so jobs run one at a time: on SQLite only one writer can hold the
database anyway. There is no scheduler, so no delayed retries: every run is the job's last
attempt (transient image errors become issues; a job-level one fails the job, and an editor can
retry it from the admin).

The thread pool's threads are joined at interpreter exit, so a job in progress completes
before `runserver` or a management command exits. A job lost with its process (killed) stays
queued or running in the database, and `manage.py reconcile` picks it up.
"""

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from django.db import connections
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

_lock = threading.Lock()
# One thread per lane: "jobs" (ingest jobs and their renditions, one at a time), and
# "visibility" (bytes and purges after each change the public may see: a takedown does not
# wait behind an album's ingest).
_executors: dict[str, ThreadPoolExecutor] = {}
_pending: set[Future] = set()


def submit(task: str, *args: Any, lane: str = "jobs") -> Future:
    """Run the function at dotted path ``task`` with ``args`` on the background thread of
    ``lane``, after everything submitted to it before."""
    with _lock:
        executor = _executors.get(lane)
        if executor is None:
            executor = _executors[lane] = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"{lane}-thread-pool"
            )
        future = executor.submit(_run, task, args)
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


def _run(task: str, args: tuple[Any, ...]) -> Any:
    try:
        return import_string(task)(*args)
    except Exception:
        # Already recorded on the job row when it could be; never let it kill the thread.
        logger.exception("in-process task %s%r raised", task, args)
        return "error"
    finally:
        # This thread's own connections (Django's are per thread).
        connections.close_all()
