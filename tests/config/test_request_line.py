"""The request line written directly (config.logs.write_request_line): the very bytes logging
would write through settings.LOGGING's console handler, and logging itself whenever anything
else is in force."""

import io
import logging
import logging.config
import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings as django_settings
from hypothesis import given
from hypothesis import settings as fuzz_settings
from hypothesis import strategies as st

from config import logs
from config.logs import ContextFilter, request_id, request_logger
from ingest import joblog

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ["plain", "json"]


def console_formatter(name: str) -> logging.Formatter:
    """The formatter settings.LOGGING makes under LOG_FORMAT=`name`, made the same way."""
    config = dict(django_settings.LOGGING["formatters"][name])
    return logging.config.DictConfigurator({}).configure_formatter(config)


@contextmanager
def console_only(name: str, stream=None):
    """Root's handlers replaced by one console handler as settings.LOGGING makes it (pytest's
    own capturing handlers set aside): the set-up the direct line is for. Yields the stream."""
    stream = io.StringIO() if stream is None else stream
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextFilter())
    handler.setFormatter(console_formatter(name))
    root = logging.getLogger()
    kept, level = root.handlers[:], root.level
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.handlers[:] = kept
        root.setLevel(level)


def through_logging(formatter, now, method, path, status, duration_ms, rid) -> str:
    """What the console handler's formatter writes for the line at the time `now`, from the
    record logging makes of it (config.logs._record, the probe's: the requests below hold the
    direct line to request_logger.info's as well)."""
    record = logs._record(method, path, status, duration_ms)
    record.created = now
    record.msecs = int((now - int(now)) * 1000) + 0.0  # as LogRecord does (Python 3.12)
    token = request_id.set(rid)
    try:
        ContextFilter().filter(record)
    finally:
        request_id.reset(token)
    return formatter.format(record)


METHODS = st.sampled_from(["GET", "HEAD", "POST", "OPTIONS", "DELETE", "PROPFIND"])
STATUSES = st.integers(min_value=100, max_value=599)
DURATIONS = st.floats(min_value=0, max_value=1e6, allow_nan=False).map(lambda d: round(d, 2))
REQUEST_IDS = st.from_regex(r"\A[A-Za-z0-9._:-]{1,128}\Z")
# 1970 to 2100, to the microsecond
TIMES = st.integers(min_value=0, max_value=4_102_444_800 * 10**6).map(lambda us: us / 10**6)


@pytest.mark.parametrize("name", FORMATS)
@fuzz_settings(max_examples=300, deadline=None)
@given(
    now=TIMES,
    method=METHODS,
    path=st.text(max_size=60).map(lambda text: "/" + text),
    status=STATUSES,
    duration_ms=DURATIONS,
    rid=REQUEST_IDS,
)
def test_the_direct_line_is_what_the_console_formatter_writes(
    name, now, method, path, status, duration_ms, rid
):
    formatter = console_formatter(name)
    line = logs._RequestLine(logging.StreamHandler(io.StringIO()), json_format=name == "json")

    direct = line.text(now, method, path, status, duration_ms, rid)

    assert direct == through_logging(formatter, now, method, path, status, duration_ms, rid)


@pytest.mark.parametrize("name", FORMATS)
def test_the_clock_turns_each_second_and_with_the_time_zone(name, monkeypatch):
    formatter = console_formatter(name)
    line = logs._RequestLine(logging.StreamHandler(io.StringIO()), json_format=name == "json")
    second = 1_796_000_000
    fields = ("GET", "/api/v1/runways/", 200, 1.5, "clock")

    def same(now: float) -> None:
        assert line.text(now, *fields) == through_logging(formatter, now, *fields)

    try:
        # given: a line written late in one second (the seconds' text is kept)
        same(second + 0.999)
        # then: the next second, and back, each have their own text
        same(second + 1.0)
        same(second + 0.5)
        # when: the time zone changes (hours and minutes both differ from UTC's)
        for zone in ("UTC", "Asia/Kolkata", "America/St_Johns"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            same(second + 0.25)
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.django_db
@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/runways/?page_size=2", 200),
        # a quote, a letter past ASCII, a line break, ESC and a line separator in the path
        ("/api/v1/runways/%22%C3%A4%0A%1B%E2%80%A8/", 404),
    ],
)
def test_a_request_writes_its_line_directly_and_as_logging_would(client, name, path, status):
    with console_only(name) as stream, mock.patch.object(request_logger, "info") as info:
        assert client.get(path, HTTP_X_REQUEST_ID="direct-1").status_code == status
    assert not info.called
    [direct] = [line for line in stream.getvalue().splitlines() if "config.requests" in line]

    # the same request with a second handler: logging writes the line
    with console_only(name) as stream:
        logging.getLogger().addHandler(logging.NullHandler())
        assert client.get(path, HTTP_X_REQUEST_ID="direct-1").status_code == status
    [logged] = [line for line in stream.getvalue().splitlines() if "config.requests" in line]

    def unclocked(line: str) -> str:  # the time and the duration differ, nothing else
        line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", "T", line)
        return re.sub(r'"duration_ms": [0-9.e+-]+', '"duration_ms": D', line)

    assert unclocked(direct) == unclocked(logged)
    assert "direct-1" in direct


class Patched(logging.StreamHandler):
    pass


def _other_handler():
    logging.getLogger().addHandler(logging.NullHandler())


def _logger_filter():
    request_logger.addFilter(lambda record: True)


def _another_format():
    handler = logging.getLogger().handlers[0]
    handler.setFormatter(logs.PlainFormatter("%(levelname)s %(message)s"))


