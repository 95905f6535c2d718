"""Web sizes of an original image, its ThumbHash placeholder and its average colour (pure: no
Django, no I/O).

:func:`render` decodes the original once and derives everything from that decode: WebP
renditions at :data:`WIDTHS` (never upscaled: an image narrower than a width gets no rendition
of that width), EXIF orientation applied, converted to sRGB, alpha kept; a ThumbHash of the
picture reduced to at most 100 px; its average colour. bench/renditions.py measured the
choices below against the naive Pillow path (full decode, LANCZOS resize and WebP method 4 per
width); the figures are in docs/renditions.md, "Measured". libvips (the `pyvips-binary`
wheel) won: shrink-on-load decodes a 2000x3000 JPEG at the scale the largest rendition needs,
and its pipeline streams, so a worker's memory stays small for large PNGs too.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

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


def render(data: bytes, *, max_pixels: int | None = None, widths=WIDTHS) -> Rendered:
    """Renditions, placeholder and colour of the original ``data`` (module docstring)."""
    header = _header(data)
    if max_pixels is not None and header.width * header.height > max_pixels:
        raise RenderError(f"{header.width}x{header.height} is more than {max_pixels} pixels")
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
