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
   - chosen:     catalog.imaging.render (libvips, effort 2, placeholder and colour too).
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
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.dup_threshold import load_photo  # noqa: E402
from bench.hash_bench import SPEED_PHOTOS, runway_jpeg  # noqa: E402
from bench.throwaway import JpegHandler, throwaway_site  # noqa: E402

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
    from catalog.imaging import render

    return [r.data for r in render(data).renditions]


CANDIDATES = {
    "pillow-m4": partial(pillow_one_decode, method=4),
    "pillow-m2": partial(pillow_one_decode, method=2),
    "vips-e4": partial(vips_one_decode, effort=4),
    "vips-e3": partial(vips_one_decode, effort=3),
    "vips-e2": partial(vips_one_decode, effort=2),
    "chosen": chosen,
}


def pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def ssim(a: bytes | np.ndarray, b: bytes | np.ndarray) -> float:
    from skimage.metrics import structural_similarity

    x = pixels(a) if isinstance(a, bytes) else a
    y = pixels(b) if isinstance(b, bytes) else b
    h, w = min(x.shape[0], y.shape[0]), min(x.shape[1], y.shape[1])  # a rounding pixel apart
    return float(structural_similarity(x[:h, :w], y[:h, :w], channel_axis=2))


def source(data: bytes) -> list[np.ndarray]:
    """The naive path's resampled pictures before WebP: what both encodes approximate."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    out = []
    for width in WIDTHS:
        if image.width >= width:
            height = round(image.height * width / image.width)
            out.append(np.asarray(image.resize((width, height), Image.Resampling.LANCZOS)))
    return out


def timings(functions: dict, repetitions: int) -> dict[str, tuple[float, float]]:
    """Median CPU seconds (every thread of the process: libvips runs several) and wall
    seconds of each function, interleaved so that drift in the machine's load hits all."""
    cpu: dict[str, list[float]] = {name: [] for name in functions}
    wall: dict[str, list[float]] = {name: [] for name in functions}
    for function in functions.values():  # warm-up: imports, caches, first-touch allocations
        function()
    for _ in range(repetitions):
        for name, function in functions.items():
            c, w = time.process_time(), time.perf_counter()
            function()
            cpu[name].append(time.process_time() - c)
            wall[name].append(time.perf_counter() - w)
    return {n: (statistics.median(cpu[n]), statistics.median(wall[n])) for n in functions}


def native_jpeg(name: str) -> bytes:
    buffer = io.BytesIO()
    load_photo(name).convert("RGB").save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def per_image(repetitions: int) -> None:
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
    print(
        f"\n1. Per image (both widths), median of {repetitions} interleaved runs per photo, "
        f"{len(SPEED_PHOTOS)} photos per set; against the naive path. load average "
        f"{_load()}"
    )
    print(
        "   speed-up = naive ÷ candidate, CPU time of the process (all threads) and wall time,"
        " median over the photos (slowest photo);\n   SSIM = against the naive output, the"
        " lower of the two widths, lowest / median photo; 'vs source' = against the resampled"
        " picture before WebP;\n   bytes = both widths against the naive's, largest / median."
    )
    for label, photos in sets.items():
        rows = {
            name: {"cpu": [], "wall": [], "ssim": [], "source": [], "bytes": []}
            for name in [*CANDIDATES, "naive"]
        }
        naive_cpu, hash_ratio = [], []
        for data in photos:
            functions = {
                "naive": partial(naive, data),
                "hash": partial(analyse_image, data, max_pixels=64_000_000),
            }
            functions.update({name: partial(fn, data) for name, fn in CANDIDATES.items()})
            times = timings(functions, repetitions)
            reference = naive(data)
            pictures = source(data)
            naive_cpu.append(times["naive"][0] * 1000)
            hash_ratio.append(times["naive"][0] / times["hash"][0])
            rows["naive"]["source"].append(
                min(ssim(a, b) for a, b in zip(pictures, reference, strict=True))
            )
            for name, fn in CANDIDATES.items():
                made = fn(data)
                row = rows[name]
                row["cpu"].append(times["naive"][0] / times[name][0])
                row["wall"].append(times["naive"][1] / times[name][1])
                row["ssim"].append(min(ssim(a, b) for a, b in zip(reference, made, strict=True)))
                row["source"].append(min(ssim(a, b) for a, b in zip(pictures, made, strict=True)))
                row["bytes"].append(sum(map(len, made)) / max(sum(map(len, reference)), 1))
        print(
            f"\n   {label}: naive {statistics.median(naive_cpu):.0f} ms CPU "
            f"({statistics.median(hash_ratio):.0f}x the hashing decode); naive vs source SSIM "
            f"lowest {min(rows['naive']['source']):.3f}"
        )
        print(
            f"   {'':<10}{'CPU speed-up':>20}{'wall speed-up':>20}{'SSIM':>14}"
            f"{'vs source':>11}{'bytes':>12}"
        )
        for name in CANDIDATES:
            r = rows[name]
            print(
                f"   {name:<10}"
                f"{_median_min(r['cpu']):>20}{_median_min(r['wall']):>20}"
                f"{min(r['ssim']):>8.3f} /{statistics.median(r['ssim']):.3f}"
                f"{min(r['source']):>11.3f}"
                f"{max(r['bytes']):>7.2f} /{statistics.median(r['bytes']):.2f}"
            )


