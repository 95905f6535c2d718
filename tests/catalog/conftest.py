"""A real Varnish (config/varnish.vcl) in front of the project's application, for the tests
of what reaches the edge (test_edge.py, test_embargo.py)."""

import json

import pytest

from tests.edge_support import AppServer, Varnish


@pytest.fixture
def app_server():
    server = AppServer()
    yield server
    server.close()


@pytest.fixture
def varnish(app_server, tmp_path, settings):
    cache = Varnish(app_server.port, tmp_path / "varnish")
    settings.EDGE_PURGE_BACKEND = "http"
    settings.EDGE_PURGE_URLS = [cache.url]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "100000/min"},
    }
    yield cache
    cache.stop()


def through(cache: Varnish, path: str) -> tuple[int, str, dict]:
    """Varnish's answer: its status, whether it was a hit, its JSON (or {})."""
    status, headers, body = cache.get(path)
    return status, headers.get("X-Cache", ""), json.loads(body) if body[:1] == b"{" else {}
