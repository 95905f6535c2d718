"""catalog.imaging on real photos (scikit-image's samples) and the odd inputs cameras and CMS
exports produce: width rules, EXIF orientation, CMYK, alpha, grayscale, 16-bit, placeholders."""

import base64
import io

import numpy as np
import pytest
import thash
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageCms
from skimage import data as skdata

from catalog.imaging import (
    WIDTHS,
    RenderError,
    average_color,
    loader_classes,
    render,
    render_cost,
    upright_size,
)
from catalog.storage import rendition_key, sha1_of_image_key


def jpeg(image: Image.Image, **save) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, **save)
    return out.getvalue()


def png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def photo(name: str = "astronaut", size: tuple[int, int] | None = None) -> Image.Image:
    image = Image.fromarray(getattr(skdata, name)()).convert("RGB")
    return image.resize(size, Image.Resampling.BICUBIC) if size else image


def decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    assert image.format == "WEBP"
    image.load()
    return image


def sizes(rendered) -> list[tuple[int, int]]:
    return [(r.width, r.height) for r in rendered.renditions]


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((2000, 3000), [(400, 600), (1200, 1800)]),  # portrait runway photo
        ((3000, 2000), [(400, 267), (1200, 800)]),  # landscape
        ((1200, 900), [(400, 300), (1200, 900)]),  # exactly the width: no upscale, kept
        ((1199, 1600), [(400, 534)]),  # narrower than 1200: no 1200 rendition
        ((400, 400), [(400, 400)]),
        ((399, 2000), []),  # narrower than every width: none at all
    ],
)
def test_every_width_the_image_reaches_and_none_it_does_not(size, expected):
    rendered = render(jpeg(photo(size=size)))

    assert sizes(rendered) == expected
    for rendition in rendered.renditions:
        assert decoded(rendition.data).size == (rendition.width, rendition.height)
    # A placeholder and a colour even when there is no rendition.
    assert rendered.placeholder and rendered.color.startswith("#")


def test_renditions_come_out_ascending_and_look_like_the_photo():
    original = photo("chelsea", (2400, 1600))
    rendered = render(jpeg(original))

    assert [r.width for r in rendered.renditions] == sorted(WIDTHS)
    small = np.asarray(decoded(rendered.renditions[0].data).convert("RGB"), dtype=np.float64)
    expected = np.asarray(original.resize((400, 267), Image.Resampling.LANCZOS), dtype=np.float64)
    assert np.abs(small - expected).mean() < 6  # same picture, not merely the same size


def test_exif_orientation_is_applied():
    # Given a landscape-stored JPEG whose EXIF says "rotate 90° clockwise to view" (6)
    stored = photo(size=(1800, 1200))
    exif = stored.getexif()
    exif[0x0112] = 6
    data = jpeg(stored, exif=exif.tobytes())

    rendered = render(data)

    # Then the renditions are portrait, as viewers show it, and carry no orientation tag
    assert upright_size(data) == (1200, 1800)
    assert sizes(rendered) == [(400, 600), (1200, 1800)]
    upright = stored.transpose(Image.Transpose.ROTATE_270).resize((400, 600))
    shown = decoded(rendered.renditions[0].data)
    assert shown.getexif().get(0x0112) in (None, 1)
    diff = np.abs(np.asarray(shown.convert("RGB"), float) - np.asarray(upright, float)).mean()
    assert diff < 8


def test_a_cmyk_jpeg_comes_out_srgb():
    original = photo("coffee", (900, 600))
    rendered = render(jpeg(original.convert("CMYK")))

    assert sizes(rendered) == [(400, 267)]
    shown = decoded(rendered.renditions[0].data)
    assert shown.mode == "RGB"
    expected = np.asarray(original.resize((400, 267)), float)
    # Not inverted, not channel-swapped: close to the RGB picture it was made from.
    assert np.abs(np.asarray(shown, float) - expected).mean() < 40


