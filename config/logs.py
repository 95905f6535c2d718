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
from json.encoder import encode_basestring_ascii

from pythonjsonlogger.json import JsonFormatter

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


# --- The request line, written directly ----------------------------------------------------
# Through Python's logging the request line was a public read's largest single cost after
# the query (issue 24, docs/api.md): ~146k instructions, ~215k in JSON (the caller's frame
# looked up, a record of twenty attributes, the formatter's general case). The line is the
# same few fields every time, so where settings.LOGGING's console handler is the only one in
# force, with its formatter as configured, RequestIdMiddleware writes the bytes that handler
# would write, itself, under the handler's lock. Whether that holds is asked per
# request, cheaply, and proved once per handler, formatter and filter by formatting a probe
# both ways; anything else (a test's handler, Sentry's hook on logging, another formatter, a
# record factory, a job's ids in the context) goes through logging as before.

_PROBE_TIME = 1_796_000_000.0625  # 2026-11-30, a time with milliseconds
_PROBE_PATH = '/api/v1/runways/\n2026 "ä\u2028\x1b\\/'


class _RequestLine:
    """The request line of one console handler and its formatter, for as long as they stay."""

    def __init__(self, handler: logging.StreamHandler, json_format: bool):
        self.handler = handler
        self.json_format = json_format
        # (second, time zone) and its text, one tuple: threads read and replace it whole.
        self._stamp: tuple[tuple, str] = ((), "")

    def asctime(self, now: float) -> str:
        """logging.Formatter.formatTime's text for `now`, the seconds made once per second
        (and again when the time zone changes: time.tzset() makes a new time.tzname)."""
        second = int(now)
        key = (second, time.tzname)
        known, stamp = self._stamp
        if key != known:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
            self._stamp = (key, stamp)
        return f"{stamp},{int((now - second) * 1000):03d}"

    def text(
        self, now: float, method: str, path: str, status: int, duration_ms: float, rid: str
    ) -> str:
        asctime = self.asctime(now)
        if self.json_format:
            encode = encode_basestring_ascii
            return (
                f'{{"time": "{asctime}", "level": "INFO", "logger": "{request_logger.name}", '
                f'"message": {encode(f"{method} {path} {status}")}, "method": {encode(method)}, '
                f'"path": {encode(path)}, "status": {status!r}, "duration_ms": {duration_ms!r}, '
                f'"request_id": {encode(rid)}, "ingest_job_id": null, "rq_job_id": null}}'
            )
        return (
            f"{asctime} INFO {request_logger.name} {escape_controls(f'{method} {path}')} "
            f"{status} [request_id={escape_controls(rid)}]"
        )

    def write(self, method: str, path: str, status: int, duration_ms: float, rid: str) -> bool:
        """Write the line, or report why not as StreamHandler.emit would (on stderr): True.
        Once the stream is touched the line may be in it, so logging must not write it again;
        False (logging's turn) only if the text could not be made."""
        handler = self.handler
        try:
            text = self.text(time.time(), method, path, status, duration_ms, rid)
        except Exception:
            return False
        try:
            with handler.lock:  # type: ignore[union-attr]  # a StreamHandler always has one
                stream = handler.stream
                stream.write(text + handler.terminator)
                if hasattr(stream, "flush"):
                    stream.flush()
        except RecursionError:
            raise
        except Exception:
            handler.handleError(_record(method, path, status, duration_ms))
        return True


# What the direct line leaves out of logging: nothing of these may be replaced (Sentry's
# logging integration, for one, hooks Logger.callHandlers).
_LOGGING_PATH = (
    (logging.Logger, "handle"),
    (logging.Logger, "callHandlers"),
    (logging.Handler, "handle"),
    (logging.StreamHandler, "emit"),
    (logging.StreamHandler, "flush"),
)


