"""Helpers shared by tests."""

import io
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from django.db import transaction
from pythonjsonlogger.json import JsonFormatter

from config.logs import RequestIdFilter
from ingest.joblog import JobFilter
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[1]

# The Redis database of the tests that use queues; runs side by side each name their own.
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@contextmanager
def rollback_each_example():
    """Run one hypothesis example in a savepoint and roll it back, so examples never see each
    other's rows even though they share the test's transaction."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def curator():
    """An editor who may curate any album, published ones included (a superuser: tests of
    what curation does, not of who may do it, which build their editors from permissions).
    The curation services (catalog.services) all take the acting editor."""
    return UserFactory(username="curator", is_superuser=True, is_staff=True)


@contextmanager
def json_log_lines():
    """The app's JSON log lines, as the console handler writes them under LOG_FORMAT=json:
    yields a function that returns the lines logged so far, parsed."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.addFilter(JobFilter())
    handler.setFormatter(JsonFormatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def wsgi_environ(host: str = "localhost", path: str = "/api/v1/runways/", **headers) -> dict:
    """The WSGI environ of a plain GET, as gunicorn hands it to config.wsgi's application."""
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": host,
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        **headers,
    }


def descendants(pid: int) -> list[int]:
    """Child processes of ``pid``, grandchildren included (from /proc; Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def run_with_settings(script: str, env: dict[str, str]) -> str:
    """What `script` prints, run in a fresh process after django.setup() with the project's
    settings and only `env` (and PATH) in the environment: settings are read at start."""
    result = subprocess.run(  # noqa: S603 - our own settings module, fixed code
        [sys.executable, "-c", f"import django; django.setup(); {script}"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


class HungRedis:
    """A Redis that accepts connections and never answers: a socket of the test's own.
    `connections` counts the clients that reached it."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self._server.getsockname()[1]}/0"
        self._accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def connections(self) -> int:
        return len(self._accepted)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:  # closed
                return
            self._accepted.append(client)  # held open, never read, never answered

    def close(self) -> None:
        self._server.close()
        for client in self._accepted:
            client.close()
