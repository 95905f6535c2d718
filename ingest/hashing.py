"""Image checks and perceptual hashing for ingest (pure: no Django, no I/O, no globals touched).

A worker calls :func:`analyse_image` once per downloaded image. It opens the bytes once, refuses
anything that is not a complete JPEG/PNG/WebP/GIF within the pixel limit, and computes a 64-bit
DCT perceptual hash from a reduced decode (see docs/hashing.md for the measurements behind the
choices here).

Near-duplicate lookup: the database stores the hash as a signed bigint plus four generated,
indexed 16-bit band columns; :func:`bands` and :func:`band_probes` are the Python side of that
scheme.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cache
from itertools import combinations

import numpy as np
from PIL import Image, UnidentifiedImageError

from catalog.text import truncate

# Stored beside every hash: hashes made by different algorithms (or different parameters of
# this one) are not comparable, so a change to anything below that moves bits needs a new name
# and a re-hash of the archive.
PHASH_ALGORITHM = "phash-draft128-v1"

# The reduced decode keeps the shorter side at least this many pixels before the final 32x32
# resize: the smallest that kept every sample photo close to imagehash.phash on a full decode
# while a runway-sized JPEG still decodes at 1/8 scale; smaller targets drift on small images
# for no speed gain on big ones (bench/hash_bench.py's figures: docs/hashing.md, "The hash").
REDUCED_MIN_SIDE = 128

_HASH_SIZE = 8  # 8x8 low-frequency DCT coefficients -> 64 bits
_DCT_INPUT = 32  # imagehash's hash_size * highfreq_factor (8 * 4)

_UINT64_MASK = (1 << 64) - 1
_BAND_BITS = 16
_BAND_MASK = (1 << _BAND_BITS) - 1

# Pillow format name -> MIME type. Only these decoders are ever tried (Image.open(formats=...)),
# so a crafted file cannot reach Pillow's rarely exercised plugins (PSD, TGA, ICNS, ...).
# MPO is what Pillow calls a JPEG carrying a multi-picture (camera) extension.
_MIME_BY_FORMAT = {
    "JPEG": "image/jpeg",
    "MPO": "image/jpeg",
    "PNG": "image/png",
    "WEBP": "image/webp",
    "GIF": "image/gif",
}
_OPEN_FORMATS = ("JPEG", "PNG", "WEBP", "GIF")

_PNG_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"

# EXIF orientation -> the transpose that shows the image upright (same table as
# PIL.ImageOps.exif_transpose). We hash and report the picture as viewers show it, so a copy
# whose CDN baked the rotation into the pixels still matches. Applied to the small reduced image
# only, so it costs nothing.
_ORIENTATION_TRANSPOSE = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}
_SWAPS_SIDES = frozenset({5, 6, 7, 8})
_EXIF_ORIENTATION_TAG = 0x0112

# What analyse_image holds around its decode: called with the opened image (header read, not
# a pixel decoded) and its bytes, it may refuse the image (ImageRefused) or return a context
# that waits for room (ingest.memory.decode_reservation: the worker's decode budget).
type Reservation = Callable[[Image.Image, bytes], AbstractContextManager[object]]


class ImageRefused(Exception):
    """The bytes are not an acceptable image; ``reason`` is short and fit for a job report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ImageInfo:
    width: int
    height: int
    mime_type: str
    format: str


@dataclass(frozen=True, slots=True)
class AnalysedImage:
    sha1: str
    byte_size: int
    width: int
    height: int
    mime_type: str
    format: str
    phash: int  # unsigned 64-bit; store to_signed64(phash) in a bigint column
    phash_algorithm: str

    @property
    def phash_signed(self) -> int:
        return to_signed64(self.phash)


