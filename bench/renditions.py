"""Renditions: what each way of making them costs, and what they do to ingest.

1. Per image (both widths, placeholder, colour), side by side in one run, medians of
   interleaved runs, on runway-size photos (scikit-image samples cropped to 2:3, upscaled to
   2000x3000, JPEG q90, without and with camera-like grain: bench/hash_bench.runway_jpeg) and
   on the photos at their own (legacy-archive) size:
   - naive:      Pillow full decode, resize(LANCZOS) and save(WEBP, quality=80, method=4) per
                 width (the baseline the issue names);
   - pillow-m4 / pillow-m2: one Pillow decode with draft() (JPEG DCT scaling), the 1200 by
                 resize(reducing_gap), the 400 from the 1200, WebP method 4 / 2;
   - vips-e4:    libvips thumbnail (shrink-on-load), 400 from the 1200, WebP effort 4;
   - chosen:     catalog.renditions.render (libvips, effort 2, placeholder and colour too).
   Against the naive output: speed-up, SSIM (scikit-image, per width, the lower of the two)
   and bytes (both widths). Also the naive cost in units of ingest's hashing decode.
2. A 60-photo album end to end: accepted -> job succeeded (the album is in the review queue)
   and -> every image's renditions made, one rq worker process, photos from a loopback HTTP
   server, with the follow-up renditions job and without it (RENDITIONS_AT_INGEST=false).
3. Backfill throughput (`manage.py renditions --force`) with 1 and 2 workers.

Needs PostgreSQL and Redis (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/
postgres: a database of its own, dropped at the end; BENCH_REDIS_URL, default
redis://127.0.0.1:6379/3: a queue of its own). The machine is shared and noisy: read ratios
measured side by side, not absolute times.

Run: .venv/bin/python bench/renditions.py [repetitions]   (BENCH_PARTS=1: part 1 only; =2: 2 and 3)
"""

from __future__ import annotations

import io
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import uuid
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.dup_threshold import load_photo  # noqa: E402
from bench.hash_bench import SPEED_PHOTOS, medians, runway_jpeg  # noqa: E402

WIDTHS = (400, 1200)
ALBUM = 60


# --- 1. Per image --------------------------------------------------------------------------------


def naive(data: bytes) -> list[bytes]:
    out = []
    for width in WIDTHS:
        image = Image.open(io.BytesIO(data))
        image.load()
        image = image.convert("RGB")
        if image.width < width:
            continue
        height = round(image.height * width / image.width)
        resized = image.resize((width, height), Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        resized.save(buffer, "WEBP", quality=80, method=4)
        out.append(buffer.getvalue())
    return out


def pillow_one_decode(data: bytes, *, method: int) -> list[bytes]:
    image = Image.open(io.BytesIO(data))
    targets = [w for w in WIDTHS if w <= image.width]
    if not targets:
        return []
    scale = targets[-1] / image.width
    image.draft("RGB", (image.width * scale, image.height * scale))
    image = image.convert("RGB")
    out = []
    for width in reversed(targets):
        height = round(image.height * width / image.width)
        image = image.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=3.0)
        buffer = io.BytesIO()
        image.save(buffer, "WEBP", quality=80, method=method)
        out.append(buffer.getvalue())
    return out[::-1]


def vips_one_decode(data: bytes, *, effort: int) -> list[bytes]:
    import pyvips

    header = pyvips.Image.new_from_buffer(data, "")
    targets = [w for w in WIDTHS if w <= header.width]
    if not targets:
        return []
    base = pyvips.Image.thumbnail_buffer(data, targets[-1], height=10_000_000, size="down")
    base = base.copy_memory()
    out = []
    for width in reversed(targets):
        base = base if base.width == width else base.resize(width / base.width)
        out.append(base.webpsave_buffer(Q=80, effort=effort, keep=0))
    return out[::-1]


def chosen(data: bytes) -> list[bytes]:
    from catalog.renditions import render

    return [r.data for r in render(data).renditions]


CANDIDATES = {
    "pillow-m4": partial(pillow_one_decode, method=4),
    "pillow-m2": partial(pillow_one_decode, method=2),
    "vips-e4": partial(vips_one_decode, effort=4),
    "chosen": chosen,
}


def ssim(a: bytes, b: bytes) -> float:
    from skimage.metrics import structural_similarity

    x = np.asarray(Image.open(io.BytesIO(a)).convert("RGB"))
    y = np.asarray(Image.open(io.BytesIO(b)).convert("RGB"))
    h, w = min(x.shape[0], y.shape[0]), min(x.shape[1], y.shape[1])  # a rounding pixel apart
    return float(structural_similarity(x[:h, :w], y[:h, :w], channel_axis=2))


