"""Logs: JSON lines with the request id (LOG_FORMAT=json), the id taken from X-Request-ID or
generated and echoed back, plain text for a terminal."""

import io
import json
import logging
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from pythonjsonlogger.json import JsonFormatter

from config.logs import PlainFormatter, RequestIdFilter
from ingest.joblog import JobFilter
from tests.support import json_log_lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def json_lines():
    """The app's JSON log lines, as the console handler writes them under LOG_FORMAT=json."""
    with json_log_lines() as lines:
        yield lines


@pytest.mark.django_db
def test_a_request_line_carries_the_callers_request_id(client, json_lines):
    response = client.get("/api/v1/runways/", HTTP_X_REQUEST_ID="crawler-run-42.7")

    assert response["X-Request-ID"] == "crawler-run-42.7"
    [line] = [line for line in json_lines() if line["name"] == "config.requests"]
    assert line["request_id"] == "crawler-run-42.7"
    assert (line["method"], line["path"], line["status"]) == ("GET", "/api/v1/runways/", 200)
    assert line["duration_ms"] >= 0


@pytest.mark.django_db
@pytest.mark.parametrize("sent", [None, "", "a b", "x" * 129, "id\r\nX-Evil: 1", "abc\n"])
def test_a_missing_or_unsafe_request_id_is_replaced_by_a_fresh_one(client, json_lines, sent):
    headers = {} if sent is None else {"HTTP_X_REQUEST_ID": sent}

    response = client.get("/api/v1/brands/", **headers)

    generated = response["X-Request-ID"]
    assert generated != sent and len(generated) == 32
    [line] = [line for line in json_lines() if line["name"] == "config.requests"]
    assert line["request_id"] == generated


@pytest.mark.django_db
def test_health_probes_are_logged_only_when_they_fail(client, json_lines, settings):
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert [line for line in json_lines() if line["name"] == "config.requests"] == []

    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    assert client.get("/readyz").status_code == 503

    [line] = [line for line in json_lines() if line["name"] == "config.requests"]
    assert (line["path"], line["status"]) == ("/readyz", 503)


def test_two_requests_get_different_ids(client):
    assert client.get("/healthz")["X-Request-ID"] != client.get("/healthz")["X-Request-ID"]


def _log_a_line(log_format: str) -> str:
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG"}}
    code = (
        "import django, logging; django.setup(); "
        "logging.getLogger('archive.test').warning('hello %s', 'there')"
    )
    result = subprocess.run(  # noqa: S603 - our own interpreter, fixed code
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings", "LOG_FORMAT": log_format},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stderr.strip().splitlines()[-1]


def test_log_format_json_writes_one_json_object_per_line():
    line = json.loads(_log_a_line("json"))

    assert line["message"] == "hello there"
    assert (line["level"], line["logger"]) == ("WARNING", "archive.test")
    assert {"time", "request_id", "ingest_job_id", "rq_job_id"} <= set(line)


def test_log_format_plain_is_for_people():
    line = _log_a_line("plain")

    assert line.endswith("WARNING archive.test hello there")


FORGED = "\n2026-12-01 10:00:00,000 INFO config.requests GET /admin/ 200"


@contextmanager
def formatted_lines(formatter: logging.Formatter):
    """The text the console handler would write with this formatter, split into lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.addFilter(JobFilter())
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        yield lambda: stream.getvalue().splitlines()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def plain_formatter() -> logging.Formatter:
    return PlainFormatter(django_settings.LOGGING["formatters"]["plain"]["format"])


@pytest.mark.django_db
def test_a_path_cannot_forge_a_plain_log_line(client):
    # given: a path whose %0A is a line break once decoded, followed by a line of our own
    path = "/api/v1/runways/" + quote(FORGED + "\r\x1b[2K\u2028\x7f") + "/"

    with formatted_lines(plain_formatter()) as lines:
        assert client.get(path).status_code == 404

    # then: one line, the request line (not Django's "Not Found" too), starting with its
    # time, the line break written as \n
    written = lines()
    assert len(written) == 1, written
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:", line) for line in written), written
    [request_line] = [line for line in written if line.split()[3] == "config.requests"]
    assert "\\n2026-12-01 10:00:00,000 INFO config.requests" in request_line
    assert "\\r\\x1b[2K\\u2028\\x7f" in request_line


@pytest.mark.django_db
def test_a_path_cannot_forge_a_json_log_line(client):
    # JSON escapes every control character itself (and, ASCII only, everything past DEL).
    path = "/api/v1/runways/" + quote(FORGED + "\r\x1b[2K\u2028\x7f") + "/"
    formatter = JsonFormatter(
        "%(levelname)s %(name)s %(message)s", rename_fields={"name": "logger"}
    )

    with formatted_lines(formatter) as lines:
        assert client.get(path).status_code == 404

    written = lines()
    assert len(written) == 1, written
    assert all(0x20 <= ord(c) < 0x7F for line in written for c in line)
    [request] = [json.loads(line) for line in written if '"config.requests"' in line]
    assert request["path"].endswith(FORGED + "\r\x1b[2K\u2028\x7f/")


def test_a_traceback_is_indented_under_its_record_in_plain_logs():
    with formatted_lines(plain_formatter()) as lines:
        try:
            raise ValueError(f"bad value{FORGED}")
        except ValueError:
            logging.getLogger("archive.test").exception("it failed")

    first, *rest = lines()
    assert first.endswith("ERROR archive.test it failed")
    assert rest and all(line.startswith("    ") for line in rest)
    assert any("Traceback (most recent call last):" in line for line in rest)
    assert "    2026-12-01 10:00:00,000 INFO config.requests GET /admin/ 200" in rest


@pytest.mark.django_db
@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\u2066", "\u2069", "\u200f", "\ufeff"])
def test_a_path_cannot_reorder_or_hide_text_in_a_plain_log_line(client, char):
    # A bidirectional override or isolate turns the rest of a line around on a terminal; a
    # zero-width character hides in it. Written as escapes, as JSON lines write them.
    path = f"/api/v1/runways/{quote('x' + char + '.gpj')}/"

    with formatted_lines(plain_formatter()) as lines:
        assert client.get(path).status_code == 404

    [line] = lines()
    assert char not in line
    assert f"x\\u{ord(char):04x}.gpj" in line