def sha1_hex(data: bytes) -> str:
    # sha1 names content-addressed storage keys, it is not a security boundary.
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def analyse_image(
    data: bytes, *, max_pixels: int, reserve: Reservation | None = None
) -> AnalysedImage:
    """Everything the worker stores about one downloaded image, from a single decode.

    With ``reserve``, the decode is held inside what it returns (waiting for other threads'
    decodes to finish if need be), and an image it refuses is refused before a pixel is
    decoded.
    """
    reduced, info = _decode_reduced(data, max_pixels=max_pixels, reserve=reserve)
    return AnalysedImage(
        sha1=sha1_hex(data),
        byte_size=len(data),
        width=info.width,
        height=info.height,
        mime_type=info.mime_type,
        format=info.format,
        phash=_dct_hash(reduced),
        phash_algorithm=PHASH_ALGORITHM,
    )


def perceptual_hash(data_or_image: bytes | Image.Image) -> int:
    """The ``PHASH_ALGORITHM`` hash as an unsigned 64-bit int.

    Bytes go through the same checks as :func:`analyse_image` (with no pixel limit beyond
    Pillow's own). A PIL image is trusted as given; if it is a JPEG not loaded yet, it gets the
    reduced decode, which leaves that image object reduced (``draft`` works in place).
    """
    if isinstance(data_or_image, bytes | bytearray | memoryview):
        reduced, _ = _decode_reduced(bytes(data_or_image), max_pixels=None, reserve=None)
    else:
        reduced = _upright(_reduce(data_or_image), _orientation(data_or_image))
    return _dct_hash(reduced)


def to_signed64(u: int) -> int:
    """Unsigned 64-bit -> the two's-complement value a signed bigint column can hold."""
    if not 0 <= u <= _UINT64_MASK:
        raise ValueError(f"{u} is not an unsigned 64-bit value")
    return u - (1 << 64) if u >> 63 else u


def to_unsigned64(s: int) -> int:
    """Inverse of :func:`to_signed64`."""
    if not -(1 << 63) <= s < (1 << 63):
        raise ValueError(f"{s} is not a signed 64-bit value")
    return s & _UINT64_MASK


def hamming(a: int, b: int) -> int:
    """Differing bits of two 64-bit hashes, signed or unsigned alike.

    The mask matters: for a negative (signed) operand Python's ``^`` yields a negative int, and
    ``bit_count`` of that counts the bits of its absolute value, not of the 64-bit pattern.
    """
    return ((a ^ b) & _UINT64_MASK).bit_count()


def bands(u: int) -> tuple[int, int, int, int]:
    """The four 16-bit slices of a hash, most significant first.

    Equal to the database's generated columns ``(phash >> 48) & 65535`` ... ``phash & 65535``
    on the signed value, because an arithmetic shift only changes bits above the mask.
    """
    u &= _UINT64_MASK
    return (
        (u >> 48) & _BAND_MASK,
        (u >> 32) & _BAND_MASK,
        (u >> 16) & _BAND_MASK,
        u & _BAND_MASK,
    )


def band_probes(u: int, max_distance: int) -> list[list[int]]:
    """For each band, every 16-bit value within radius ``max_distance // 4`` of the query's band.

    Pigeonhole: if two hashes differ in at most ``max_distance`` bits, spread over four bands,
    some band differs in at most ``max_distance // 4`` bits, so the candidate query
    ``band0 IN probes[0] OR ... OR band3 IN probes[3]`` cannot miss a true match. Candidates
    still need the exact :func:`hamming` check. Probes per band: 1, 17, 137, 697 for radius
    0..3; beyond that the IN lists stop being an index lookup, hence the refusal.
    """
    if max_distance < 0:
        raise ValueError("max_distance must be >= 0")
    radius = max_distance // 4
    if radius > 3:
        raise ValueError(f"max_distance {max_distance} needs radius {radius}: too many probes")
    masks = _flip_masks(radius)
    return [[band ^ m for m in masks] for band in bands(u)]