def _subclassed_handler():
    handler = logging.getLogger().handlers[0]
    handler.__class__ = Patched


def _second_filter():
    logging.getLogger().handlers[0].addFilter(lambda record: True)


def _record_factory():
    logging.setLogRecordFactory(lambda *args, **kwargs: logging.LogRecord(*args, **kwargs))


def _hooked_call_handlers():
    original = logging.Logger.callHandlers

    def hooked(self, record):  # as Sentry's logging integration hooks it
        return original(self, record)

    logging.Logger.callHandlers = hooked  # type: ignore[method-assign]


def _a_job():
    joblog.current.set(joblog.JobContext(ingest_job_id=7, rq_job_id="rq-7"))


def _middle_logger():
    # a logger between config.requests and root, with a handler of its own
    logging.getLogger("config").addHandler(logging.NullHandler())


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        _other_handler,
        _logger_filter,
        _another_format,
        _subclassed_handler,
        _second_filter,
        _record_factory,
        _hooked_call_handlers,
        _a_job,
        _middle_logger,
    ],
)
def test_anything_else_in_force_goes_through_logging(client, change):
    call_handlers, factory = logging.Logger.callHandlers, logging.getLogRecordFactory()
    middle = logging.getLogger("config")
    token = joblog.current.set(None)
    try:
        with console_only("plain") as stream, mock.patch.object(request_logger, "info") as info:
            change()
            client.get("/api/v1/brands/")
    finally:
        joblog.current.reset(token)
        logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign]
        logging.setLogRecordFactory(factory)
        request_logger.filters.clear()
        middle.handlers.clear()  # the logger itself stays, as harmless as it was
    assert info.called
    assert "config.requests" not in stream.getvalue()


WRITE = logs._RequestLine.write


@pytest.mark.django_db
def test_the_direct_line_follows_the_handler_as_it_changes(client):
    direct = mock.patch.object(logs._RequestLine, "write", autospec=True, side_effect=WRITE)
    with console_only("plain") as stream, direct as written_directly:
        client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="one")
        handler = logging.getLogger().handlers[0]
        # a stream swapped (as a log rotation does) and the level raised, then lowered again
        moved = io.StringIO()
        handler.setStream(moved)
        client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="two")
        handler.setLevel(logging.WARNING)
        client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="three")
        handler.setLevel(logging.NOTSET)
        client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="four")

    assert "request_id=one" in stream.getvalue() and "two" not in stream.getvalue()
    written = moved.getvalue()
    assert "request_id=two" in written and "request_id=four" in written
    assert "three" not in written
    assert [call.args[-1] for call in written_directly.call_args_list] == ["one", "two", "four"]


@pytest.mark.django_db
@pytest.mark.parametrize("change", [_hooked_call_handlers, _subclassed_handler])
def test_a_change_after_the_first_request_is_noticed(client, change):
    call_handlers = logging.Logger.callHandlers
    try:
        with console_only("plain") as stream, mock.patch.object(request_logger, "info") as info:
            client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="before")
            assert not info.called and "request_id=before" in stream.getvalue()
            change()  # e.g. sentry_sdk.init() called late
            client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="after")
    finally:
        logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign]
    assert info.called and "after" not in stream.getvalue()


@pytest.mark.django_db
def test_a_status_that_is_an_enum_goes_through_logging():
    with console_only("json") as stream:
        assert not logs.write_request_line("GET", "/x", HTTPStatus.NOT_FOUND, 1.0, "enum")
        assert logs.write_request_line("GET", "/x", 404, 1.0, "number")
    assert '"status": 404' in stream.getvalue()


class Full(io.StringIO):
    """A stream that takes the text, then fails to flush it (a full, non-blocking pipe)."""

    def flush(self):
        raise BlockingIOError("the pipe is full")


@pytest.mark.django_db
def test_a_write_that_fails_is_reported_as_logging_would_and_not_written_twice(client, capsys):
    with console_only("plain", Full()) as stream:
        response = client.get("/api/v1/brands/", HTTP_X_REQUEST_ID="full-1")

    assert response.status_code == 200
    lines = [line for line in stream.getvalue().splitlines() if "config.requests" in line]
    assert len(lines) == 1 and "request_id=full-1" in lines[0]
    reported = capsys.readouterr().err
    assert "--- Logging error ---" in reported and "BlockingIOError" in reported


# Requests through config.wsgi's application, as gunicorn's worker serves them: what the
# process's logging is then, with nothing of the tests' own.
CHILD = """
from config.wsgi import application
from config import logs
from tests.support import wsgi_environ

def get(path, rid):
    environ = wsgi_environ(path=path, HTTP_X_REQUEST_ID=rid)
    b"".join(application(environ, lambda *args: None))

get("/healthz", "child-1")
get("/nothing", "child-2")
print(logs._request_line[1] is not None)
"""


@pytest.mark.parametrize(
    ("name", "sentry", "direct"),
    [("plain", False, True), ("json", False, True), ("json", True, False)],
)
def test_a_process_set_up_by_settings_writes_the_line_directly(name, sentry, direct):
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", LOG_FORMAT=name)
    if sentry:  # Sentry's logging integration hooks Logger.callHandlers: logging's turn
        env["SENTRY_DSN"] = "http://public@127.0.0.1:9/1"  # nothing is sent: no error
    result = subprocess.run(  # noqa: S603 - our own interpreter, fixed code
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.strip() == str(direct), result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if "config.requests" in line]
    assert len(lines) == 1 and "child-2" in lines[0] and "/nothing" in lines[0], lines
