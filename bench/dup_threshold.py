"""Which Hamming distance should flag a near-duplicate? Measure it on real photographs.

For every real photograph bundled with scikit-image (no downloads), build the copies a crawler
meets in practice (re-encoded, resized, slightly cropped, brightened or darkened), hash all of
them with ingest.hashing, and print:

- per variant kind, the largest distance original -> variant (what the threshold must catch);
- the distribution of distances between DIFFERENT photos, across all their variants (what the
  threshold must stay well below);
- the recommended default and its margin.

Run: .venv/bin/python bench/dup_threshold.py
"""

from __future__ import annotations

import io
import statistics
import sys
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

import numpy as np
from PIL import Image, ImageEnhance
from skimage import data as skdata

# `python bench/x.py` puts bench/ on sys.path, not the project root that holds `ingest`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ingest.hashing import analyse_image, hamming  # noqa: E402

MAX_PIXELS = 64_000_000

# Real photographs only (camera, microscope, telescope, scanner); synthetic patterns such as
# checkerboard or colorwheel, and `cat` (the same photo as `chelsea`), are left out.
PHOTOS = (
    "astronaut",
    "brick",
    "camera",
    "cell",
    "chelsea",
    "clock",
    "coffee",
    "coins",
    "grass",
    "gravel",
    "hubble_deep_field",
    "immunohistochemistry",
    "moon",
    "page",
    "retina",
    "rocket",
    "stereo_motorcycle",
    "text",
)


def load_photo(name: str) -> Image.Image:
    pixels = getattr(skdata, name)()
    if name == "stereo_motorcycle":  # returns (left, right, disparity)
        pixels = pixels[0]
    return Image.fromarray(np.asarray(pixels))


def encode(image: Image.Image, fmt: str = "JPEG", quality: int = 90) -> bytes:
    buffer = io.BytesIO()
    if fmt == "JPEG":
        image.convert("RGB" if image.mode not in ("L", "RGB") else image.mode).save(
            buffer, "JPEG", quality=quality
        )
    else:
        image.save(buffer, fmt)
    return buffer.getvalue()


def resized(image: Image.Image, ratio: float) -> Image.Image:
    size = (max(1, round(image.width * ratio)), max(1, round(image.height * ratio)))
    return image.resize(size, Image.Resampling.LANCZOS)


def cropped(image: Image.Image, per_side: float) -> Image.Image:
    dx, dy = round(image.width * per_side), round(image.height * per_side)
    return image.crop((dx, dy, image.width - dx, image.height - dy))


# Variant kind -> bytes of the copy, from the original pixels. Everything but the re-encodes is
# saved as JPEG q=90, as a CDN would serve it.
VARIANTS: dict[str, Callable[[Image.Image], bytes]] = {
    "jpeg q95": lambda im: encode(im, quality=95),
    "jpeg q75": lambda im: encode(im, quality=75),
    "jpeg q50": lambda im: encode(im, quality=50),
    "resize 75%": lambda im: encode(resized(im, 0.75)),
    "resize 50%": lambda im: encode(resized(im, 0.50)),
    "resize 25%": lambda im: encode(resized(im, 0.25)),
    "webp 50% q80": lambda im: _webp(resized(im, 0.50)),
    "brightness +10%": lambda im: encode(ImageEnhance.Brightness(im).enhance(1.10)),
    "brightness -10%": lambda im: encode(ImageEnhance.Brightness(im).enhance(0.90)),
    "crop 2%/side": lambda im: encode(cropped(im, 0.02)),
    "crop 5%/side": lambda im: encode(cropped(im, 0.05)),
    "crop 10%/side": lambda im: encode(cropped(im, 0.10)),
}
# The kinds a default threshold must catch; crops are reported but only caught "if we can".
MUST_CATCH = tuple(k for k in VARIANTS if not k.startswith("crop"))


def _webp(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "WEBP", quality=80)
    return buffer.getvalue()


def phash(data: bytes) -> int:
    return analyse_image(data, max_pixels=MAX_PIXELS).phash