def native_jpeg(name: str) -> bytes:
    buffer = io.BytesIO()
    load_photo(name).convert("RGB").save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def per_image(repetitions: int) -> dict[str, dict[str, list[float]]]:
    from ingest.hashing import analyse_image

    sets = {
        "2000x3000 q90": [
            runway_jpeg(load_photo(n), grain=0.0, seed=i) for i, n in enumerate(SPEED_PHOTOS)
        ],
        "2000x3000 q90 grain": [
            runway_jpeg(load_photo(n), grain=4.0, seed=i) for i, n in enumerate(SPEED_PHOTOS)
        ],
        "native size": [native_jpeg(n) for n in SPEED_PHOTOS],
    }
    figures: dict[str, dict[str, list[float]]] = {}
    print(f"\n1. Per image, median of {repetitions} interleaved runs (ms); against naive:")
    print(
        f"{'photos':<22}{'naive ms':>9}{'x hash':>7}  "
        + "".join(f"{name + ' x/ssim/bytes':>30}" for name in CANDIDATES)
    )
    for label, photos in sets.items():
        rows = {name: {"speed": [], "ssim": [], "bytes": []} for name in CANDIDATES}
        naive_ms, hash_ratio = [], []
        for data in photos:
            functions = {
                "naive": partial(naive, data),
                "hash": partial(analyse_image, data, max_pixels=64_000_000),
            }
            functions.update({name: partial(fn, data) for name, fn in CANDIDATES.items()})
            times = medians(functions, repetitions)
            reference = naive(data)
            naive_ms.append(times["naive"] * 1000)
            hash_ratio.append(times["naive"] / times["hash"])
            for name, fn in CANDIDATES.items():
                made = fn(data)
                rows[name]["speed"].append(times["naive"] / times[name])
                rows[name]["ssim"].append(
                    min(ssim(a, b) for a, b in zip(reference, made, strict=True)) if made else 1.0
                )
                rows[name]["bytes"].append(sum(map(len, made)) / max(sum(map(len, reference)), 1))
        line = (
            f"{label:<22}{statistics.median(naive_ms):>9.0f}{statistics.median(hash_ratio):>7.1f}  "
        )
        for name in CANDIDATES:
            r = rows[name]
            line += (
                f"{statistics.median(r['speed']):>8.2f}x (min {min(r['speed']):.2f}) "
                f"{min(r['ssim']):.3f} {max(r['bytes']):.2f}".rjust(30)
            )
        print(line)
        figures[label] = rows["chosen"]
        c = rows["chosen"]
        print(
            f"{'':<22}chosen: SSIM median {statistics.median(c['ssim']):.3f}, bytes median "
            f"{statistics.median(c['bytes']):.2f}"
        )
    print(
        "   columns per candidate: median speed-up (slowest photo), lowest SSIM of either width,"
        " largest bytes ratio"
    )
    return figures


# --- 2 and 3. Ingest end to end, and the backfill ------------------------------------------------


class _Photos(BaseHTTPRequestHandler):
    bodies: dict[str, bytes] = {}

    def do_GET(self):  # noqa: N802 - http.server's name
        body = self.bodies.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_album() -> tuple[ThreadingHTTPServer, list[str]]:
    _Photos.bodies = {
        f"/{n}.jpg": runway_jpeg(load_photo(SPEED_PHOTOS[n % len(SPEED_PHOTOS)]), grain=4.0, seed=n)
        for n in range(ALBUM)
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Photos)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address
    return server, [f"http://{host}:{port}{path}" for path in _Photos.bodies]


