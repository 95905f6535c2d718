"""Log lines that say which request or job they belong to.

``ContextFilter`` (on the console handler, see settings.LOGGING) stamps every record with the
current request id and, inside an ingest job, the ingest job id and rq job id, so a JSON line
can be found by any of them. ``RequestIdMiddleware`` sets the request id (the caller's
``X-Request-ID`` when it is a sane token, else a new one), echoes it back and writes one line
per request.
"""

import logging
import os
import re
import time
from contextvars import ContextVar

from ingest import joblog

request_id: ContextVar[str] = ContextVar("request_id", default="")
# A caller's id is echoed into headers and logs: only short, plain tokens (no header or log
# injection through it); anything else gets a fresh id.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

request_logger = logging.getLogger("config.requests")


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        job = joblog.current.get()
        record.ingest_job_id = job.ingest_job_id if job else None
        record.rq_job_id = job.rq_job_id if job else None
        return True


class PlainFormatter(logging.Formatter):
    """The plain format, with whichever ids the line has appended (``make run``)."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        ids = [
            f"{name}={value}"
            for name in ("request_id", "ingest_job_id", "rq_job_id")
            if (value := getattr(record, name, None))
        ]
        return f"{line} [{' '.join(ids)}]" if ids else line


# Asked every few seconds by every load balancer and orchestrator: a line for each answer
# that says "fine" would bury the lines that matter. A failing probe is logged.
_PROBES = frozenset({"/healthz", "/readyz"})


class RequestIdMiddleware:
    """Outermost middleware: one contextvar set and one log line per request, nothing more
    (the public API's per-request budget is small); successful health probes are not logged."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get("X-Request-ID", "")
        # 128 random bits as hex, as uuid4().hex without building a UUID.
        rid = (
            incoming if incoming and _VALID_REQUEST_ID.fullmatch(incoming) else os.urandom(16).hex()
        )
        token = request_id.set(rid)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = rid
            quiet = request.path in _PROBES and response.status_code < 400
            if not quiet and request_logger.isEnabledFor(logging.INFO):
                request_logger.info(
                    "%s %s %s",
                    request.method,
                    request.path,
                    response.status_code,
                    extra={
                        "method": request.method,
                        "path": request.path,
                        "status": response.status_code,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    },
                )
            return response
        finally:
            request_id.reset(token)