def _median_min(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x ({min(values):.2f}x)"


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


# --- 2 and 3. Ingest end to end, and the backfill ------------------------------------------------


class _Photos(JpegHandler):
    bodies: dict[str, bytes] = {}

    def body(self, path: str) -> bytes | None:
        return self.bodies.get(path)


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
    urls: list[str], *, renditions: bool, env: dict[str, str], extra: dict[str, str] | None = None
) -> tuple[float, float | None]:
    """Seconds from accept to job succeeded, and to every image's renditions made; ``extra``
    is the worker's environment on top of ``env`` (RENDITION_THREADS, VIPS_CONCURRENCY)."""
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
    worker_env = {**env, "RENDITIONS_AT_INGEST": "true" if renditions else "false", **(extra or {})}
    worker = subprocess.Popen(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", "rqworker", env["INGEST_QUEUE"], env["RENDITIONS_QUEUE"]]
        + ["--with-scheduler"],
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


def backfill(workers: int, record: str, env: dict[str, str], extra: dict[str, str]) -> float:
    """Images/s of `manage.py renditions --force` in a process of its own (libvips reads
    VIPS_CONCURRENCY when it starts), from its own progress line: start-up is not counted."""
    run = subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", "renditions", "--here", "--force", "--record", record]
        + ["--workers", str(workers)],
        cwd=ROOT,
        env={**env, **extra},
        capture_output=True,
        text=True,
        check=True,
    )
    rates = re.findall(r"([0-9.]+) images/s", run.stderr)
    return float(rates[-1])


def end_to_end() -> None:
    with throwaway_site("renditions") as site:
        server, urls = serve_album()
        try:
            _end_to_end(site.env, urls)
        finally:
            server.shutdown()


def _end_to_end(env: dict[str, str], urls) -> None:
    megabytes = sum(map(len, _Photos.bodies.values())) / 1e6
    print(f"\n2. A {ALBUM}-photo album ({megabytes:.0f} MB of 2000x3000 JPEGs), one rq worker:")
    print(f"   load average before: {_load()}")
    variants = {
        "without": (False, {}),
        "with, 1 thread": (True, {"RENDITION_THREADS": "1"}),
        "with, 2 threads": (True, {"RENDITION_THREADS": "2"}),
        "with, 2 threads, VIPS_CONCURRENCY=1": (
            True,
            {"RENDITION_THREADS": "2", "VIPS_CONCURRENCY": "1"},
        ),
    }
    runs: dict[str, list] = {variant: [] for variant in variants}
    for _ in range(2):  # interleaved: drift hits every variant
        for variant, (renditions, extra) in variants.items():
            runs[variant].append(ingest_once(urls, renditions=renditions, env=env, extra=extra))
    review_without = statistics.median(r[0] for r in runs["without"])
    print(f"   without renditions: in the review queue after {review_without:.1f} s")
    for variant in list(variants)[1:]:
        review = statistics.median(r[0] for r in runs[variant])
        done = statistics.median(r[1] for r in runs[variant])
        print(
            f"   {variant + ':':<37} in the review queue after {review:.1f} s "
            f"({review / review_without:.2f}x), renditions complete after {done:.1f} s "
            f"({done / review_without:.2f}x)"
        )
    print(f"   load average after: {_load()}")
    from catalog.models import Runway

    record = f"runway:{Runway.objects.order_by('pk').values_list('pk', flat=True)[0]}"
    print(
        f"\n3. Backfill (manage.py renditions --force --record {record}: {ALBUM} images), "
        "median of two interleaved runs:"
    )
    settings = {
        "1 worker": (1, {}),
        "2 workers": (2, {}),
        "2 workers, VIPS_CONCURRENCY=1": (2, {"VIPS_CONCURRENCY": "1"}),
        "1 worker, VIPS_CONCURRENCY=1": (1, {"VIPS_CONCURRENCY": "1"}),
    }
    rates: dict[str, list[float]] = {setting: [] for setting in settings}
    for _ in range(2):
        for setting, (workers, extra) in settings.items():
            rates[setting].append(backfill(workers, record, env, extra))
    one = statistics.median(rates["1 worker"])
    for setting in settings:
        rate = statistics.median(rates[setting])
        print(f"   {setting + ':':<32} {rate:.2f} images/s ({rate / one:.2f}x)")
    print(f"   load average after: {_load()}")


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