def ingest_once(
    urls: list[str], *, renditions: bool, env: dict[str, str]
) -> tuple[float, float | None]:
    """Seconds from accept to job succeeded, and to every image's renditions made."""
    from catalog.models import RunwayImage
    from ingest.serializers import album_validate
    from ingest.services import ingest_job_accept

    album = {
        "kind": "runway",
        "source": "bench",
        "source_url": f"https://example.com/{uuid.uuid4().hex}",
        "brand": "Acme",
        "season_code": f"FW{uuid.uuid4().int % 90 + 10}",
        "season": "Fall/Winter",
        "collection_type": f"bench-{uuid.uuid4().hex[:8]}",
        "year": 2026,
        "title": "Bench",
        "description": "",
        "images": [{"url": url, "look_index": n + 1} for n, url in enumerate(urls)],
    }
    worker_env = {**env, "RENDITIONS_AT_INGEST": "true" if renditions else "false"}
    worker = subprocess.Popen(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", "rqworker", env["INGEST_QUEUE"], "--with-scheduler"],
        cwd=ROOT,
        env=worker_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(3)  # the worker is up and idle: its start-up is not the job's time
        start = time.perf_counter()
        job = ingest_job_accept(webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(album))
        succeeded = done = None
        while done is None and time.perf_counter() - start < 600:
            time.sleep(0.05)
            job.refresh_from_db()
            if job.status in ("failed", "skipped"):
                raise RuntimeError(f"bench job {job.status}: {job.error or job.reason}")
            if succeeded is None and job.status == "succeeded":
                succeeded = time.perf_counter() - start
                if not renditions:
                    return succeeded, None
            if succeeded is not None:
                images = RunwayImage.objects.filter(runway_id=job.runway_id)
                if not images.exclude(rendition_status="done").exists():
                    done = time.perf_counter() - start
        return succeeded, done
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def backfill(workers: int) -> float:
    from django.core.management import call_command

    from catalog.models import RunwayImage

    count = RunwayImage.objects.count()
    start = time.perf_counter()
    call_command(
        "renditions",
        "--force",
        "--workers",
        str(workers),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    return count / (time.perf_counter() - start)


def end_to_end() -> None:
    import psycopg

    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")
    base = url.rpartition("/")[0]
    name = f"bench_renditions_{uuid.uuid4().hex[:8]}"
    queue = f"bench-renditions-{uuid.uuid4().hex[:8]}"
    media = Path(f"/tmp/{name}-media")  # noqa: S108 - a throwaway folder of our own
    admin = psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        "DATABASE_URL": f"{base}/{name}",
        "REDIS_URL": redis_url,
        "INGEST_QUEUE": queue,
        "MEDIA_ROOT": str(media),
        "INGEST_FETCH_ALLOWED_HOSTS": "127.0.0.1",
        "INGEST_SECRETS": "whsec_" + "YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    server = None
    try:
        import django

        django.setup()
        from django.core.management import call_command

        from catalog.models import Brand

        call_command("migrate", verbosity=0)
        Brand.objects.create(name="Acme", slug="acme")
        server, urls = serve_album()
        megabytes = sum(map(len, _Photos.bodies.values())) / 1e6
        print(f"\n2. A {ALBUM}-photo album ({megabytes:.0f} MB of 2000x3000 JPEGs), one rq worker:")
        runs = {"without": [], "with": []}
        for _ in range(2):  # interleaved: drift hits both sides
            runs["without"].append(ingest_once(urls, renditions=False, env=env))
            runs["with"].append(ingest_once(urls, renditions=True, env=env))
        review_without = statistics.median(r[0] for r in runs["without"])
        review_with = statistics.median(r[0] for r in runs["with"])
        done_with = statistics.median(r[1] for r in runs["with"])
        print(f"   without renditions: in the review queue after {review_without:.1f} s")
        print(
            f"   with renditions:    in the review queue after {review_with:.1f} s "
            f"({review_with / review_without:.2f}x), renditions complete after {done_with:.1f} s "
            f"({done_with / review_without:.2f}x)"
        )
        print(f"\n3. Backfill (manage.py renditions --force) over {ALBUM * 4} images:")
        one = backfill(1)
        two = backfill(2)
        print(f"   1 worker: {one:.1f} images/s; 2 workers: {two:.1f} images/s ({two / one:.2f}x)")
    finally:
        if server is not None:
            server.shutdown()
        from django.db import connections

        connections.close_all()
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()
        subprocess.run(["rm", "-rf", str(media)], check=False)  # noqa: S603, S607
        try:
            import redis

            client = redis.Redis.from_url(redis_url)
            for key in client.scan_iter(match=f"*{queue}*"):
                client.delete(key)
        except Exception as exc:  # noqa: BLE001 - leftovers in a bench queue harm nothing
            print(f"(could not clean the bench queue: {exc})")


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import PIL
    import pyvips

    print(
        f"Pillow {PIL.__version__}, libvips {pyvips.version(0)}.{pyvips.version(1)}."
        f"{pyvips.version(2)}, Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    parts = os.environ.get("BENCH_PARTS", "1,2")
    if "1" in parts:
        per_image(repetitions)
    if "2" in parts:
        end_to_end()


if __name__ == "__main__":
    main()
