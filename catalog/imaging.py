"""Web sizes of an original image, its ThumbHash placeholder and its average colour (pure: no
Django, no I/O).

:func:`render` decodes the original once and derives everything from that decode: WebP
renditions at :data:`WIDTHS` (never upscaled: an image narrower than a width gets no rendition
of that width), EXIF orientation applied, converted to sRGB, alpha kept; a ThumbHash of the
picture reduced to at most 100 px; its average colour. bench/renditions.py measured the
choices below against the naive Pillow path (full decode, LANCZOS resize and WebP method 4 per
width); the figures are in docs/renditions.md, "Measured". libvips (the `pyvips-binary`
wheel) won: shrink-on-load decodes a 2000x3000 JPEG at the scale the largest rendition needs,
and its pipeline streams, so a worker's memory stays small for large PNGs too. What cannot
stream (a GIF's canvas, a progressive JPEG's coefficients, an interlaced PNG) is costed by
:func:`render_cost` and held in the caller's decode budget (docs/renditions.md, "Memory").
"""

from __future__ import annotations

import base64
import contextlib
import struct
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyvips
import thash

WIDTHS = (400, 1200)
FORMAT = "webp"
MIME_TYPE = "image/webp"
# WebP quality as the naive path has it. `effort` (0-6) is where the time goes, and it is a
# step, not a slope: from 3 up libwebp adds rate-distortion optimisation, which doubles the
# encode. Effort 2 keeps the picture as close to the resized original as Pillow's method 4
# does (SSIM within 0.003) at half the CPU; what it gives up is resemblance to method 4's own
# artefacts (docs/renditions.md, "Settings": no quality, preset or subsampling measured better).
QUALITY = 80
EFFORT = 2
PLACEHOLDER_SIDE = 100  # ThumbHash's own maximum
_UNBOUNDED = 10_000_000  # thumbnail() fits a box: only the width may bind

# Only these loaders may ever run, whatever the bytes claim: the originals were checked as
# JPEG/PNG/WebP/GIF at ingest, and libvips' other loaders (SVG, PDF, TIFF, HEIF...) are a
# parser surface a rendition has no use for. Named by the operation (the nickname is stable),
# and unblocked by the class that implements it in the libvips in use: the class names move
# between builds (GIFs are VipsForeignLoadNsgifBuffer since libvips 8.11, PNGs
# VipsForeignLoadSpngBuffer in builds with libspng), and unblocking a name that no loader has
# left every GIF "not an image we render".
_LOADER_OPERATIONS = {
    "JPEG": "jpegload_buffer",
    "PNG": "pngload_buffer",
    "WEBP": "webpload_buffer",
    "GIF": "gifload_buffer",
}


def loader_classes() -> dict[str, str]:
    """Format -> the libvips class that loads it from a buffer ("" if this build has none)."""
    classes = {}
    for fmt, nickname in _LOADER_OPERATIONS.items():
        gtype = pyvips.type_find("VipsOperation", nickname)
        classes[fmt] = pyvips.type_name(gtype) if gtype else ""
    return classes


pyvips.operation_block_set("VipsForeignLoad", True)
for _loader in loader_classes().values():
    if _loader:
        pyvips.operation_block_set(_loader, False)
_KEEP_NONE = 0  # VipsForeignKeep NONE: no EXIF (already applied), no profile (sRGB)
# No operation cache: a render never repeats an operation on the same bytes, and the cache
# would keep up to 100 MB of earlier images' pixels outside any reservation.
pyvips.cache_set_max(0)
# libvips' threads per render: each holds its own row buffers, so more threads, more memory
# per image. Capped at 2, the machine the costs below were measured on, so they hold on any
# machine; the parallelism across images is RENDITION_THREADS' and the backfill's --workers.
RENDER_THREADS = 2
pyvips.concurrency_set(min(RENDER_THREADS, max(1, pyvips.concurrency_get())))

MIB = 1024 * 1024
# What a render holds at its peak, per format, fitted to the peak RSS growth of one render of
# an 8000x8000 image in a fresh process (bench/rendition_memory.py; docs/renditions.md,
# "Memory"), each with a margin above what was measured.
# JPEG: shrink-on-load streams the reduced picture; CMYK adds its conversion to sRGB.
_JPEG_SLACK = 48 * MIB
_JPEG_CMYK_SLACK = 32 * MIB
_JPEG_COEFFICIENT_BYTES = 2  # per sample of a file of several scans, all kept
# PNG: rows stream, but libvips' line cache in front of the shrink holds about 1800 rows of
# every band (16-bit samples count half as much again); an interlaced file is held whole.
_PNG_SLACK = 24 * MIB
_PNG_STREAM_ROWS = 1792
_PNG_INTERLACED_SLACK = 48 * MIB
_PNG_INTERLACED_ROWS = 1024
# GIF: decoded into a whole RGBA canvas, which libvips copies the frame out of.
_GIF_SLACK = 64 * MIB
_GIF_BYTES_PER_PIXEL = 6
# WebP: a lossy one streams at the reduced size (its alpha plane is decoded whole); a lossless
# or animated one is decoded whole into RGBA canvases.
_WEBP_SLACK = 32 * MIB
_SAMPLE_BYTES = {"uchar": 1, "char": 1, "ushort": 2, "short": 2}


