"""A circuit breaker for Redis in the web processes: after a few failures in a row, callers
skip Redis for a while instead of each waiting for its timeout.

A Redis that accepts connections and never answers costs every caller its whole socket
timeout; without a breaker, every public request waited a second for the throttle and logged
a traceback. With it, the first FAILURES calls in a row that fail open the breaker for PAUSE
seconds: callers skip Redis (the throttle lets requests through, /readyz says failing, an
enqueue is left to `reconcile`) at no cost. Then one caller at a time tries Redis again; a
success closes the breaker, a failure opens it for another PAUSE. The log says so once per
outage, not once per request: a warning when it opens, a line when Redis answers again.

State is per process (each gunicorn worker learns on its own, after its own FAILURES calls).
"""

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger(__name__)

FAILURES = 2
PAUSE = 10.0


class Breaker:
    def __init__(self, name: str, *, failures: int = FAILURES, pause: float = PAUSE) -> None:
        self.name, self.failures, self.pause = name, failures, pause
        self._lock = threading.Lock()
        self._failed = 0  # calls failed in a row
        self._open_until: float | None = None  # None: closed
        self._trying = False  # one caller is trying again after a pause

    def allow(self) -> bool:
        """Whether to call Redis now; a caller told yes must report succeeded() or failed()."""
        with self._lock:
            if self._open_until is None:
                return True
            if self._trying or time.monotonic() < self._open_until:
                return False
            self._trying = True
            return True

    def succeeded(self) -> None:
        with self._lock:
            was_open = self._open_until is not None
            self._failed, self._open_until, self._trying = 0, None, False
        if was_open:
            logger.warning("%s answers again", self.name)

    def failed(self, error: BaseException) -> None:
        with self._lock:
            self._failed += 1
            was_open = self._open_until is not None
            self._trying = False
            if not was_open and self._failed < self.failures:
                return
            self._open_until = time.monotonic() + self.pause
        if not was_open:
            logger.warning(
                "%s is unavailable (%s: %s): skipped for %g s at a time until it answers",
                self.name,
                type(error).__name__,
                error,
                self.pause,
            )

    @contextmanager
    def call(self, *errors: type[BaseException]) -> Iterator[None]:
        """Report the block's outcome: one of `errors` (default: anything raised, a
        cancellation included, so a trial never stays open) is a failure, and is raised on;
        anything else is a success."""
        failures = errors or (BaseException,)
        try:
            yield
        except failures as error:
            self.failed(error)
            raise
        self.succeeded()

    def reset(self) -> None:
        with self._lock:
            self._failed, self._open_until, self._trying = 0, None, False


# One for the Redis of REDIS_URL: the throttle's cache, the queues and the probes all use it.
redis = Breaker("Redis")