def test_an_embedded_profile_is_applied_and_not_carried_over():
    # The pixels come out in sRGB, which a WebP says by carrying no profile at all.
    original = photo("rocket", (800, 600))
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    rendered = render(jpeg(original, icc_profile=profile))

    shown = decoded(rendered.renditions[0].data)
    assert shown.mode == "RGB"
    assert "icc_profile" not in shown.info  # sRGB, said by having none


def test_a_png_with_alpha_keeps_its_alpha():
    pixels = np.zeros((600, 800, 4), np.uint8)
    pixels[..., 0] = 200
    pixels[..., 3] = np.linspace(0, 255, 800).astype(np.uint8)  # transparent -> opaque
    rendered = render(png(Image.fromarray(pixels, "RGBA")))

    shown = decoded(rendered.renditions[0].data)
    assert shown.mode == "RGBA"
    alpha = np.asarray(shown)[..., 3]
    assert alpha[:, :20].mean() < 20 and alpha[:, -20:].mean() > 235
    assert base64.b64decode(rendered.placeholder)[2] & 0x80  # ThumbHash's has-alpha bit


def test_grayscale_and_16_bit_grayscale():
    gray = Image.fromarray(skdata.camera()).resize((800, 800))
    sixteen = Image.fromarray(
        (np.linspace(0, 65535, 600 * 900).reshape(600, 900)).astype(np.uint16)
    )
    assert sixteen.mode == "I;16"

    for data in (jpeg(gray), png(gray), png(sixteen)):
        rendered = render(data)
        assert rendered.renditions and decoded(rendered.renditions[0].data).mode == "RGB"
    # 16 bits scaled to 8, not clipped at 255: a linear ramp averages mid-grey.
    assert render(png(sixteen)).color in {"#7f7f7f", "#808080"}


@pytest.mark.parametrize(("size", "landscape"), [((2000, 3000), False), ((3000, 1000), True)])
def test_the_placeholder_decodes_to_the_right_aspect(size, landscape):
    rendered = render(jpeg(photo(size=size)))

    hashed = list(base64.b64decode(rendered.placeholder))
    width, height, _ = thash.thumb_hash_to_rgba(hashed)
    assert (width > height) is landscape
    assert abs(width / height - size[0] / size[1]) < 0.35 * size[0] / size[1]


def test_the_colour_is_the_average_of_the_picture():
    red = Image.new("RGB", (800, 600), (200, 30, 40))
    assert render(jpeg(red)).color in {
        f"#{r:02x}{g:02x}{b:02x}"
        for r in (199, 200, 201)
        for g in (29, 30, 31)
        for b in (39, 40, 41)
    }  # noqa: E501
    # Transparent pixels do not count.
    rgba = np.zeros((10, 10, 4), np.uint8)
    rgba[:5, :, :] = (0, 0, 255, 255)
    rgba[5:, :, :] = (255, 0, 0, 0)
    assert average_color(rgba) == "#0000ff"


def test_the_same_original_gives_the_same_bytes_and_keys():
    data = jpeg(photo(size=(1600, 1200)))

    first, second = render(data), render(data)

    assert [r.data for r in first.renditions] == [r.data for r in second.renditions]
    assert first.placeholder == second.placeholder
    sha1 = "0123456789abcdef" * 2 + "01234567"
    assert rendition_key(sha1=sha1, width=400) == f"renditions/01/{sha1}/400.webp"


@given(
    sha1=st.text(alphabet="0123456789abcdef", min_size=40, max_size=40),
    width=st.sampled_from(WIDTHS),
)
def test_keys_depend_on_the_sha1_width_and_format_only(sha1, width):
    key = rendition_key(sha1=sha1, width=width)
    assert key == rendition_key(sha1=sha1, width=width)
    assert sha1 in key and key.endswith(f"/{width}.webp")
    assert sha1_of_image_key(f"images/{sha1[:2]}/{sha1}.jpg") == sha1


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not an image at all",
        b'<svg xmlns="http://www.w3.org/2000/svg" width="900" height="900"></svg>',
    ],
)
def test_what_is_not_a_jpeg_png_webp_or_gif_is_refused(data):
    with pytest.raises(RenderError):
        render(data)


