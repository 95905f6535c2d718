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


# What a log reader could take for a line break or a terminal command: C0 and C1 controls,
# DEL, and Unicode's line and paragraph separators. A request path is the caller's to choose:
# "/x%0A2026-... INFO config.requests GET /admin/ 200" would otherwise write a forged line.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def escape_controls(text: str) -> str:
    """Control characters as escapes (a line break as \\n): what is left is one line."""
    return _CONTROLS.sub(_escape, text)


class PlainFormatter(logging.Formatter):
    """The plain format (``make run``), with whichever ids the line has appended.

    One record is one line that starts with its time; a traceback (or stack) follows on lines
    of its own, each indented, so no text of a record can pass for another record's line."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        line = escape_controls(self.formatMessage(record))
        ids = [
            f"{name}={value}"
            for name in ("request_id", "ingest_job_id", "rq_job_id")
            if (value := getattr(record, name, None))
        ]
        if ids:
            line = f"{line} [{escape_controls(' '.join(ids))}]"
        details = []
        if record.exc_info:
            details.append(self.formatException(record.exc_info))
        elif record.exc_text:
            details.append(record.exc_text)
        if record.stack_info:
            details.append(self.formatStack(record.stack_info))
        indented = [
            f"    {escape_controls(part)}" for text in details for part in text.splitlines()
        ]
        return "\n".join([line, *indented])


# Asked every few seconds by every load balancer and orchestrator: a line for each answer
# that says "fine" would bury the lines that matter. A failing probe is logged.
_PROBES = frozenset({"/healthz", "/readyz"})


class RequestIdMiddleware:
    """Outermost middleware: one contextvar set and one log line per request, nothing more
    (the public API's per-request budget is small); successful health probes are not logged."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # META, not request.headers: that builds a dict of every header, once per request.
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")
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
