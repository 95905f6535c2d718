"""Log lines that say which request they belong to: ``RequestIdMiddleware`` sets the request
id (the caller's ``X-Request-ID`` when it is a sane token, else a new one), echoes it back and
logs one line per request; ``RequestIdFilter`` (on the console handler, settings.LOGGING)
stamps every record with it, as ``ingest.joblog.JobFilter`` does with the ingest job's ids.
"""

import logging
import re
import time
import uuid
from contextvars import ContextVar

request_id: ContextVar[str] = ContextVar("request_id", default="")
# A caller's id is echoed into headers and logs: only short, plain tokens (no header or log
# injection through it); anything else gets a fresh id.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

request_logger = logging.getLogger("config.requests")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


# What a log reader could take for a line break or a terminal command, or that reorders or
# hides text on a terminal: C0 and C1 controls, DEL, Unicode's line and paragraph separators,
# and its invisible format characters (bidirectional overrides and isolates, zero-width ones).
# A request path is the caller's to choose: "/x%0A2026-... INFO config.requests GET /admin/
# 200" would otherwise write a forged line, and "%E2%80%AE" turn the rest of one around. JSON
# lines escape all of them already (ensure_ascii).
_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def escape_controls(text: str) -> str:
    """Control characters as Python's escapes (a line break as \\n): what is left is one line."""
    return _CONTROLS.sub(lambda match: match[0].encode("unicode_escape").decode(), text)


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
# A press preview's address is its key (review.previews): the log keeps the route, not the key.
_PREVIEW_KEY = re.compile(r"^(/preview/(?:images/)?)[^/]+")


class RequestIdMiddleware:
    """Outermost: the request id, and one log line per request (settings.LOGGING quiets
    runserver's and django.request's); successful health probes are not logged."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get("X-Request-ID", "")
        rid = incoming if _VALID_REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        token = request_id.set(rid)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = rid
            if request.path not in _PROBES or response.status_code >= 400:
                method, status = request.method, response.status_code
                path = _PREVIEW_KEY.sub(r"\1…", request.path)
                request_logger.info(
                    "%s %s %s",
                    method,
                    path,
                    status,
                    extra={
                        "method": method,
                        "path": path,
                        "status": status,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    },
                )
            return response
        finally:
            request_id.reset(token)
