"""What each of ingest's decodes (ingest.hashing.analyse_image, through Pillow) costs,
estimated from the header before a pixel is decoded, and the reservation that holds it in the
process's decode budget (catalog.memory, which renditions share).

The cost model, its measurements and the bound they give a worker: docs/hashing.md, "Decode
memory".
"""

import contextlib

from PIL import Image

from catalog.memory import MIB, DecodeBudget
from ingest.hashing import STRIP_ROWS, ImageRefused, Reservation, reduction_factor

# Bytes per pixel of Pillow's storage for a mode: one byte for 1, L and P, two for the 16-bit
# modes, four for every other mode (RGB is stored as RGBX, LA as four bytes too).
_STORAGE_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2}
# Pillow decodes WebP through libwebp's animation decoder, which keeps two RGBA canvases of its
# own, then hands over the frame as a bytes object that is copied into the image: four RGBA
# copies of the picture at once (measured, docs/hashing.md).
_WEBP_BYTES_PER_PIXEL = 16
# Per strip of _gray_reduced: the cropped strip, its numpy temporaries and its grayscale copy.
_STRIP_BYTES_PER_PIXEL = 8
# JPEG coefficients are 16-bit, one per sample.
_JPEG_COEFFICIENT_BYTES = 2
# What every decode holds besides the pixels: row buffers, zlib's or libjpeg's state.
_DECODER_SLACK = 4 * MIB


def decode_cost(image: Image.Image, data: bytes) -> int:
    """Peak bytes that decoding ``image`` (opened, not loaded) the way this module does takes.

    Measured per format at 8000x8000 (docs/hashing.md); each term is an upper bound of what
    the decoder allocates, so a reservation of this size is never exceeded.
    """
    width, height = image.size
    pixels = width * height
    strip = min(height, STRIP_ROWS) * width * _STRIP_BYTES_PER_PIXEL + _DECODER_SLACK
    if image.format == "WEBP":
        return pixels * _WEBP_BYTES_PER_PIXEL + len(data) + strip
    if image.format in ("JPEG", "MPO"):
        # The draft decode writes only the reduced picture (4 bytes a pixel at most, CMYK)...
        factor = reduction_factor(width, height)
        cost = -(-width // factor) * -(-height // factor) * 4 + strip
        if image.info.get("progressive") or image.info.get("progression") or _several_scans(data):
            # ...but a file of several scans (progressive, or baseline with a scan per
            # component) makes libjpeg keep every coefficient of the whole image until the
            # last scan, whatever the output scale.
            cost += _JPEG_COEFFICIENT_BYTES * _jpeg_samples(image)
        return cost
    return pixels_cost(width, height, image.mode)


def pixels_cost(width: int, height: int, mode: str) -> int:
    """:func:`decode_cost` of a PNG or GIF: Pillow's storage of the mode, plus the strips."""
    strip = min(height, STRIP_ROWS) * width * _STRIP_BYTES_PER_PIXEL + _DECODER_SLACK
    return width * height * _STORAGE_BYTES.get(mode, 4) + strip


def _several_scans(data: bytes) -> bool:
    # Entropy-coded data never holds an unstuffed 0xFF followed by a marker byte, so every
    # FF DA after the headers is a start of scan. One in the headers (an EXIF thumbnail's)
    # only makes the estimate cautious.
    return data.count(b"\xff\xda") > 1


def _jpeg_samples(image: Image.Image) -> int:
    """Samples in all components, each component's plane padded to whole 8x8 blocks."""
    width, height = image.size
    layers = getattr(image, "layer", None) or [("", 1, 1, 0)] * len(image.getbands())
    h_max = max(layer[1] for layer in layers) or 1
    v_max = max(layer[2] for layer in layers) or 1
    total = 0
    for _id, h, v, _table in layers:
        plane_w = -(-width * max(h, 1) // h_max)
        plane_h = -(-height * max(v, 1) // v_max)
        total += (-(-plane_w // 8) * 8) * (-(-plane_h // 8) * 8)
    return total


def decode_reservation(budget: DecodeBudget) -> Reservation:
    """What ingest.hashing.analyse_image holds around a decode: the decode's cost reserved in
    ``budget``; an image that costs more than the whole budget is refused."""

    def reserve(image: Image.Image, data: bytes) -> contextlib.AbstractContextManager[None]:
        cost = decode_cost(image, data)
        if cost > budget.limit:
            width, height = image.size
            fmt = (image.format or "").replace("MPO", "JPEG")
            raise ImageRefused(
                f"decoding this {width}x{height} {fmt} would take about "
                f"{cost / MIB:.0f} MiB of memory, more than the {budget.limit / MIB:.0f} MiB "
                "decode budget"
            )
        return budget.reserve(cost)

    return reserve