def _record(method: str, path: str, status: int, duration_ms: float) -> logging.LogRecord:
    """The record logging makes of the request line (the caller adds its time and ids)."""
    return request_logger.makeRecord(
        request_logger.name,
        logging.INFO,
        __file__,
        0,
        "%s %s %s",
        (method, path, status),
        None,
        extra={"method": method, "path": path, "status": status, "duration_ms": duration_ms},
    )


def _request_line_for(handler: logging.Handler) -> _RequestLine | None:
    """The direct line for the handler, if it is the console handler as settings.LOGGING
    makes it and its formatter writes what the direct line does (a probe, both ways)."""
    formatter = handler.formatter
    if (
        type(handler) is not logging.StreamHandler
        or type(request_logger) is not logging.Logger
        or logging.getLogRecordFactory() is not logging.LogRecord
        or any(getattr(cls, name).__module__ != "logging" for cls, name in _LOGGING_PATH)
        or [type(f) for f in handler.filters] != [ContextFilter]
        or type(formatter) not in (PlainFormatter, JsonFormatter)
        or formatter.converter is not time.localtime  # type: ignore[union-attr]
        or logging.getLevelName(logging.INFO) != "INFO"
    ):
        return None
    line = _RequestLine(handler, json_format=type(formatter) is JsonFormatter)
    method, path, status, duration_ms, rid = "GET", _PROBE_PATH, 404, 12.5, "probe-1"
    record = _record(method, path, status, duration_ms)
    record.created = _PROBE_TIME
    record.msecs = int((_PROBE_TIME - int(_PROBE_TIME)) * 1000) + 0.0
    token, no_job = request_id.set(rid), joblog.current.set(None)
    try:
        handler.filter(record)
        expected = formatter.format(record)  # type: ignore[union-attr]
        written = line.text(_PROBE_TIME, method, path, status, duration_ms, rid)
    except Exception:
        return None
    finally:
        joblog.current.reset(no_job)
        request_id.reset(token)
    return line if written == expected else None


_request_line: tuple[tuple, _RequestLine | None] = ((), None)


def write_request_line(method: str, path: str, status: int, duration_ms: float, rid: str) -> bool:
    """Write the request line directly if logging would write these very bytes (see above):
    True if it was written (or its failure reported), False if logging is to write it. The
    caller has asked request_logger.isEnabledFor(INFO)."""
    global _request_line
    root = logging.root
    handlers = root.handlers
    if (
        len(handlers) != 1
        or type(status) is not int  # an IntEnum's repr is not its number
        or request_logger.filters
        or request_logger.disabled
        or joblog.current.get() is not None
    ):
        return False
    logger: logging.Logger | None = request_logger
    while logger is not root:  # config.requests, and "config" if someone made that logger
        if logger is None or logger.handlers or not logger.propagate:
            return False
        logger = logger.parent
    handler = handlers[0]
    # Whatever _request_line_for judged by that can change after a first request: a hook set
    # late (an APM agent's, sentry_sdk.init's), a level renamed, a handler's class swapped.
    key = (
        handler,
        type(handler),
        handler.formatter,
        handler.level,
        logging.getLogRecordFactory(),
        logging.getLevelName(logging.INFO),
        *(getattr(cls, name) for cls, name in _LOGGING_PATH),
        *handler.filters,
    )
    known, line = _request_line
    if key != known:
        line = _request_line_for(handler) if handler.level <= logging.INFO else None
        _request_line = (key, line)
    return line is not None and line.write(method, path, status, duration_ms, rid)


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
                method, path, status = request.method, request.path, response.status_code
                duration_ms = round((time.perf_counter() - started) * 1000, 2)
                if not write_request_line(method, path, status, duration_ms, rid):
                    request_logger.info(
                        "%s %s %s",
                        method,
                        path,
                        status,
                        extra={
                            "method": method,
                            "path": path,
                            "status": status,
                            "duration_ms": duration_ms,
                        },
                    )
            return response
        finally:
            request_id.reset(token)
