"""The decode budget: what analysing an image costs, its refusal of decodes larger than the whole
budget, its sharing between threads, and the bound it gives a real worker process's memory."""

import io
import os
import struct
import subprocess
import sys
import threading
import uuid
import zlib
from pathlib import Path

import pytest
import pyvips
from PIL import Image

from catalog.memory import MIB, DecodeBudget
from catalog.models import RunwayImage
from ingest.hashing import ImageRefused, analyse_image
from ingest.memory import decode_cost, decode_reservation
from ingest.models import IngestJob
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, runway_album, worker_env

ROOT = Path(__file__).resolve().parents[2]
# The default limits (config/settings/jobs.py): the bound must hold for any album under them.
MAX_PIXELS = 64_000_000
DEFAULT_DECODE_MEMORY = 256 * MIB
WORKER_GROWTH_BOUND = 512 * MIB
SIDE = 8000  # 8000 x 8000 = 64 million pixels, just within the pixel limit


def png_of_zeros(width: int, height: int, *, color_type: int, bit_depth: int = 8) -> bytes:
    """A PNG of one colour written row by row, so the test never holds its pixels."""
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color_type]
    row = bytes(1 + width * channels * bit_depth // 8)
    compressor = zlib.compressobj(1)
    idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def opened(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


# --- the cost model and the budget (in this process) ---------------------------------------------


def test_the_cost_of_a_decode_follows_its_format_and_mode():
    small = Image.new("RGB", (1000, 800), (10, 200, 30))
    files = {
        "rgba": png_of_zeros(1000, 800, color_type=6),
        "gray": png_of_zeros(1000, 800, color_type=0),
        "gray16": png_of_zeros(1000, 800, color_type=0, bit_depth=16),
        "webp": encoded(small, "WEBP", lossless=True),
        "baseline": encoded(small, "JPEG"),
        "progressive": encoded(small, "JPEG", progressive=True, subsampling=0),
    }

    costs = {name: decode_cost(opened(data), data) for name, data in files.items()}

    # Four bytes a pixel for RGBA, one for 8-bit gray, two for 16-bit; four RGBA copies for
    # WebP; a baseline JPEG is decoded at reduced size, a progressive one keeps every
    # coefficient (three planes of 16-bit samples at 4:4:4).
    assert costs["rgba"] - costs["gray"] == 3 * 800_000
    assert costs["gray16"] - costs["gray"] == 800_000
    assert costs["webp"] > 16 * 800_000
    assert costs["baseline"] < costs["gray"]
    assert costs["progressive"] >= costs["baseline"] + 2 * 3 * 800_000


def test_an_image_whose_decode_alone_exceeds_the_budget_is_refused_before_decoding():
    # A lossless WebP of one colour: 38 bytes on the wire, ~1 GiB to decode through Pillow.
    webp = encoded(Image.new("RGB", (SIDE, SIDE), (10, 200, 30)), "WEBP", lossless=True, method=0)
    assert len(webp) < 100
    budget = DecodeBudget(DEFAULT_DECODE_MEMORY)

    with pytest.raises(ImageRefused) as refused:
        analyse_image(webp, max_pixels=MAX_PIXELS, reserve=decode_reservation(budget))

    assert refused.value.reason == (
        "decoding this 8000x8000 WEBP would take about 984 MiB of memory, more than the "
        "256 MiB decode budget"
    )
    assert budget.reserved == 0


def test_the_largest_png_the_pixel_limit_allows_fits_the_default_budget():
    data = png_of_zeros(SIDE, SIDE, color_type=6)

    assert decode_cost(opened(data), data) <= DEFAULT_DECODE_MEMORY
    budget = DecodeBudget(DEFAULT_DECODE_MEMORY)
    assert analyse_image(data, max_pixels=MAX_PIXELS, reserve=decode_reservation(budget))


def test_decodes_that_do_not_fit_together_wait_for_each_other():
    # given a budget that holds one of these decodes at a time, and four threads
    data = png_of_zeros(2000, 2000, color_type=6)
    cost = decode_cost(opened(data), data)
    budget = DecodeBudget(cost + cost // 2)
    peak, lock, errors = [0], threading.Lock(), []
    original = budget.reserve

    def watched(amount):
        context = original(amount)

        class Watch:
            def __enter__(self):
                context.__enter__()
                with lock:
                    peak[0] = max(peak[0], budget.reserved)

            def __exit__(self, *exc):
                return context.__exit__(*exc)

        return Watch()

    budget.reserve = watched

    def analyse():
        try:
            analyse_image(data, max_pixels=MAX_PIXELS, reserve=decode_reservation(budget))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=analyse) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    # then all were analysed, never two at once, and the budget is whole again
    assert errors == []
    assert peak[0] == cost
    assert budget.reserved == 0


# --- a real worker process under the default limits ----------------------------------------------


def hostile_album_images() -> dict[str, tuple[bytes, bool]]:
    """name -> (body, whether it is stored): the costliest decodes the default limits let in."""
    solid = Image.new("RGB", (SIDE, SIDE), (10, 200, 30))
    noise = Image.frombytes("RGB", (2800, 2800), os.urandom(2800 * 2800 * 3))
    images = {
        "lossless WebP, 38 bytes, ~1 GiB to decode": (
            encoded(solid, "WEBP", lossless=True, method=0),
            False,
        ),
        "progressive 4:4:4 JPEG (every coefficient kept)": (
            encoded(solid, "JPEG", progressive=True, subsampling=0, quality=50),
            False,
        ),
        "progressive 4:2:0 JPEG": (
            encoded(solid, "JPEG", progressive=True, subsampling=2, quality=50),
            True,
        ),
        "RGBA PNG": (png_of_zeros(SIDE, SIDE, color_type=6), True),
        "RGB PNG": (png_of_zeros(SIDE, SIDE, color_type=2), True),
        "16-bit grayscale PNG": (png_of_zeros(SIDE, SIDE, color_type=0, bit_depth=16), True),
        "GIF": (encoded(Image.new("P", (SIDE, SIDE), 0), "GIF"), True),
        # Pillow keeps these at 4 bytes a pixel, but libvips needs an interlaced PNG whole at
        # its own 8: two renditions at once would take over 1 GiB without the budget.
        "interlaced 16-bit RGBA PNG #1": (interlaced_png16(1), True),
        "interlaced 16-bit RGBA PNG #2": (interlaced_png16(2), True),
    }
    del solid
    # Bodies near the 25 MB cap, which the downloads hold at once; distinct bytes, each stored.
    variants = (
        noise,
        noise.transpose(Image.Transpose.ROTATE_90),
        noise.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
    )
    for n, variant in enumerate(variants, start=1):
        body = encoded(variant, "PNG", compress_level=0)
        assert 20_000_000 < len(body) < 25 * 1024 * 1024
        images[f"a {len(body) // 1_000_000} MB noise PNG #{n}"] = (body, True)
    return images


# Costlier to render than the default budget: the renditions job refuses them (the originals
# are shown); the ingest job stores them.
NOT_RENDERED = ("GIF", "interlaced 16-bit RGBA PNG #1", "interlaced 16-bit RGBA PNG #2")


def interlaced_png16(shade: int) -> bytes:
    """An interlaced (Adam7) 16-bit RGBA PNG of one colour, SIDE x SIDE."""
    solid = pyvips.Image.black(SIDE, SIDE, bands=4) + [shade, 2 * shade, 3 * shade, 65535]
    wide = solid.cast("ushort").copy(interpretation="rgb16")
    return wide.pngsave_buffer(bitdepth=16, interlace=True, compression=1)


def worker_peak_rss(queue_name: str) -> int:
    """Run `rqworker --burst` until the queues are empty; return its work-horses' peak RSS.

    The wrapper's RUSAGE_CHILDREN maxrss is the largest of its descendants once waited for:
    the work-horse that rq forks for the job, which starts as a copy of the worker.
    """
    wrapper = (
        "import resource, subprocess, sys;"
        "done = subprocess.run(sys.argv[1:]);"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    name = f"{queue_name}-{uuid.uuid4().hex[:6]}"
    # The ingest queue, then the renditions queue the worker_env names (as a deployed worker
    # serves them): the album's renditions job runs in a work-horse of this worker too.
    queues = [queue_name, worker_env(queue_name)["RENDITIONS_QUEUE"]]
    command = [sys.executable, "manage.py", "rqworker", *queues, "--burst", "--name", name]
    result = subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "-c", wrapper, *command],
        cwd=ROOT,
        env=worker_env(queue_name),
        capture_output=True,
        text=True,
        timeout=600,
    )
    returncode, maxrss_kib = result.stdout.split()[-2:]
    assert returncode == "0", result.stdout + result.stderr
    return int(maxrss_kib) * 1024


def accept(urls: list[str], **overrides: object) -> IngestJob:
    album = album_validate(runway_album(urls, **overrides))
    return ingest_job_accept(webhook_id=f"msg_{uuid.uuid4().hex}", album=album)


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_stays_within_its_memory_bound_on_the_costliest_album(rq_queue, image_server):
    # given the costliest album the default limits admit, and a one-image album to measure
    # the worker against (same imports, same connections, same code paths)
    BrandFactory(name="Acme", slug="acme")
    images = hostile_album_images()
    urls = [image_server.add(f"/{n}", body) for n, (body, _) in enumerate(images.values())]
    small = accept(
        [image_server.add("/small.jpg", jpeg("astronaut", size=256))], season_code="SS23"
    )
    baseline = worker_peak_rss(rq_queue.name)

    # when a real worker runs it
    job = accept(urls)
    peak = worker_peak_rss(rq_queue.name)

    # then the images whose decode fits were stored, the others refused with a reason, and
    # the work-horse grew less than the bound
    growth = peak - baseline
    print(f"work-horse peak RSS {peak / MIB:.0f} MiB, {growth / MIB:.0f} MiB above the baseline")
    small.refresh_from_db()
    job.refresh_from_db()
    assert small.status == "succeeded", small.error
    assert job.status == "succeeded", (job.reason, job.error)
    reasons = {issue["index"]: issue["reason"] for issue in job.report["issues"]}
    for index, (name, (_, stored)) in enumerate(images.items()):
        # (Stored images of one colour are near-duplicates of each other: issues, not refusals.)
        assert ("decode budget" in reasons.get(index, "")) is not stored, (name, reasons)
    assert RunwayImage.objects.filter(runway_id=job.record_id).count() == sum(
        stored for _, stored in images.values()
    )
    # The renditions job ran in the same worker (renditions included in the bound): each
    # stored image rendered but those whose decode alone is beyond the budget.
    rendered = {
        image.original_url.rsplit("/", 1)[1]: (image.rendition_status, image.rendition_error)
        for image in RunwayImage.objects.filter(runway_id=job.record_id)
    }
    for name in NOT_RENDERED:
        status, error = rendered.pop(str(list(images).index(name)))
        assert status == "failed" and "decode budget" in error, (name, error)
    assert all(status == "done" for status, _ in rendered.values()), rendered
    assert growth < WORKER_GROWTH_BOUND, f"{growth / MIB:.0f} MiB"
