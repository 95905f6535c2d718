"""Logs: JSON lines with the request id (LOG_FORMAT=json), the id taken from X-Request-ID or
generated and echoed back, plain text for a terminal."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
