"""ingest.hashing on real photographs (scikit-image's bundled samples, nothing downloaded)."""

from __future__ import annotations

import hashlib
import io
import struct
import zlib
from functools import cache
from itertools import combinations

import imagehash
import numpy as np
import pytest
from django.conf import settings as django_settings
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from skimage import color, img_as_ubyte, img_as_uint
from skimage import data as skdata

from ingest.hashing import (
    PHASH_ALGORITHM,
    AnalysedImage,
    ImageRefused,
    analyse_image,
    band_probes,
    bands,
    hamming,
    perceptual_hash,
    sha1_hex,
    to_signed64,
    to_unsigned64,
)

MAX_PIXELS = 64_000_000
# The project's near-duplicate radius (its default lives in config/settings/jobs.py only).
DUPLICATE_MAX_DISTANCE = django_settings.INGEST_DUPLICATE_MAX_DISTANCE
PHOTOS = (
    "astronaut",
    "camera",
    "chelsea",
    "coffee",
    "rocket",
    "immunohistochemistry",
    "hubble_deep_field",
    "retina",
    "moon",
    "coins",
    "clock",
    "brick",
    "stereo_motorcycle",
)
UINT64 = st.integers(min_value=0, max_value=2**64 - 1)
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@cache
def photo(name: str) -> Image.Image:
    pixels = getattr(skdata, name)()
    if name == "stereo_motorcycle":  # (left, right, disparity)
        pixels = pixels[0]
    return Image.fromarray(np.asarray(pixels))


def encode(image: Image.Image, fmt: str = "JPEG", **options: object) -> bytes:
    if fmt == "PNG":
        options.setdefault("compress_level", 1)  # same pixels, a fraction of the encode time
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def standard_phash(data: bytes) -> int:
    return int(str(imagehash.phash(Image.open(io.BytesIO(data)))), 16)


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return (
        struct.pack(">I", len(payload))
        + kind
        + payload
        + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)
    )


def bilevel_png(width: int, height: int, *, complete: bool = True) -> bytes:
    """A 1-bit PNG of one colour, built row by row so the test never holds the pixels."""
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte + packed bits
    compressor = zlib.compressobj(9)
    idat = b"".join(compressor.compress(row) for _ in range(height if complete else 1))
    idat += compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", idat)
        + png_chunk(b"IEND", b"")
    )


# --- hashing real photos -------------------------------------------------------------------


def test_sha1_hex_is_hashlib_sha1() -> None:
    assert sha1_hex(b"look 1") == hashlib.sha1(b"look 1").hexdigest()  # noqa: S324


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
@pytest.mark.parametrize("name", PHOTOS)
def test_reduced_hash_stays_within_two_bits_of_standard_phash(name: str, fmt: str) -> None:
    # given a real photo as it would be downloaded
    data = encode(photo(name), fmt)

    # when hashed from the reduced decode
    reduced = analyse_image(data, max_pixels=MAX_PIXELS).phash

    # then it is within 2 bits of imagehash's phash on the full decode
    assert hamming(reduced, standard_phash(data)) <= 2


def test_big_jpeg_takes_the_reduced_path_and_matches_standard_phash() -> None:
    # given a runway-sized JPEG (decoded at 1/8 scale by the reduced path)
    big = photo("astronaut").resize((2000, 3000), Image.Resampling.BICUBIC)
    data = encode(big, quality=90)

    # then the hash stays within 2 bits of the full-decode phash
    assert hamming(perceptual_hash(data), standard_phash(data)) <= 2


def test_dct_step_is_bit_identical_to_imagehash() -> None:
    # given 32x32 grayscale pixels, where no reduction or resize happens
    small = photo("camera").resize((32, 32), Image.Resampling.LANCZOS)

    # then the DCT/median part is exactly imagehash's, bit order included
    assert perceptual_hash(small) == int(str(imagehash.phash(small)), 16)


