"""SENTRY_DSN turns Sentry on, with its Django and rq integrations; unset, sentry_sdk is not
even imported. Each case is a fresh process, since settings are read once."""

import gzip
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, **env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG"}}
    result = subprocess.run(  # noqa: S603 - our own interpreter, fixed code
        [sys.executable, "-c", f"import django, json, sys; django.setup(); {code}"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "LOG_LEVEL": "ERROR", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_without_a_dsn_sentry_is_not_imported():
    report = run_python(
        "from django.test import Client; Client().get('/healthz'); "
        "print(json.dumps({'imported': 'sentry_sdk' in sys.modules}))"
    )

    assert report == {"imported": False}


def test_a_dsn_turns_on_sentry_with_django_and_rq_and_sends_errors():
    # given: a local stand-in for Sentry's ingest endpoint
    received: list[tuple[str, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            received.append((self.path, body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    dsn = f"http://publickey@127.0.0.1:{server.server_address[1]}/42"
    try:
        report = run_python(
            "import sentry_sdk; "
            "sentry_sdk.capture_message('hello from the archive'); sentry_sdk.flush(); "
            "print(json.dumps(sorted(sentry_sdk.get_client().integrations)))",
            SENTRY_DSN=dsn,
        )
    finally:
        server.shutdown()
        server.server_close()

    assert {"django", "rq"} <= set(report)
    assert any(path.startswith("/api/42/") for path, _ in received)
    assert any(b"hello from the archive" in body for _, body in received)