class Budget(Protocol):
    """What :func:`render` reserves its decode in (catalog.memory.DecodeBudget)."""

    limit: int

    def reserve(self, cost: int) -> AbstractContextManager[object]: ...


class RenderError(Exception):
    """The original cannot be rendered (not an image, truncated, too large); ``reason`` is
    short, for the admin and the backfill's summary."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rendition:
    width: int
    height: int
    data: bytes  # WebP


@dataclass(frozen=True, slots=True)
class Rendered:
    renditions: tuple[Rendition, ...]  # ascending width, only the widths the image reaches
    placeholder: str  # ThumbHash, base64
    color: str  # "#rrggbb"


def upright_size(data: bytes) -> tuple[int, int]:
    """Width and height of the original as viewers show it (EXIF orientation applied)."""
    header = _header(data)
    return _upright(header)


def render(
    data: bytes,
    *,
    max_pixels: int | None = None,
    widths=WIDTHS,
    budget: Budget | None = None,
) -> Rendered:
    """Renditions, placeholder and colour of the original ``data`` (module docstring).

    With ``budget``, the decode holds :func:`render_cost` of it reserved there (waiting for
    other decodes to end if need be), and an image that costs more than the whole budget is
    refused before a pixel is decoded.
    """
    header = _header(data)
    if max_pixels is not None and header.width * header.height > max_pixels:
        raise RenderError(f"{header.width}x{header.height} is more than {max_pixels} pixels")
    reservation: AbstractContextManager[object] = contextlib.nullcontext()
    if budget is not None:
        cost = render_cost(header, data)
        if cost > budget.limit:
            raise RenderError(
                f"rendering this {header.width}x{header.height} {_format_name(header)} would "
                f"take about {cost / MIB:.0f} MiB of memory, more than the "
                f"{budget.limit / MIB:.0f} MiB decode budget"
            )
        reservation = budget.reserve(cost)
    with reservation:
        return _render(data, header, widths)


def _render(data: bytes, header: pyvips.Image, widths) -> Rendered:
    up_w, _ = _upright(header)
    targets = sorted(w for w in widths if w <= up_w)
    try:
        # One decode, shrunk on load to the largest size needed, rotated upright, imported
        # from its ICC profile (CMYK without one: libvips' CMYK fallback) and exported to sRGB.
        base = pyvips.Image.thumbnail_buffer(
            data,
            targets[-1] if targets else up_w,
            height=_UNBOUNDED,
            size="down",
            fail_on="truncated",
        )
        base = _srgb_8bit(base).copy_memory()  # each size below reads it again
        renditions = []
        for width in reversed(targets):
            image = base if base.width == width else base.resize(width / base.width)
            renditions.append(
                Rendition(
                    width=image.width,
                    height=image.height,
                    data=image.webpsave_buffer(Q=QUALITY, effort=EFFORT, keep=_KEEP_NONE),
                )
            )
            base = image  # the 400 from the 1200, not from the original
        small = base.thumbnail_image(PLACEHOLDER_SIDE, height=PLACEHOLDER_SIDE)
        rgba = _rgba_array(small)
    except pyvips.Error as exc:
        raise RenderError(f"cannot decode: {_first_line(exc)}") from exc
    # thash's array protocol is narrower than numpy's own __array__ signature.
    placeholder = base64.b64encode(bytes(thash.encode(rgba, resize=False))).decode("ascii")  # type: ignore[arg-type]
    return Rendered(
        renditions=tuple(reversed(renditions)), placeholder=placeholder, color=average_color(rgba)
    )


def render_cost(header: pyvips.Image, data: bytes) -> int:
    """Peak bytes that rendering the original (``header``: opened, not decoded) takes.

    Measured per format at 8000x8000 (docs/renditions.md, "Memory"); each term bounds what the
    decoder and the pipeline after it held, so a reservation of this size is not exceeded.
    """
    width, height = header.width, header.height
    pixels = width * height
    bands = header.bands
    sample = _SAMPLE_BYTES.get(header.format, 4)
    loader = header.get("vips-loader") if header.get_typeof("vips-loader") else ""
    if loader.startswith("jpegload"):
        # Shrink-on-load: libjpeg scales in its inverse DCT and the pipeline streams; but a
        # file of several scans (progressive, or one scan per component) makes libjpeg keep
        # every coefficient of the whole image until the last scan, whatever the scale.
        cost = _JPEG_SLACK + (_JPEG_CMYK_SLACK if bands >= 4 else 0)
        if _flag(header, "jpeg-multiscan") or _flag(header, "interlaced"):
            cost += _JPEG_COEFFICIENT_BYTES * _jpeg_samples(data, header)
        return cost
    if loader.startswith("pngload"):
        if _flag(header, "interlaced"):
            # Adam7: libpng needs the whole image, at the file's sample size, before a row.
            whole = pixels * bands * sample
            return _PNG_INTERLACED_SLACK + whole + width * bands * sample * _PNG_INTERLACED_ROWS
        rows = min(height, _PNG_STREAM_ROWS)
        return _PNG_SLACK + width * bands * rows * (2 if sample == 1 else 3)
    if loader.startswith("gifload"):
        return _GIF_SLACK + pixels * _GIF_BYTES_PER_PIXEL
    # WebP (the only other loader the allow-list lets run).
    if b"VP8L" in data or b"ANIM" in data:
        return _WEBP_SLACK + pixels * 4 * (2 if b"ANIM" in data else 1)
    return _WEBP_SLACK + (pixels if b"ALPH" in data else 0)


def _flag(header: pyvips.Image, field: str) -> bool:
    return bool(header.get_typeof(field) and header.get(field))


def _jpeg_samples(data: bytes, header: pyvips.Image) -> int:
    """Samples of all components, each plane padded to whole 8x8 blocks (from the frame
    header's sampling factors; every component at full size if it cannot be read)."""
    components = _jpeg_sampling(data)
    if not components:
        components = [(1, 1)] * header.bands
    width, height = header.width, header.height
    h_max = max(h for h, _ in components) or 1
    v_max = max(v for _, v in components) or 1
    total = 0
    for h, v in components:
        plane_w = -(-width * max(h, 1) // h_max)
        plane_h = -(-height * max(v, 1) // v_max)
        total += (-(-plane_w // 8) * 8) * (-(-plane_h // 8) * 8)
    return total


_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_sampling(data: bytes) -> list[tuple[int, int]]:
    """The (horizontal, vertical) sampling factors of each component, from the SOF segment."""
    at = 2  # after SOI
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return []
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        (length,) = struct.unpack_from(">H", data, at + 2)
        if marker in _SOF_MARKERS:
            segment = data[at + 4 : at + 2 + length]
            if len(segment) < 6:
                return []
            count = segment[5]
            factors = segment[6 : 6 + 3 * count]
            return [(factors[i + 1] >> 4, factors[i + 1] & 0x0F) for i in range(0, len(factors), 3)]
        if marker == 0xDA:  # start of scan before any frame header: not a JPEG we know
            return []
        at += 2 + length
    return []


def _format_name(header: pyvips.Image) -> str:
    loader = header.get("vips-loader") if header.get_typeof("vips-loader") else ""
    return loader.removesuffix("_buffer").removesuffix("load").upper() or "image"


def _header(data: bytes) -> pyvips.Image:
    try:
        # Lazy: reads the header only; pixels are decoded by thumbnail_buffer.
        return pyvips.Image.new_from_buffer(data, "", access="sequential")
    except pyvips.Error as exc:
        raise RenderError(f"not an image we render: {_first_line(exc)}") from exc


def _upright(header: pyvips.Image) -> tuple[int, int]:
    orientation = header.get("orientation") if header.get_typeof("orientation") else 1
    if orientation in (5, 6, 7, 8):
        return header.height, header.width
    return header.width, header.height


def _srgb_8bit(image: pyvips.Image) -> pyvips.Image:
    """sRGB (or sRGB + alpha), 8 bits per band, whatever came in (grayscale, 16-bit)."""
    if image.interpretation not in ("srgb",) or image.format != "uchar":
        image = image.colourspace("srgb")
    if image.format != "uchar":
        image = image.cast("uchar")
    return image


def _rgba_array(image: pyvips.Image) -> np.ndarray:
    if image.bands == 3:
        image = image.bandjoin(255)
    return np.ndarray(
        buffer=image.write_to_memory(), dtype=np.uint8, shape=(image.height, image.width, 4)
    )


def average_color(rgba: np.ndarray) -> str:
    """The mean colour of the visible pixels (weighted by alpha), as ``#rrggbb``."""
    pixels = rgba.reshape(-1, 4).astype(np.float64)
    weights = pixels[:, 3] / 255.0
    total = weights.sum()
    if total <= 0:
        mean = pixels[:, :3].mean(axis=0)
    else:
        mean = (pixels[:, :3] * weights[:, None]).sum(axis=0) / total
    r, g, b = (round(v) for v in mean)
    return f"#{r:02x}{g:02x}{b:02x}"


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:200]
