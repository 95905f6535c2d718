"""The admin at 1280 px, the narrow end of an editor's screen (headless Debian Chromium through
Playwright, as the other browser tests): with the admin's menu and the filters open, the
review queue and the ingest jobs list fit without a horizontal scroll and clip no cell; a
tile's text is at least 12 px and its links stand apart on one line each; the take-down
pages' checkbox, help and Cancel do not overlap or sit askew; the keys list says whether the
single-key shortcuts are on; a click on a picture opens the full-size view. Each check reads
the page's own layout (bounding boxes, scroll widths, computed styles)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from catalog.models import RunwayImage
from tests.factories import BrandFactory, IngestJobFactory
from tests.review.support import log_in, runway_with_looks

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTH = 1280
MIN_FONT_PX = 12

# Elements of `selector` whose content is wider than their box (clipped, or scrolled).
CLIPPED = """selector => [...document.querySelectorAll(selector)]
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => (e.className || e.tagName) + ": " + e.textContent.trim().slice(0, 40))"""

# Text of `selector` set smaller than the minimum (each element that holds text itself).
SMALL_TEXT = """([selector, minimum]) => [...document.querySelectorAll(selector)]
    .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .filter(e => parseFloat(getComputedStyle(e).fontSize) < minimum)
    .map(e => `${e.className} ${getComputedStyle(e).fontSize}: ${e.textContent.trim()}`)"""


def boxes_overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.fixture
def page(browser_page, live_server):
    browser_page.set_viewport_size({"width": WIDTH, "height": 900})
    log_in(browser_page, live_server, "anna")
    return browser_page


@pytest.fixture
def queue():
    """A queue as editors see it: long titles, a repeated album, near-duplicates."""
    acme = BrandFactory(name="Acme Studios International")
    original = runway_with_looks(
        6, brand=acme, title="Acme Studios Fall/Winter 2024 Ready-to-Wear", season_code="FW24"
    )
    original.status = "published"
    original.save()
    again = runway_with_looks(
        6, brand=acme, title="Acme Studios Autumn/Winter 2024 Ready-to-Wear", season_code="AW24"
    )
    for image, twin in zip(
        again.images.order_by("sort_order"), original.images.order_by("sort_order"), strict=True
    ):
        RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=twin)
    for n in range(4):
        runway_with_looks(2, brand=acme, title=f"Acme Studios Resort 202{n} Collection Preview")
    return original, again


def url(live_server, name: str, *args) -> str:
    return live_server.url + reverse(f"admin:{name}", args=args)


def fits(page) -> None:
    """No horizontal scroll on the page or in the results, no clipped cell."""
    widths = page.evaluate(
        """() => {
            const root = document.documentElement, results = document.querySelector('.results');
            return {page: [root.scrollWidth, root.clientWidth],
                    results: [results.scrollWidth, results.clientWidth]};
        }"""
    )
    assert widths["page"][0] <= widths["page"][1], widths
    columns = page.evaluate(
        """[...document.querySelectorAll('#result_list thead th')]
            .map(th => `${th.className} ${th.getBoundingClientRect().width}`)"""
    )
    assert widths["results"][0] <= widths["results"][1], (widths, columns)
    assert page.evaluate(CLIPPED, "#result_list td, #result_list th") == []
    # Both sidebars are open: the admin's menu and the filters.
    expect(page.locator("#nav-sidebar")).to_be_visible()
    expect(page.locator("#changelist-filter")).to_be_visible()


def test_the_queue_fits_1280_px_with_both_sidebars_open(page, live_server, queue):
    page.goto(url(live_server, "catalog_runway_changelist"))
    expect(page.locator("#result_list tbody tr")).to_have_count(5)

    fits(page)
    # A title wraps at most onto a second line, never a word a line.
    heights = page.evaluate(
        """() => [...document.querySelectorAll('.review-album-title')].map(t => {
            const line = parseFloat(getComputedStyle(t).lineHeight) || 18;
            return Math.round(t.getBoundingClientRect().height / line);
        })"""
    )
    assert max(heights) <= 2, heights
    # The time received is on one line.
    received = page.locator("td.field-received_column span").first
    assert received.evaluate("e => e.getClientRects().length") == 1
    assert page.evaluate(SMALL_TEXT, ["#result_list td *", MIN_FONT_PX]) == []

    # The "All" tab has a status column too, and fits all the same.
    page.goto(url(live_server, "catalog_runway_changelist") + "?status=all")
    expect(page.locator("#result_list tbody tr")).to_have_count(6)
    expect(page.locator("td.field-status_column").first).to_be_visible()
    fits(page)


def test_the_jobs_list_fits_1280_px_with_both_sidebars_open(page, live_server, queue):
    _, again = queue
    for n in range(6):
        IngestJobFactory(
            status="failed" if n % 2 else "succeeded",
            reason="unknown_brand" if n % 2 else "",
            attempts=1 + n % 3,
            runway=again if n % 2 == 0 else None,
            payload={
                "title": "Acme Studios Autumn/Winter 2024 Ready-to-Wear",
                "brand": "Acme Studios International",
                "season_code": "AW24",
            },
        )
    page.goto(url(live_server, "ingest_ingestjob_changelist"))
    expect(page.locator("#result_list tbody tr")).to_have_count(6)

    fits(page)
    records = page.locator("td.field-record_link a")
    for index in range(records.count()):
        assert records.nth(index).evaluate("e => e.getClientRects().length") == 1


def test_tiles_are_readable_and_their_links_apart(page, live_server, queue):
    _, again = queue
    page.goto(url(live_server, "catalog_runway_change", again.pk))
    tile = page.locator(".review-tile").first
    expect(tile.locator(".review-tile-actions")).to_be_visible()  # its buttons are in

    assert page.evaluate(SMALL_TEXT, ["#images .review-tile *", MIN_FONT_PX]) == []
    compare, take_down = tile.locator(".review-compare-link"), tile.locator(".review-takedown-link")
    a, b = compare.bounding_box(), take_down.bounding_box()
    assert not boxes_overlap(a, b), (a, b)
    # apart: a gap between them on one line, or each on its own line
    same_line = abs(a["y"] - b["y"]) < 2
    assert (b["x"] - (a["x"] + a["width"]) >= 6) if same_line else b["y"] >= a["y"] + a["height"]
    assert take_down.evaluate("e => e.getClientRects().length") == 1  # "Take down…" never wraps
    assert compare.evaluate("e => e.getClientRects().length") == 1


def test_the_album_take_down_page_keeps_its_parts_apart(page, live_server, queue):
    _, again = queue
    page.goto(url(live_server, "catalog_runway_takedown", again.pk))

    checkbox = page.get_by_label("Also delete the album")
    label = page.locator(".review-checkbox-row label").bounding_box()
    help_text = page.locator("#id_delete_help").bounding_box()
    assert not boxes_overlap(label, help_text), (label, help_text)
    assert checkbox.get_attribute("aria-describedby") == "id_delete_help"
    cancel_is_a_button(page)


def test_the_image_take_down_page_has_a_cancel_button_and_no_stray_bullet(page, live_server, queue):
    _, again = queue
    image = again.images.order_by("sort_order").first()
    page.goto(url(live_server, "catalog_runway_takedownimage", again.pk, image.pk))

    bullets = page.evaluate(
        """[...document.querySelectorAll('#content-main li')]
            .map(li => getComputedStyle(li).listStyleType)"""
    )
    assert bullets and set(bullets) == {"none"}
    cancel_is_a_button(page)


def cancel_is_a_button(page) -> None:
    """Cancel: a button of the row as tall as the submit, its text centred, not underlined."""
    submit, cancel = (
        page.locator(".submit-row input[type=submit]"),
        page.get_by_role("link", name="Cancel"),
    )
    s, c = submit.bounding_box(), cancel.bounding_box()
    assert abs(s["y"] - c["y"]) <= 1 and abs(s["height"] - c["height"]) <= 1, (s, c)
    assert cancel.evaluate("e => getComputedStyle(e).textDecorationLine") == "none"
    text = cancel.evaluate(
        """e => { const r = document.createRange(); r.selectNodeContents(e);
                  const t = r.getBoundingClientRect(), b = e.getBoundingClientRect();
                  return [t.top - b.top, b.bottom - t.bottom]; }"""
    )
    assert abs(text[0] - text[1]) <= 2, text  # as much room above the text as below


def test_the_keys_list_says_whether_single_keys_are_on(page, live_server, queue):
    _, again = queue
    page.goto(url(live_server, "catalog_runway_change", again.pk))
    page.get_by_role("button", name="Keys").click()
    state = page.locator("#review-keys #review-single-keys-state")

    expect(state).to_have_text("on")
    page.get_by_label("Single-key shortcuts").uncheck()
    expect(state).to_have_text("off")
    page.reload()
    page.get_by_role("button", name="Keys").click()
    expect(page.locator("#review-keys #review-single-keys-state")).to_have_text("off")


def test_a_click_on_a_picture_opens_the_full_size_view(page, live_server, queue):
    _, again = queue
    second = again.images.order_by("sort_order")[1]
    page.goto(url(live_server, "catalog_runway_change", again.pk))

    page.locator(f"#image-{second.pk} img").click()

    lightbox = page.locator("#review-lightbox")
    expect(lightbox).to_be_visible()
    expect(lightbox.locator(".review-lightbox-caption")).to_have_text("Image 2")
    # the picture the view shows (here the small original itself: narrower than 400 px, it has
    # no rendition), and the link that opens the original
    expect(lightbox.locator("img")).to_have_js_property(
        "src", f"{live_server.url}/admin/media/{second.storage_key}"
    )
    expect(lightbox.get_by_role("link", name="Open the original")).to_be_visible()
    assert len(page.context.pages) == 1  # no tab opened