@cache
def _flip_masks(radius: int) -> tuple[int, ...]:
    masks = [0]
    for r in range(1, radius + 1):
        for positions in combinations(range(_BAND_BITS), r):
            masks.append(sum(1 << p for p in positions))
    return tuple(masks)


def reduction_factor(width: int, height: int) -> int:
    scale = max(1, min(width // REDUCED_MIN_SIDE, height // REDUCED_MIN_SIDE))
    return next(s for s in (8, 4, 2, 1) if scale >= s)


def _decode_reduced(
    data: bytes, *, max_pixels: int | None, reserve: Reservation | None
) -> tuple[Image.Image, ImageInfo]:
    """Open once, check, decode the whole stream at reduced size; return it in mode L."""
    try:
        image = Image.open(io.BytesIO(data), formats=_OPEN_FORMATS)
    except UnidentifiedImageError:
        raise ImageRefused("not a JPEG, PNG, WebP or GIF image") from None
    except Image.DecompressionBombError:
        # Pillow's own ceiling (2 x Image.MAX_IMAGE_PIXELS), hit before our limit when the
        # caller's max_pixels is above it. Never raise MAX_IMAGE_PIXELS: it is process-global.
        raise ImageRefused("too many pixels (decompression bomb)") from None
    except Image.DecompressionBombWarning:
        # Only an exception when the process runs with warnings as errors; same meaning.
        raise ImageRefused("too many pixels (decompression bomb)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageRefused(f"unreadable image header ({truncate(exc, 80)})") from None

    with image:
        fmt = image.format or ""
        mime_type = _MIME_BY_FORMAT.get(fmt)
        if mime_type is None:  # pragma: no cover - formats= already limits this
            raise ImageRefused(f"format {fmt or 'unknown'} is not accepted")
        width, height = image.size
        # Header only so far: refuse a bomb before a single pixel is allocated.
        if max_pixels is not None and width * height > max_pixels:
            raise ImageRefused(f"{width}x{height} is more than {max_pixels} pixels")
        if fmt == "PNG" and _PNG_IEND not in data:
            # Pillow stops reading at the last IDAT, so a file cut after it would decode; but a
            # PNG without IEND is a broken transfer and the next copy may be cut earlier.
            raise ImageRefused("truncated PNG (no IEND chunk)")
        reservation = reserve(image, data) if reserve is not None else contextlib.nullcontext()
        try:
            with reservation:
                reduced = _reduce(image)
        except Image.DecompressionBombError:
            raise ImageRefused("too many pixels (decompression bomb)") from None
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            # LOAD_TRUNCATED_IMAGES stays False (it is process-global), so a cut stream lands
            # here as "image file is truncated" instead of decoding grey padding.
            if "truncated" in str(exc):
                raise ImageRefused(
                    f"truncated {mime_type.removeprefix('image/').upper()}"
                ) from None
            raise ImageRefused(f"cannot decode image ({truncate(exc, 80)})") from None

        orientation = _orientation(image)

    reduced = _upright(reduced, orientation)
    if orientation in _SWAPS_SIDES:
        width, height = height, width
    info = ImageInfo(
        width=width, height=height, mime_type=mime_type, format="JPEG" if fmt == "MPO" else fmt
    )
    return reduced, info


def _reduce(image: Image.Image) -> Image.Image:
    """Decode to grayscale at a power-of-two reduction keeping the short side >= 128 px.

    For JPEG, ``draft`` asks libjpeg to scale during the inverse DCT (1/2, 1/4, 1/8) and to skip
    the chroma planes, so the full-size pixels are never produced: that is where the speed-up
    comes from. The whole entropy-coded stream is still read, so truncation is still caught.
    Other formats decode fully and are then box-reduced by the same factor, so a PNG and a JPEG
    of one picture hash alike.
    """
    width, height = image.size
    factor = reduction_factor(width, height)
    if image.format in ("JPEG", "MPO") and factor > 1:
        # draft() picks its scale with the same rule as above. It is a no-op when the image is
        # already loaded (or has several tiles); the reduce() below then does the work instead.
        image.draft("L", (REDUCED_MIN_SIDE, REDUCED_MIN_SIDE))
    image.load()
    already = max(1, round(width / image.width))
    return _gray_reduced(image, factor // already if factor > already else 1)


# Strips of the decoded image are converted and reduced one at a time. A multiple of every
# reduction factor, so no reduce() block straddles two strips.
STRIP_ROWS = 64
# Modes of wide samples: PNG's 16-bit grayscale opens as I;16 (as I in older Pillows).
_WIDE_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I"})


def _gray_reduced(image: Image.Image, factor: int) -> Image.Image:
    """``image`` in mode L reduced by ``factor``: convert("L") then reduce(factor), strip by strip.

    The same pixels as converting the whole image first (convert works per pixel, and reduce's
    blocks never cross a strip), without a second full-size copy of a big image in memory.
    """
    width, height = image.size
    if height <= STRIP_ROWS:
        gray = _to_gray(image)
        return gray.reduce(factor) if factor > 1 else gray
    out = Image.new("L", (-(-width // factor), -(-height // factor)))
    for top in range(0, height, STRIP_ROWS):
        gray = _to_gray(image.crop((0, top, width, min(top + STRIP_ROWS, height))))
        out.paste(gray.reduce(factor) if factor > 1 else gray, (0, top // factor))
    return out


def _to_gray(image: Image.Image) -> Image.Image:
    if image.mode not in _WIDE_MODES:
        return image.convert("L")
    # Pillow's convert("L") clips wide samples at 255, so every 16-bit photo would hash as a
    # white page. Keep the high byte instead, as Pillow does for 16-bit colour PNGs.
    samples = np.asarray(image)
    if samples.dtype.kind == "i":  # mode I: 32-bit signed
        samples = np.clip(samples, 0, 0xFFFF)
    return Image.fromarray((samples >> 8).astype(np.uint8), mode="L")


def _dct_hash(reduced: Image.Image) -> int:
    """imagehash.phash's arithmetic on an already reduced grayscale image.

    32x32 Lanczos, unnormalised DCT-II on both axes (scipy.fftpack's default), the top-left 8x8,
    bits = coefficient > median, row-major with the DC term as the most significant bit: so the
    int equals ``int(str(imagehash.phash(img)), 16)`` for the same 32x32 pixels.
    """
    small = reduced.convert("L").resize((_DCT_INPUT, _DCT_INPUT), Image.Resampling.LANCZOS)
    pixels = np.asarray(small, dtype=np.float64)
    basis = _dct_basis()
    low = basis @ pixels @ basis.T
    bits = (low > np.median(low)).ravel()
    value = 0
    for bit in bits:
        value = (value << 1) | int(bit)
    return value


@cache
def _dct_basis() -> np.ndarray:
    # Rows k = 0..7 of the 32-point DCT-II: 2 * cos(pi * k * (2n + 1) / 64). Only the 8 lowest
    # frequencies are kept, so two 8x32 products replace two full 32x32 transforms.
    n = np.arange(_DCT_INPUT)
    k = np.arange(_HASH_SIZE)
    basis = 2.0 * np.cos(np.pi * np.outer(k, 2 * n + 1) / (2 * _DCT_INPUT))
    basis.setflags(write=False)
    return basis


def _upright(reduced: Image.Image, orientation: int) -> Image.Image:
    transpose = _ORIENTATION_TRANSPOSE.get(orientation)
    return reduced if transpose is None else reduced.transpose(transpose)


def _orientation(image: Image.Image) -> int:
    try:
        value = image.getexif().get(_EXIF_ORIENTATION_TAG, 1)
    except Exception:
        # EXIF is metadata beside the pixels: a malformed block must not cost us the image.
        return 1
    return value if isinstance(value, int) else 1