@pytest.mark.parametrize("name", PHOTOS)
def test_reencoded_and_resized_copies_stay_within_the_threshold(name: str) -> None:
    original = analyse_image(encode(photo(name), "PNG"), max_pixels=MAX_PIXELS).phash
    image = photo(name)
    half = image.resize((image.width // 2, image.height // 2), Image.Resampling.LANCZOS)

    reencoded = analyse_image(encode(image, quality=60), max_pixels=MAX_PIXELS).phash
    resized = analyse_image(encode(half, quality=90), max_pixels=MAX_PIXELS).phash

    assert hamming(original, reencoded) <= DUPLICATE_MAX_DISTANCE
    assert hamming(original, resized) <= DUPLICATE_MAX_DISTANCE


def test_different_photos_are_farther_than_the_threshold() -> None:
    hashes = {n: analyse_image(encode(photo(n)), max_pixels=MAX_PIXELS).phash for n in PHOTOS}

    closest = min(hamming(hashes[a], hashes[b]) for a, b in combinations(PHOTOS, 2))

    # bench/dup_threshold.py measures 18 here; keep a clear gap, not just "one more bit"
    assert closest > DUPLICATE_MAX_DISTANCE + 4


def sixteen_bit(name: str) -> tuple[bytes, bytes]:
    """One photo as a 16-bit grayscale PNG (full precision) and as an 8-bit copy of it."""
    gray = color.rgb2gray(np.asarray(photo(name).convert("RGB")))  # floats in [0, 1]
    wide = Image.fromarray(img_as_uint(gray))
    assert wide.mode == "I;16"
    return encode(wide, "PNG"), encode(Image.fromarray(img_as_ubyte(gray)), "PNG")


def test_a_16_bit_photo_and_its_8_bit_copy_are_near_duplicates() -> None:
    wide, narrow = sixteen_bit("astronaut")

    distance = hamming(
        analyse_image(wide, max_pixels=MAX_PIXELS).phash,
        analyse_image(narrow, max_pixels=MAX_PIXELS).phash,
    )

    assert distance <= 2


def test_different_16_bit_photos_are_not_near_duplicates() -> None:
    # Clipped to 8 bits instead of scaled, every one of them would be a white page: one hash.
    hashes = {n: analyse_image(sixteen_bit(n)[0], max_pixels=MAX_PIXELS).phash for n in PHOTOS}

    closest = min(hamming(hashes[a], hashes[b]) for a, b in combinations(PHOTOS, 2))

    assert closest > DUPLICATE_MAX_DISTANCE


def test_analyse_image_reports_everything_the_worker_stores() -> None:
    data = encode(photo("coffee"), quality=85)

    result = analyse_image(data, max_pixels=MAX_PIXELS)

    assert isinstance(result, AnalysedImage)
    assert result.sha1 == sha1_hex(data)
    assert result.byte_size == len(data)
    assert (result.width, result.height) == (600, 400)
    assert (result.mime_type, result.format) == ("image/jpeg", "JPEG")
    assert result.phash_algorithm == PHASH_ALGORITHM
    assert 0 <= result.phash < 2**64
    assert result.phash_signed == to_signed64(result.phash)
    assert result.phash == perceptual_hash(data)


@pytest.mark.parametrize(
    ("fmt", "options", "mime_type"),
    [
        ("PNG", {}, "image/png"),
        ("WEBP", {"quality": 80}, "image/webp"),
        ("GIF", {}, "image/gif"),
        ("JPEG", {"progressive": True}, "image/jpeg"),
    ],
)
def test_accepted_formats(fmt: str, options: dict[str, object], mime_type: str) -> None:
    data = encode(photo("chelsea"), fmt, **options)

    result = analyse_image(data, max_pixels=MAX_PIXELS)

    assert (result.width, result.height) == (451, 300)
    assert (result.mime_type, result.format) == (mime_type, fmt)
    assert hamming(perceptual_hash(data), standard_phash(data)) <= 2


def test_animated_gif_is_accepted_and_hashed_on_its_first_frame() -> None:
    frames = [photo("chelsea").convert("P"), photo("coffee").resize((451, 300)).convert("P")]
    data = encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100)

    result = analyse_image(data, max_pixels=MAX_PIXELS)

    assert (result.width, result.height, result.mime_type) == (451, 300, "image/gif")
    single = perceptual_hash(encode(frames[0], "GIF"))
    assert hamming(perceptual_hash(data), single) <= 2


@pytest.mark.parametrize("size", [(1, 1), (16, 9), (127, 300)])
def test_images_smaller_than_the_reduction_target_are_hashed(size: tuple[int, int]) -> None:
    data = encode(photo("astronaut").resize(size), "PNG")

    result = analyse_image(data, max_pixels=MAX_PIXELS)

    assert (result.width, result.height) == size


def test_exif_rotation_is_applied_so_a_baked_rotation_still_matches() -> None:
    # given the same picture, once with an EXIF "rotate 90 CW" tag and once with it baked in
    image = photo("coffee")
    exif = Image.Exif()
    exif[0x0112] = 6
    tagged = encode(image, quality=90, exif=exif.tobytes())
    baked = encode(image.transpose(Image.Transpose.ROTATE_270), quality=90)

    tagged_result = analyse_image(tagged, max_pixels=MAX_PIXELS)
    baked_result = analyse_image(baked, max_pixels=MAX_PIXELS)

    # then both report the upright size and hash alike
    assert (tagged_result.width, tagged_result.height) == (400, 600)
    assert (baked_result.width, baked_result.height) == (400, 600)
    assert hamming(tagged_result.phash, baked_result.phash) <= 2


# --- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.999])
@pytest.mark.parametrize("progressive", [False, True])
def test_truncated_jpeg_is_refused(keep: float, progressive: bool) -> None:
    data = encode(photo("astronaut"), quality=90, progressive=progressive)
    cut = data[: int(len(data) * keep)]

    with pytest.raises(ImageRefused, match="truncated"):
        analyse_image(cut, max_pixels=MAX_PIXELS)


def test_jpeg_missing_only_its_end_marker_is_refused() -> None:
    data = encode(photo("astronaut"), quality=90)

    with pytest.raises(ImageRefused):
        analyse_image(data[:-2], max_pixels=MAX_PIXELS)


@pytest.mark.parametrize("cut", [0.5, "no IEND"])
def test_truncated_png_is_refused(cut: float | str) -> None:
    data = encode(photo("astronaut"), "PNG")
    truncated = data[:-12] if cut == "no IEND" else data[: int(len(data) * float(cut))]

    with pytest.raises(ImageRefused, match="truncated"):
        analyse_image(truncated, max_pixels=MAX_PIXELS)


@pytest.mark.parametrize(
    "data",
    [
        b"<!doctype html><html><body>Access denied</body></html>",
        b"",
        b"\xff\xd8\xff\xe0 not really a jpeg",
        bytes(range(256)) * 64,
    ],
    ids=["html", "empty", "jpeg-magic-then-garbage", "garbage"],
)
def test_non_images_are_refused(data: bytes) -> None:
    with pytest.raises(ImageRefused) as refused:
        analyse_image(data, max_pixels=MAX_PIXELS)
    assert refused.value.reason
    assert len(refused.value.reason) <= 120


@pytest.mark.parametrize("fmt", ["BMP", "TIFF", "PPM"])
def test_formats_pillow_could_decode_but_we_do_not_accept_are_refused(fmt: str) -> None:
    data = encode(photo("camera"), fmt)

    with pytest.raises(ImageRefused, match="not a JPEG, PNG, WebP or GIF"):
        analyse_image(data, max_pixels=MAX_PIXELS)


def test_decompression_bomb_is_refused() -> None:
    # given a ~60 KB PNG that would decode to 20000 x 20000 pixels of one colour
    bomb = bilevel_png(20_000, 20_000)
    assert len(bomb) < 100_000

    with pytest.raises(ImageRefused, match="pixels"):
        analyse_image(bomb, max_pixels=MAX_PIXELS)


def test_pixel_limit_is_checked_from_the_header_before_decoding() -> None:
    # given a header declaring 9000 x 9000 (under Pillow's own bomb limit, over ours) whose
    # pixel data is cut short: decoding would fail with "truncated", so the pixel-count reason
    # proves the refusal happened before any decode
    declared_only = bilevel_png(9_000, 9_000, complete=False)

    with pytest.raises(ImageRefused) as refused:
        analyse_image(declared_only, max_pixels=MAX_PIXELS)

    assert refused.value.reason == "9000x9000 is more than 64000000 pixels"


def test_pixel_limit_is_the_callers() -> None:
    data = encode(photo("camera"), "PNG")  # 512 x 512

    with pytest.raises(ImageRefused, match="512x512 is more than 262143 pixels"):
        analyse_image(data, max_pixels=512 * 512 - 1)
    assert analyse_image(data, max_pixels=512 * 512).width == 512


# --- storage and indexed lookup --------------------------------------------------------------


def test_signed_conversion_edges() -> None:
    assert to_signed64(0) == 0
    assert to_signed64(2**63 - 1) == 2**63 - 1
    assert to_signed64(2**63) == -(2**63)
    assert to_signed64(2**64 - 1) == -1
    with pytest.raises(ValueError, match="unsigned"):
        to_signed64(2**64)
    with pytest.raises(ValueError, match="unsigned"):
        to_signed64(-1)
    with pytest.raises(ValueError, match="signed"):
        to_unsigned64(2**63)


@given(UINT64)
def test_signed_round_trip(u: int) -> None:
    s = to_signed64(u)
    assert -(2**63) <= s < 2**63
    assert to_unsigned64(s) == u


@given(UINT64, UINT64)
def test_hamming_is_the_same_on_signed_and_unsigned_values(a: int, b: int) -> None:
    expected = bin(a ^ b).count("1")
    assert hamming(a, b) == expected
    assert hamming(to_signed64(a), to_signed64(b)) == expected
    assert hamming(to_signed64(a), b) == expected


@given(UINT64)
def test_bands_slice_the_hash_most_significant_first(u: int) -> None:
    b0, b1, b2, b3 = bands(u)
    assert all(0 <= band <= 0xFFFF for band in (b0, b1, b2, b3))
    assert (b0 << 48) | (b1 << 32) | (b2 << 16) | b3 == u
    assert bands(to_signed64(u)) == bands(u)


@given(INT64)
def test_bands_equal_the_generated_column_formula_on_the_signed_value(s: int) -> None:
    # Python's >> on a negative int is an arithmetic shift, like PostgreSQL's and SQLite's
    # on a signed bigint: this is exactly what the generated columns compute
    sql = tuple((s >> shift) & 65535 for shift in (48, 32, 16, 0))

    assert bands(to_unsigned64(s)) == sql


@given(a=UINT64, data=st.data())
def test_band_probes_find_every_hash_within_max_distance(a: int, data: st.DataObject) -> None:
    # given b made by flipping at most max_distance bits of a
    max_distance = data.draw(st.integers(min_value=0, max_value=15), label="max_distance")
    flips = data.draw(
        st.lists(st.integers(0, 63), unique=True, max_size=max_distance), label="flips"
    )
    b = a
    for bit in flips:
        b ^= 1 << bit
    assert hamming(a, b) <= max_distance

    # when the database looks for candidates with a's probes
    probes = band_probes(a, max_distance)

    # then at least one of b's bands is among them (the exact distance is checked after)
    assert any(band in probe for band, probe in zip(bands(b), probes, strict=True))


@pytest.mark.parametrize("max_distance", range(16))
def test_band_probes_survive_flips_spread_evenly_over_the_bands(max_distance: int) -> None:
    # the worst case for pigeonhole: the flips shared out as evenly as the bands allow
    a = 0x0123_4567_89AB_CDEF
    b = a
    for i in range(max_distance):
        band, offset = i % 4, i // 4
        b ^= 1 << (band * 16 + offset)

    probes = band_probes(a, max_distance)

    assert hamming(a, b) == max_distance
    assert any(band in probe for band, probe in zip(bands(b), probes, strict=True))


@pytest.mark.parametrize(
    ("max_distance", "per_band"), [(0, 1), (3, 1), (4, 17), (7, 17), (8, 137), (11, 137), (15, 697)]
)
def test_band_probe_counts(max_distance: int, per_band: int) -> None:
    probes = band_probes(0xFEDC_BA98_7654_3210, max_distance)

    assert [len(p) for p in probes] == [per_band] * 4
    assert all(len(set(p)) == len(p) for p in probes)
    assert all(0 <= value <= 0xFFFF for p in probes for value in p)
    assert [p[0] for p in probes] == list(bands(0xFEDC_BA98_7654_3210))


def test_band_probes_refuse_radii_that_are_no_longer_an_index_lookup() -> None:
    with pytest.raises(ValueError, match="too many probes"):
        band_probes(0, 16)
    with pytest.raises(ValueError, match=">= 0"):
        band_probes(0, -1)