def aligned_faces(count: int = 100) -> list[int]:
    """Hashes of different people's faces, all framed alike (LFW subset, 25x25 upscaled).

    The photos above are all different scenes. A runway archive is the opposite: one model after
    another on the same runway, same framing, same background. Aligned faces of different people
    are the closest bundled stand-in for that "same composition, different picture" case.
    """
    faces = skdata.lfw_subset()[:count]  # the first 100 are faces, the rest are not
    hashes = []
    for face in faces:
        image = Image.fromarray((face * 255).round().astype(np.uint8))
        hashes.append(phash(encode(image.resize((200, 200), Image.Resampling.BICUBIC), "PNG")))
    return hashes


def summary(distances: list[int]) -> str:
    return (
        f"min {min(distances)}, 1st percentile {np.percentile(distances, 1):g}, "
        f"median {statistics.median(distances):g}"
    )


def main() -> None:
    originals: dict[str, int] = {}
    variant_hashes: dict[str, dict[str, int]] = {}
    for name in PHOTOS:
        image = load_photo(name)
        originals[name] = phash(encode(image, "PNG"))  # lossless: the reference pixels
        variant_hashes[name] = {kind: phash(make(image)) for kind, make in VARIANTS.items()}

    to_variant = {
        kind: {n: hamming(originals[n], variant_hashes[n][kind]) for n in PHOTOS}
        for kind in VARIANTS
    }
    needed = max(max(to_variant[k].values()) for k in MUST_CATCH)

    # Different photos: every pair of distinct photos, each side being its original or any of
    # its variants, so "far apart" also holds for the copies the archive will contain.
    everything = {n: [originals[n], *variant_hashes[n].values()] for n in PHOTOS}
    between: list[tuple[int, str, str]] = []
    for a, b in combinations(PHOTOS, 2):
        between.extend((hamming(x, y), a, b) for x in everything[a] for y in everything[b])
    between_values = [d for d, _, _ in between]
    nearest = min(between)
    faces = [hamming(a, b) for a, b in combinations(aligned_faces(), 2)]

    # One bit of headroom over the worst copy seen; the margins below say whether that is safe.
    recommended = needed + 1

    print(f"{len(PHOTOS)} photographs from skimage.data: {', '.join(PHOTOS)}")
    print("hash: ingest.hashing.analyse_image (reduced decode), original = lossless PNG\n")
    print("distance original -> variant, over all photos")
    caught_at = f"caught at {recommended}"
    print(f"{'variant':<18}{'max':>5}{'median':>8}  {caught_at:>12}   worst photo")
    for kind, distances in to_variant.items():
        worst = max(distances, key=lambda n: distances[n])
        caught = sum(d <= recommended for d in distances.values())
        print(
            f"{kind:<18}{distances[worst]:>5}{statistics.median(distances.values()):>8g}"
            f"  {caught:>9}/{len(PHOTOS)}   {worst}"
        )

    print(f"\ndistance between different photos ({len(between_values)} pairs incl. variants)")
    print(f"  {summary(between_values)}; nearest: {nearest[1]} vs {nearest[2]}")
    print(f"distance between different aligned faces ({len(faces)} pairs, lfw_subset)")
    print(f"  {summary(faces)}")

    print("\ncandidates")
    for threshold in range(needed, min(between_values)):
        crops = ", ".join(
            f"{k.split()[1]} {sum(d <= threshold for d in to_variant[k].values())}"
            for k in VARIANTS
            if k.startswith("crop")
        )
        margin = min(between_values) - threshold
        print(
            f"  {threshold:>2} (probe radius {threshold // 4}): margin {margin}"
            f" to different photos, {min(faces) - threshold} to aligned faces;"
            f" crops caught {crops} of {len(PHOTOS)}"
        )
    print(
        f"\nrecommended default: {recommended} (worst re-encode/resize/brightness copy: {needed}; "
        f"margin {min(between_values) - recommended} to the nearest different photo, "
        f"{min(faces) - recommended} to the nearest pair of different aligned faces)"
    )


if __name__ == "__main__":
    main()
