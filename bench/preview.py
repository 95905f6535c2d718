"""A press preview's page on the embedded default (issue 33's target: a 60-picture preview
loads in under 1 s): SQLite in a folder of its own, local media, Django's runserver as
`make run` starts it (DEBUG on).

The album: BENCH_PREVIEW_PICTURES (60) photographs of 2000x3000 (noise over a gradient, so the
WebP encoder has real work), two to a look, their renditions made by the renditions service
(400 and 1200 px WebP). Then, against the running server, BENCH_PREVIEW_ROUNDS (20) rounds of:

- the page alone (one GET of /preview/<token>/);
- a full load, as a browser does it: the page, then every picture it shows (the 400 px
  rendition of each `src`) over 6 connections at once, as browsers open per host.

Each is printed as median, p95 and max; and the page's time inside Django (the test client,
no HTTP) and its query count.

Run: .venv/bin/python bench/preview.py
"""

from __future__ import annotations

import hashlib
import http.client
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PICTURES = int(os.environ.get("BENCH_PREVIEW_PICTURES", "60"))
ROUNDS = int(os.environ.get("BENCH_PREVIEW_ROUNDS", "20"))
CONNECTIONS = 6  # a browser's connections to one host
PORT = int(os.environ.get("BENCH_PREVIEW_PORT", "8797"))


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="bench_preview_"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "MEDIA_ROOT": str(folder / "media"),
        "DEBUG": "true",  # as `make run` (scripts/run.sh)
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    server = None
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        token, in_django, queries = _album_and_link()
        server = subprocess.Popen(  # noqa: S603 - our own manage.py
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{PORT}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_server()
        _report(token, in_django, queries)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def _album_and_link() -> tuple[str, list[float], int]:
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from catalog.models import Brand, Runway, RunwayImage
    from catalog.services.renditions import record_renditions_make
    from catalog.storage import image_store
    from review.services import preview_link_make

    started = time.monotonic()
    brand = Brand.objects.create(name="Acme", slug="acme")
    runway = Runway.objects.create(
        brand=brand, season_code="FW26", season="Fall/Winter", year=2026,
        collection_type="ready-to-wear", title="Acme Fall/Winter 2026",
    )  # fmt: skip
    for n in range(PICTURES):
        data = _photo(n)
        sha1 = hashlib.sha1(data).hexdigest()  # noqa: S324 - a content key, as ingest's
        key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
        RunwayImage.objects.create(
            runway=runway, storage_key=key, sha1=sha1, width=2000, height=3000,
            byte_size=len(data), mime_type="image/jpeg", sort_order=n, look_index=n // 2 + 1,
        )  # fmt: skip
    record_renditions_make(kind=Runway.kind, record_id=runway.pk)
    made = RunwayImage.objects.filter(runway=runway, rendition_status="done").count()
    editor = User.objects.create_superuser("bench", password=None)
    _, token = preview_link_make(record=runway, actor=editor, label="Bench")
    print(
        f"preview bench: {PICTURES} pictures of 2000x3000, {made} with renditions "
        f"(album built in {time.monotonic() - started:.0f} s), SQLite, local media, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )

    client = Client(HTTP_HOST="127.0.0.1")
    client.get(f"/preview/{token}/")  # warm: templates, URL resolver
    timings = []
    for _ in range(ROUNDS):
        began = time.perf_counter()
        response = client.get(f"/preview/{token}/")
        timings.append(time.perf_counter() - began)
        assert response.status_code == 200
    with CaptureQueriesContext(connection) as captured:
        client.get(f"/preview/{token}/")
    return token, timings, len(captured)


def _photo(n: int) -> bytes:
    """A 2000x3000 JPEG of its own: a gradient with noise, about a camera photo's size."""
    from PIL import Image, ImageFilter

    noise = Image.effect_noise((500, 750), 40 + n % 20).resize((2000, 3000))
    gradient = Image.linear_gradient("L").resize((2000, 3000)).rotate(n * 7 % 360)
    picture = Image.merge("RGB", (noise, gradient, noise.filter(ImageFilter.BLUR)))
    out = io.BytesIO()
    picture.save(out, format="JPEG", quality=85)
    return out.getvalue()


def _wait_for_server() -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=2)
            connection.request("GET", "/preview/none/")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("runserver did not start")


def _get(connection: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read()


def _report(token: str, in_django: list[float], queries: int) -> None:
    page_times, full_times, bytes_loaded = [], [], 0
    pool = ThreadPoolExecutor(CONNECTIONS)
    connections = [http.client.HTTPConnection("127.0.0.1", PORT) for _ in range(CONNECTIONS)]
    main = http.client.HTTPConnection("127.0.0.1", PORT)
    _get(main, f"/preview/{token}/")  # warm
    for _ in range(ROUNDS):
        began = time.perf_counter()
        status, body = _get(main, f"/preview/{token}/")
        page_times.append(time.perf_counter() - began)
        assert status == 200

        began = time.perf_counter()
        status, body = _get(main, f"/preview/{token}/")
        urls = re.findall(r' src="([^"]+)"', body.decode())
        assert len(urls) == PICTURES, len(urls)

        def fetch(slot: int, urls: list[str] = urls) -> int:
            size = 0
            for url in urls[slot::CONNECTIONS]:
                status, data = _get(connections[slot], url)
                assert status == 200, status
                size += len(data)
            return size

        bytes_loaded = sum(pool.map(fetch, range(CONNECTIONS)))
        full_times.append(time.perf_counter() - began)
    pool.shutdown()
    print(f"  page in Django (test client, no HTTP): {_figures(in_django)}; {queries} queries")
    print(f"  page over HTTP (runserver): {_figures(page_times)}")
    print(
        f"  full load (page + {PICTURES} pictures, 400 px WebP, {bytes_loaded / 1e6:.1f} MB, "
        f"{CONNECTIONS} connections): {_figures(full_times)}"
    )
    target = "met" if _p95(full_times) < 1.0 else "NOT met"
    print(f"  target (under 1 s, p95 of the full load): {target}")


def _figures(values: list[float]) -> str:
    ordered = sorted(values)
    return (
        f"median {statistics.median(ordered) * 1000:.0f} ms, p95 {_p95(ordered) * 1000:.0f} ms, "
        f"max {ordered[-1] * 1000:.0f} ms"
    )


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


if __name__ == "__main__":
    raise SystemExit(main())