def test_too_many_pixels_is_refused_before_decoding():
    with pytest.raises(RenderError, match="more than"):
        render(jpeg(photo(size=(1000, 1000))), max_pixels=999_999)


def test_every_format_ingest_accepts_has_a_loader_in_this_libvips():
    # The classes are the build's own (GIF: VipsForeignLoadNsgifBuffer in libvips >= 8.11).
    classes = loader_classes()
    assert set(classes) == {"JPEG", "PNG", "WEBP", "GIF"}
    assert all(classes.values()), classes


def test_a_gif_is_rendered():
    out = io.BytesIO()
    photo("chelsea", (900, 600)).save(out, "GIF")

    rendered = render(out.getvalue())

    assert sizes(rendered) == [(400, 267)]
    assert decoded(rendered.renditions[0].data).mode == "RGB"


def test_loaders_other_than_the_four_stay_blocked():
    out = io.BytesIO()
    photo("chelsea", (900, 600)).save(out, "TIFF")
    with pytest.raises(RenderError, match="not an image we render"):
        render(out.getvalue())


# --- the decode budget ----------------------------------------------------------------------------


def header_of(data: bytes):
    import pyvips

    return pyvips.Image.new_from_buffer(data, "", access="sequential")


def cost_of(data: bytes) -> int:
    return render_cost(header_of(data), data)


def test_the_cost_of_a_render_follows_what_its_decoder_holds():
    import pyvips

    image = (pyvips.Image.black(1600, 1200, bands=3) + [10, 200, 30]).cast("uchar")
    pixels = 1600 * 1200
    costs = {
        "baseline": cost_of(image.jpegsave_buffer()),
        "progressive 4:2:0": cost_of(image.jpegsave_buffer(interlace=True)),
        "progressive 4:4:4": cost_of(image.jpegsave_buffer(interlace=True, subsample_mode="off")),
        "png": cost_of(image.pngsave_buffer()),
        "interlaced png": cost_of(image.pngsave_buffer(interlace=True)),
        "gif": cost_of(image.gifsave_buffer()),
        "webp": cost_of(image.webpsave_buffer()),
        "lossless webp": cost_of(image.webpsave_buffer(lossless=True)),
    }

    # Every coefficient of a file of several scans: 1.5 samples a pixel at 4:2:0, 3 at 4:4:4,
    # two bytes each; an interlaced PNG whole (3 bytes a pixel); a GIF's canvas and its copy;
    # a lossless WebP's canvas, where a lossy one streams.
    assert costs["progressive 4:2:0"] - costs["baseline"] == 2 * 1.5 * pixels
    assert costs["progressive 4:4:4"] - costs["baseline"] == 2 * 3 * pixels
    assert costs["interlaced png"] > costs["png"] + 3 * pixels
    assert costs["gif"] > 6 * pixels
    assert costs["lossless webp"] - costs["webp"] == 4 * pixels


def test_a_render_holds_its_cost_in_the_budget_while_it_decodes():
    from catalog.memory import DecodeBudget

    data = jpeg(photo(size=(1300, 900)), progressive=True)
    budget = DecodeBudget(1024**3)
    held = []
    real_reserve = budget.reserve

    def reserve(cost):
        held.append(cost)
        return real_reserve(cost)

    budget.reserve = reserve

    rendered = render(data, budget=budget)

    assert sizes(rendered) == [(400, 277), (1200, 831)]
    assert held == [cost_of(data)]
    assert budget.reserved == 0


def test_a_render_that_would_exceed_the_whole_budget_is_refused_before_decoding():
    from catalog.memory import MIB, DecodeBudget

    out = io.BytesIO()
    Image.new("P", (4000, 4000), 0).save(out, "GIF")
    budget = DecodeBudget(64 * MIB)

    with pytest.raises(RenderError) as refused:
        render(out.getvalue(), budget=budget)

    assert refused.value.reason == (
        "rendering this 4000x4000 GIF would take about 156 MiB of memory, more than the "
        "64 MiB decode budget"
    )
    assert budget.reserved == 0
