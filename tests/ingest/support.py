"""Helpers for the ingest tests (and the scenarios that drive ingest): signed requests, as a
crawler signs them with the standardwebhooks library; albums; real photographs; a local HTTP
server that serves them (and hostile things); the environment of a real worker process."""

import base64
import functools
import io
import json
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from PIL import Image
from skimage import data as skdata
from standardwebhooks.webhooks import Webhook

from tests.support import TEST_REDIS_URL

SECRET_A = "whsec_" + base64.b64encode(b"a" * 32).decode()
SECRET_B = "whsec_" + base64.b64encode(b"b" * 32).decode()
SECRET_UNKNOWN = "whsec_" + base64.b64encode(b"x" * 32).decode()


# --- Signing, as a crawler does it -------------------------------------------------------------


def signed_headers(
    body: str,
    *,
    secret: str = SECRET_A,
    msg_id: str | None = None,
    timestamp: datetime | None = None,
) -> dict[str, str]:
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    timestamp = timestamp or datetime.now(tz=UTC)
    signature = Webhook(secret).sign(msg_id, timestamp, body)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signature,
    }


@dataclass
class Crawler:
    client: Any

    def post(self, album: dict | str, **sign: Any):
        body = album if isinstance(album, str) else json.dumps(album)
        return self.client.post(
            "/api/ingest/v1/albums",
            data=body,
            content_type="application/json",
            headers=signed_headers(body, **sign),
        )

    def status(self, job_id: int, **sign: Any):
        # A status read signs its path (ingest.auth).
        path = f"/api/ingest/v1/jobs/{job_id}"
        return self.client.get(path, headers=signed_headers(path, **sign))


def ingest_test_settings(settings: Any) -> None:
    """The ingest settings every ingest test runs under (pytest-django's ``settings``): our
    crawler secrets, fetches from the local image server only, short timeouts, no Redis."""
    settings.INGEST_SECRETS = [SECRET_A, SECRET_B]
    settings.INGEST_FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.INGEST_CONNECT_TIMEOUT = 2.0
    settings.INGEST_READ_TIMEOUT = 2.0
    settings.INGEST_IMAGE_DEADLINE = 5.0
    settings.INGEST_DOWNLOAD_WORKERS = 4
    settings.INGEST_IMAGE_RETRY_BACKOFF = 0.05
    settings.REDIS_URL = ""


# --- Albums --------------------------------------------------------------------------------------


def runway_album(urls: list[str], **overrides: Any) -> dict[str, Any]:
    album = {
        "kind": "runway",
        "source": "vogue",
        "source_url": f"https://example.com/shows/{uuid.uuid4().hex[:8]}",
        "brand": "Acme",
        "season_code": "FW24",
        "season": "Fall/Winter 2024",
        "collection_type": "ready-to-wear",
        "year": 2024,
        "title": "Acme Fall 2024 Ready-to-Wear",
        "description": "",
        "images": [{"url": url, "look_index": n + 1} for n, url in enumerate(urls)],
    }
    album.update(overrides)
    return album


def street_album(urls: list[str], **overrides: Any) -> dict[str, Any]:
    album = {
        "kind": "street",
        "source": "theimpression",
        "source_url": f"https://example.com/street/{uuid.uuid4().hex[:8]}",
        "city": "Copenhagen",
        "year": 2026,
        "month": 8,
        "title": "Street Style Copenhagen",
        "description": "",
        "images": [{"url": url} for url in urls],
    }
    album.update(overrides)
    return album


# --- Real photographs -----------------------------------------------------------------------------

PHOTOS: dict[str, Callable[[], np.ndarray]] = {
    "astronaut": skdata.astronaut,
    "coffee": skdata.coffee,
    "chelsea": skdata.chelsea,
    "rocket": skdata.rocket,
    "immunohistochemistry": skdata.immunohistochemistry,
    "camera": skdata.camera,
}


def photo(name: str) -> Image.Image:
    array = PHOTOS[name]()
    return Image.fromarray(array).convert("RGB")


def jpeg(name_or_image: str | Image.Image, *, quality: int = 90, size: int | None = None) -> bytes:
    if isinstance(name_or_image, str):
        return _photo_jpeg(name_or_image, quality, size)
    return _encode(name_or_image, quality, size)


@functools.cache
def _photo_jpeg(name: str, quality: int, size: int | None) -> bytes:
    return _encode(photo(name), quality, size)


def _encode(image: Image.Image, quality: int, size: int | None) -> bytes:
    if size is not None:
        image = image.resize((size, round(size * image.height / image.width)), Image.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def png_bomb(width: int = 30_000, height: int = 30_000) -> bytes:
    """A tiny PNG whose header claims width x height pixels (a decompression bomb)."""
    import struct
    import zlib

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 1024))
        + chunk(b"IEND", b"")
    )


# --- A local HTTP server: the "internet" the worker downloads from --------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5. Twenty jobs downloading at once open far more
    # connections than that; on a loaded machine the kernel then drops the surplus SYNs and
    # the clients' retransmissions outlast the fetcher's connect timeout, so the test would
    # see refusals a real image host (backlog in the hundreds) does not cause.
    request_queue_size = 128


@dataclass
class Route:
    body: bytes = b""
    content_type: str = "image/jpeg"
    status: int = 200
    location: str = ""
    trickle_interval: float = 0.0  # seconds between single bytes
    # Answers served before this route's own (e.g. [503] = one 503, then the body).
    failures_first: tuple[int, ...] = ()
    # The first request hangs (until the server closes) after setting ImageServer.held: a
    # test knows a worker is mid-download, deterministically.
    hold_first: bool = False


class ImageServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.held = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.split("?")[0]
                with server._lock:
                    server.hits[path] += 1
                    hit = server.hits[path]
                route = server.routes.get(path)
                if route is None:
                    return self._send(404, b"not found", "text/plain")
                if route.hold_first and hit == 1:
                    server.held.set()
                    server.release.wait(timeout=120)
                    return None
                if hit <= len(route.failures_first):
                    return self._send(route.failures_first[hit - 1], b"try later", "text/plain")
                if route.location:
                    self.send_response(route.status)
                    self.send_header("Location", route.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if route.trickle_interval:
                    return self._trickle(route)
                return self._send(route.status, route.body, route.content_type)

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _trickle(self, route: Route) -> None:
                self.send_response(200)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                try:
                    for byte in route.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        # A deliberately slow server, not a wait for something to happen.
                        time.sleep(route.trickle_interval)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        # A short poll interval: shutdown() waits up to one interval.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def add(self, path: str, body: bytes = b"", **route: Any) -> str:
        self.routes[path] = Route(body=body, **route)
        return self.url(path)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def worker_env(queue_name: str) -> dict[str, str]:
    """The environment of a worker process (`manage.py rqworker`) that serves the test's queue
    and sees the test database (whose rows the test must have committed)."""
    from django.conf import settings
    from django.db import connection

    db = connection.settings_dict
    keep = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "PYTHONPATH"}}
    return {
        **keep,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": TEST_REDIS_URL,
        "INGEST_QUEUE": queue_name,
        "RENDITIONS_QUEUE": f"{queue_name}-renditions",  # as the rq_queue fixture names it
        "INGEST_FETCH_ALLOWED_HOSTS": "127.0.0.1",
        "INGEST_IMAGE_RETRY_BACKOFF": "0.05",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "LOG_LEVEL": "WARNING",
    }
