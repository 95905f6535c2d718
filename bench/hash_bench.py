"""Speed and fidelity of the reduced-decode hash against imagehash.phash on a full decode.

Runway photos arrive as ~2000x3000 JPEGs, so each bundled photograph is cropped to 2:3, upscaled
to 2000x3000 and saved at quality 90. Upscaling makes unusually smooth, small files, so every
photo is measured again with film grain added, which brings the file size and the
entropy-decoding work up to what a real camera JPEG costs (the speed-up shrinks as files get
busier, because the reduced decode still has to entropy-decode every coefficient).

Per image: median wall time (time.perf_counter, runs interleaved so drift hits both sides) of

- full:    imagehash.phash(Image.open(bytes))        the standard phash, full decode
- reduced: ingest.hashing.perceptual_hash(bytes)     DCT-scaled decode, same DCT hash
- analyse: ingest.hashing.analyse_image(bytes)       what a worker calls: checks + sha1 + hash

and the bit difference between the full and reduced hashes. Then the same bit difference over
every photo at its native size (JPEG q=90, PNG).

Run: .venv/bin/python bench/hash_bench.py [repetitions]
"""

from __future__ import annotations

import io
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import imagehash
import numpy as np
import PIL
from PIL import Image

# `python bench/x.py` puts bench/ on sys.path, not the project root that holds `ingest`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.dup_threshold import PHOTOS, load_photo  # noqa: E402
from ingest.hashing import (  # noqa: E402
    PHASH_ALGORITHM,
    analyse_image,
    hamming,
    perceptual_hash,
)

MAX_PIXELS = 64_000_000
# Standard deviation of the added grain, in 8-bit levels: none (upscaled, ~0.5 MB files), mild
# (~1.3 MB) and camera-like (~2 MB, the size of a real 6 MP runway JPEG at q=90).
GRAIN_LEVELS = (0.0, 4.0, 8.0)
SPEED_PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "stereo_motorcycle", "retina")


def full_phash(data: bytes) -> int:
    return int(str(imagehash.phash(Image.open(io.BytesIO(data)))), 16)


def runway_jpeg(image: Image.Image, *, grain: float, seed: int) -> bytes:
    """Crop to portrait 2:3, upscale to 2000x3000, optionally add grain, save at q=90."""
    image = image.convert("RGB")
    width, height = image.size
    if width * 3 > height * 2:  # too wide: keep the centre
        new_width = height * 2 // 3
        left = (width - new_width) // 2
        image = image.crop((left, 0, left + new_width, height))
    else:
        new_height = width * 3 // 2
        top = (height - new_height) // 2
        image = image.crop((0, top, width, top + new_height))
    image = image.resize((2000, 3000), Image.Resampling.BICUBIC)
    if grain:
        rng = np.random.default_rng(seed)
        pixels = np.asarray(image, dtype=np.float32)
        pixels += rng.normal(0.0, grain, size=pixels.shape[:2])[..., None]
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def medians(functions: dict[str, Callable[[], object]], repetitions: int) -> dict[str, float]:
    timings: dict[str, list[float]] = {name: [] for name in functions}
    for function in functions.values():  # warm-up: imports, caches, first-touch allocations
        function()
    for _ in range(repetitions):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            timings[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in timings.items()}


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    print(
        f"{PHASH_ALGORITHM} vs imagehash {imagehash.__version__} phash; Pillow {PIL.__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"median of {repetitions} runs"
    )
    header = (
        f"{'photo (2000x3000 q90)':<28}{'MB':>6}{'full ms':>9}{'reduced ms':>12}"
        f"{'ratio':>7}{'analyse ms':>12}{'ratio':>7}{'bits':>6}"
    )
    print(header)
    ratios: list[float] = []
    analyse_ratios: list[float] = []
    worst_bits = 0
    for grain in GRAIN_LEVELS:
        for seed, name in enumerate(SPEED_PHOTOS):
            data = runway_jpeg(load_photo(name), grain=grain, seed=seed)
            times = medians(
                {
                    "full": partial(full_phash, data),
                    "reduced": partial(perceptual_hash, data),
                    "analyse": partial(analyse_image, data, max_pixels=MAX_PIXELS),
                },
                repetitions,
            )
            bits = hamming(full_phash(data), perceptual_hash(data))
            worst_bits = max(worst_bits, bits)
            ratio = times["full"] / times["reduced"]
            analyse_ratio = times["full"] / times["analyse"]
            ratios.append(ratio)
            analyse_ratios.append(analyse_ratio)
            label = f"{name}{f' +grain {grain:g}' if grain else ''}"
            print(
                f"{label:<28}{len(data) / 1e6:>6.2f}{times['full'] * 1e3:>9.1f}"
                f"{times['reduced'] * 1e3:>12.1f}{ratio:>7.2f}{times['analyse'] * 1e3:>12.1f}"
                f"{analyse_ratio:>7.2f}{bits:>6}"
            )
    print(
        f"speed-up full/reduced: median {statistics.median(ratios):.2f}x, "
        f"min {min(ratios):.2f}x; full/analyse_image: median "
        f"{statistics.median(analyse_ratios):.2f}x, min {min(analyse_ratios):.2f}x"
    )
    print(f"max bit difference at 2000x3000: {worst_bits}")

    native_bits: dict[str, int] = {}
    for name in PHOTOS:
        image = load_photo(name)
        for fmt in ("JPEG", "PNG"):
            buffer = io.BytesIO()
            image.save(buffer, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
            data = buffer.getvalue()
            native_bits[f"{name} {fmt}"] = hamming(full_phash(data), perceptual_hash(data))
    worst = max(native_bits, key=lambda key: native_bits[key])
    spread = {
        b: sum(v == b for v in native_bits.values()) for b in sorted(set(native_bits.values()))
    }
    print(
        f"native sizes ({len(native_bits)} files, {len(PHOTOS)} photos as JPEG q90 and PNG): "
        f"max bit difference {native_bits[worst]} ({worst}); "
        f"files per difference {spread}"
    )


if __name__ == "__main__":
    main()
