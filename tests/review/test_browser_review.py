"""Fast review in a real browser (headless Debian Chromium through Playwright, as
tests/scenarios/test_editor_in_browser.py drives it): a keyboard-only review of a 60-look
runway, asserted step by step; the same result with the mouse; the figures of the 60- and
500-image record pages.

The figures (key presses, clicks, page loads, time to interactive, image bytes) are printed
(`-s` shows them) and quoted in docs/editors.md; nothing here asserts a time (the machine is
shared), only counts and what the page and the database hold."""

from __future__ import annotations

import json
import statistics
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from catalog.models import Runway, RunwayImage, StreetSnap, StreetSnapImage
from review.models import ReviewEvent
from tests.factories import BrandFactory, StreetSnapFactory, distinct_photo
from tests.review.support import log_in, runway_with_looks

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def street_album(count: int, **fields) -> StreetSnap:
    """A street album of `count` images: main, detail, main, detail, ..."""
    return StreetSnapFactory(
        images=[{"photo": distinct_photo(n)} for n in range(count)],
        images__details=True,
        images__width=300,
        images__height=320,
        images__rendition_status="done",
        **fields,
    )


class Counter:
    """Key presses, clicks and page loads of one flow."""

    def __init__(self, page):
        page.wait_for_load_state("load")  # the page the flow starts on is not one of its loads
        self.page, self.keys, self.clicks, self.loads = page, 0, 0, 0
        page.on("load", self._loaded)

    def _loaded(self, _page) -> None:
        self.loads += 1

    def press(self, key: str) -> None:
        self.keys += 1
        self.page.keyboard.press(key)

    def click(self, locator) -> None:
        self.clicks += 1
        locator.click()


def focused_number(page) -> str:
    return page.locator(".review-tile[aria-current=true]").get_attribute("data-number")


def page_figures(page) -> dict:
    """Time to interactive (DOMContentLoaded ended: review.js has bound its keys), load, and
    the image bytes the page fetched, from the browser's own timings."""
    return page.evaluate(
        """() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const images = performance.getEntriesByType("resource")
            .filter(r => r.initiatorType === "img");
        return {
            first_byte_ms: Math.round(nav.responseStart),
            html_done_ms: Math.round(nav.responseEnd),
            interactive_ms: Math.round(nav.domContentLoadedEventEnd),
            load_ms: Math.round(nav.loadEventEnd),
            html_bytes: nav.encodedBodySize,
            images_fetched: images.length,
            image_bytes: images.reduce((sum, r) => sum + r.encodedBodySize, 0),
            tiles: document.querySelectorAll(".review-tile").length,
        };
    }"""
    )


def queue_link(runway_admin_list: str, query: dict) -> str:
    return f"{runway_admin_list}?{urlencode(query)}"


def test_a_keyboard_only_review_of_a_60_look_show(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    acme, other = BrandFactory(name="Acme", slug="acme"), BrandFactory(name="Other")
    # The queue anna works: Acme's pending shows, oldest first. The unfiltered queue's
    # oldest album after the first is another brand's, which she must not land on.
    # Its images' ids as long as in an archive of ten million images (a tile names its id):
    # the page's height must not depend on how many rows earlier tests made.
    show = runway_with_looks(60, brand=acme, title="Acme Fall 60 looks", first_id=10_000_000)
    runway_with_looks(2, brand=other, title="Other brand, older")
    following = runway_with_looks(3, brand=acme, title="Acme Resort")
    changelist = reverse("admin:catalog_runway_changelist")
    filters = {"status": "pending", "brand__id__exact": acme.pk}

    # She opens the first album of the filtered list.
    page.goto(live_server.url + queue_link(changelist, filters))
    expect(page.locator("#result_list tbody tr")).to_have_count(2)
    page.get_by_role("link", name="Acme Fall 60 looks").click()
    expect(page.locator(".review-tile")).to_have_count(60)
    expect(page.locator("#review-queue-position")).to_have_text("1 of 2 pending in this queue")
    counter = Counter(page)
    images = list(show.images.order_by("sort_order"))

    # The grid: 60 looks side by side, about three screens at 1400x1000.
    # (measured with every group laid out: off-screen ones otherwise count as an estimate)
    height = page.evaluate(
        """() => {
        const groups = document.querySelectorAll(".review-group");
        groups.forEach(g => g.style.contentVisibility = "visible");
        const height = document.documentElement.scrollHeight;
        groups.forEach(g => g.style.contentVisibility = "");
        return height;
    }"""
    )
    assert height <= 3 * 1000, height
    print(f"\nFIGURES 60-look show: {height} px tall at 1400x1000 ({height / 1000:.1f} screens)")
    first, fifth = page.locator(".review-tile").nth(0), page.locator(".review-tile").nth(4)
    assert first.bounding_box()["y"] == fifth.bounding_box()["y"]  # on one row

    # → focuses the first image, → again the second; aria-current follows. (The counter
    # counts the keys of the flow itself: 3 deletes, a cover, approve; the keys that only
    # show something along the way are pressed uncounted.)
    counter.press("ArrowRight")
    assert focused_number(page) == "1"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert focused_number(page) == "3"
    page.keyboard.press("ArrowLeft")
    assert focused_number(page) == "2"
    counter.keys += 1  # one → from image 1 to image 2
    expect(page.locator(".review-tile[aria-current=true]")).to_have_count(1)

    # Enter shows it full size; Escape closes it.
    page.keyboard.press("Enter")
    expect(page.locator("#review-lightbox")).to_be_visible()
    # (a photo narrower than 400 px: shown as it is, here as in its tile)
    expect(page.locator("#review-lightbox img")).to_have_js_property(
        "src", f"{live_server.url}/admin/media/{images[1].storage_key}"
    )
    page.keyboard.press("Escape")
    expect(page.locator("#review-lightbox")).to_be_hidden()

    # ? lists the keys.
    page.keyboard.press("?")
    expect(page.locator("#review-keys")).to_contain_text("skip to the next album")
    page.keyboard.press("Escape")

    # x deletes the focused image after a confirmation that Enter accepts: images 2, 3, 4.
    for number in (2, 3, 4):
        assert focused_number(page) == str(number)
        counter.press("x")
        expect(page.locator("#review-confirm")).to_be_visible()
        expect(page.locator("#review-confirm")).to_contain_text(f"Delete image {number} ")
        counter.press("Enter")
        expect(page.locator(f"#image-{images[number - 1].pk}")).to_have_count(0)
        expect(page.locator(".messagelist")).to_contain_text(f"Deleted image {number} ")
        # The focus moves to the image that took its place.
        assert focused_number(page) == str(number + 1)
    expect(page.locator(".review-tile")).to_have_count(57)
    expect(page.locator("#review-image-total")).to_have_text("57")

    # Escape in the dialog cancels: nothing deleted.
    page.keyboard.press("x")
    page.keyboard.press("Escape")
    expect(page.locator(".review-tile")).to_have_count(57)

    # c makes the focused image (5) the cover.
    counter.press("c")
    expect(page.locator(f"#image-{images[4].pk}.is-cover")).to_have_count(1)
    expect(page.locator(".messagelist")).to_contain_text("Image 5 (id")

    # Keys never fire while typing: an x in the title is a letter of the title.
    page.locator("#id_title").focus()
    page.keyboard.press("End")
    page.keyboard.press("x")
    expect(page.locator(".review-tile")).to_have_count(57)
    expect(page.locator("#id_title")).to_have_value("Acme Fall 60 looksx")
    page.keyboard.press("Backspace")
    page.keyboard.press("Escape")  # out of the field

    # a approves and opens the next album of her queue, not the unfiltered one's.
    assert counter.loads == 0  # every step so far stayed on the page
    counter.press("a")
    expect(page.locator(".messagelist")).to_contain_text(
        "Approved and published “Acme Fall 60 looks”"
    )
    expect(page.locator("#id_title")).to_have_value("Acme Resort")
    expect(page.locator("#review-queue-position")).to_have_text("1 of 1 pending in this queue")
    page.wait_for_load_state("load")
    assert counter.loads == 1
    assert "brand__id__exact" in page.url

    show.refresh_from_db()
    assert (show.status, show.reviewer, show.image_count, show.cover_id) == (
        "published",
        "anna",
        57,
        images[4].pk,
    )
    assert set(show.images.filter(deleted_at__isnull=False).values_list("pk", flat=True)) == {
        images[1].pk,
        images[2].pk,
        images[3].pk,
    }
    keyboard = {"keys": counter.keys, "loads": counter.loads}
    assert keyboard == {"keys": 10, "loads": 1}  # → →, 3 × (x Enter), c, a

    # r rejects the next one: the reason has the focus, Enter confirms; then the list.
    counter.press("r")
    expect(page.locator("#id_reason")).to_be_focused()
    page.keyboard.type("Wrong season")
    counter.press("Enter")
    expect(page.locator(".messagelist")).to_contain_text("Rejected “Acme Resort”: Wrong season")
    following.refresh_from_db()
    assert (following.status, following.reject_reason) == ("rejected", "Wrong season")
    assert list(ReviewEvent.objects.order_by("pk").values_list("action", flat=True)) == [
        "approve",
        "reject",
    ]
    print("\nFIGURES keyboard flow (3 deletes, cover, approve):", json.dumps(keyboard))


def test_the_same_review_with_the_mouse(live_server, browser_page):
    """The keyboard flow's result with the mouse on the new page, for the figures."""
    page = browser_page
    log_in(page, live_server, "bob")
    acme = BrandFactory(name="Acme", slug="acme")
    # Its images' ids as long as in an archive of ten million images (a tile names its id):
    # the page's height must not depend on how many rows earlier tests made.
    show = runway_with_looks(60, brand=acme, title="Acme Fall 60 looks", first_id=10_000_000)
    runway_with_looks(3, brand=BrandFactory(name="Other"), title="Other brand")
    runway_with_looks(3, brand=acme, title="Acme Resort")
    changelist = reverse("admin:catalog_runway_changelist")
    page.goto(live_server.url + queue_link(changelist, {"brand__id__exact": acme.pk}))
    page.get_by_role("link", name="Acme Fall 60 looks").click()
    counter = Counter(page)
    images = list(show.images.order_by("sort_order"))

    for image in images[1:4]:
        counter.click(page.locator(f"#image-{image.pk}").get_by_role("button", name="Delete"))
        counter.click(page.locator("#review-confirm .review-confirm-yes"))
        expect(page.locator(f"#image-{image.pk}")).to_have_count(0)
    counter.click(page.locator(f"#image-{images[4].pk}").get_by_role("button", name="Cover"))
    expect(page.locator(f"#image-{images[4].pk}.is-cover")).to_have_count(1)
    counter.click(
        page.locator(".submit-row").first.get_by_role("button", name="Approve and publish")
    )
    expect(page.locator("#id_title")).to_have_value("Acme Resort")
    page.wait_for_load_state("load")
    mouse = {"clicks": counter.clicks, "loads": counter.loads}
    print("\nFIGURES mouse flow (3 deletes, cover, approve):", json.dumps(mouse))
    assert mouse == {"clicks": 8, "loads": 1}


def test_street_keys_attach_and_detach(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    snap = street_album(4, title="Street keys")  # main, detail, main, detail
    first, _, second, _ = snap.images.order_by("sort_order")
    page.goto(live_server.url + reverse("admin:catalog_streetsnap_change", args=[snap.pk]))
    expect(page.locator(".review-tile")).to_have_count(4)

    for _ in range(3):
        page.keyboard.press("ArrowRight")  # image 3: the second main image
    assert focused_number(page) == "3"
    page.keyboard.press("p")
    expect(page.locator(".messagelist")).to_contain_text("Image 3 (id")
    expect(page.locator(".messagelist")).to_contain_text("is now a detail of image 1")
    assert StreetSnapImage.objects.get(pk=second.pk).parent_id == first.pk
    assert focused_number(page) == "3"
    page.keyboard.press("d")
    expect(page.locator(".messagelist")).to_contain_text("is now a main image")
    assert StreetSnapImage.objects.get(pk=second.pk).parent_id is None

    # Ctrl+S saves, from inside a field too; the page comes back with the album as saved.
    page.locator("#id_title").fill("Street keys, saved")
    page.keyboard.press("Control+s")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    expect(page.locator("#id_title")).to_have_value("Street keys, saved")
    assert StreetSnap.objects.get(pk=snap.pk).title == "Street keys, saved"

    # s skips to the next album of the queue without deciding (no other: the list).
    page.keyboard.press("s")
    expect(page.locator(".messagelist")).to_contain_text("No other album in this queue.")
    assert StreetSnap.objects.get(pk=snap.pk).status == "pending"


def test_unsaved_edits_are_kept_unless_the_editor_leaves_them_in_the_pages_dialog(
    live_server, browser_page
):
    page = browser_page
    log_in(page, live_server, "anna")
    first = runway_with_looks(2, brand=BrandFactory(name="Acme"), title="Edited")
    runway_with_looks(2, brand=BrandFactory(name="Other"), title="Next one")
    page.goto(live_server.url + change_url(first))
    page.locator("#id_title").fill("Edited, not saved")
    page.keyboard.press("Escape")  # out of the field

    # s would leave the page: the page's own dialog asks first; "Stay" keeps the edit
    page.keyboard.press("s")
    dialog = page.locator("#review-confirm")
    expect(dialog).to_contain_text("You have unsaved changes to the fields above.")
    dialog.get_by_role("button", name="Stay on this page").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#id_title")).to_have_value("Edited, not saved")

    # and "Leave without saving" goes on to the next album, the edit dropped
    page.keyboard.press("s")
    dialog.get_by_role("button", name="Leave without saving").click()
    expect(page.locator("#id_title")).to_have_value("Next one")
    assert Runway.objects.get(pk=first.pk).title == "Edited"


def test_a_tiles_delete_names_the_image_by_its_data_not_its_text(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(2, brand=BrandFactory(name="Acme"), title="Ids")
    second = runway.images.order_by("sort_order")[1]
    page.goto(live_server.url + change_url(runway))
    # The tile's visible text no longer names its id: the question still does
    page.locator(f"#image-{second.pk} .review-tile-meta").evaluate("meta => meta.textContent = ''")

    page.locator(f"#image-{second.pk}").get_by_role("button", name="Delete").click()

    expect(page.locator("#review-confirm")).to_contain_text(
        f"Delete image 2 (id {second.pk}) from this album?"
    )


def test_review_duplicates_from_the_keyboard(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(6, brand=BrandFactory(name="Acme"), title="Twins")
    images = list(runway.images.order_by("sort_order"))
    for twin in (images[2], images[4]):
        RunwayImage.objects.filter(pk=twin.pk).update(is_duplicate=True, dup_of=images[0])
    page.goto(live_server.url + change_url(runway))

    # v on a near-duplicate opens the compare view; the grid's link steps through them all
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("v")
    expect(page.locator(".review-compare-side")).to_have_count(2)
    expect(page.locator("#compare-1 h2")).to_contain_text("This image: image 3")
    page.go_back()
    page.locator("#review-duplicates").click()
    expect(page.locator("#review-dup-position")).to_have_text("Near-duplicate 1 of 2")
    page.wait_for_load_state("load")  # its keys work once its script has run
    boxes = [page.locator(f"#compare-{n} img").bounding_box() for n in (1, 2)]
    assert (boxes[0]["width"], boxes[0]["height"]) == (boxes[1]["width"], boxes[1]["height"])

    # x: delete this one (Enter confirms), on to the next; → keeps the last, back to the album
    page.keyboard.press("x")
    expect(page.locator("#review-confirm")).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator(".messagelist")).to_contain_text("Deleted image 3 (id")
    expect(page.locator("#review-dup-position")).to_have_text("Near-duplicate 1 of 1")
    expect(page.locator("#compare-1 h2")).to_contain_text("This image: image 5")
    page.keyboard.press("ArrowRight")
    expect(page.locator(".review-tile")).to_have_count(5)
    assert RunwayImage.objects.get(pk=images[2].pk).deleted_at is not None
    assert RunwayImage.objects.get(pk=images[4].pk).deleted_at is None


def test_big_album_pages_are_interactive_fast(live_server, browser_page):
    """The 60-look runway and the 500-image street album, loaded in turns (three rounds, the
    median of each): time to interactive and image bytes, then a key and an image operation
    on the big one."""
    page = browser_page
    log_in(page, live_server, "anna")
    pages = {
        "60-look runway": runway_with_looks(60, brand=BrandFactory(name="Acme"), title="Show"),
        "500-image street album": street_album(500, title="Big street album"),
    }
    runs: dict[str, list[dict]] = {name: [] for name in pages}
    for _ in range(3):
        for name, record in pages.items():
            page.goto(live_server.url + change_url(record))
            expect(page.locator(".review-tile")).to_have_count(record.image_count)
            page.wait_for_load_state("load")
            runs[name].append(page_figures(page))
    figures = {}
    for name, measured in runs.items():
        figures[name] = {
            key: statistics.median(run[key] for run in measured)
            for key in ("first_byte_ms", "interactive_ms", "load_ms")
        }
        # What a first visit fetches (later rounds come from the browser's cache).
        figures[name].update(
            {key: measured[0][key] for key in ("html_bytes", "images_fetched", "image_bytes")}
        )
    big = figures["500-image street album"]
    big["interactive_vs_60"] = round(
        big["interactive_ms"] / figures["60-look runway"]["interactive_ms"], 2
    )
    print("\nFIGURES record pages:", json.dumps(figures))
    # Lazy: the big page fetched the pictures of its first screens, not all 500.
    assert big["images_fetched"] < 250, big

    # Interactive: a key works at once; one image operation does not reload the page or its
    # pictures: every tile but the two it changed (the old cover and the new) is the very
    # element it was, picture and all.
    page.evaluate("document.querySelectorAll('.review-tile img').forEach(i => i.seen = true)")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert focused_number(page) == "3"
    page.keyboard.press("c")
    expect(page.locator(".review-tile.is-cover")).to_have_attribute("data-number", "3")
    kept = page.evaluate(
        "[...document.querySelectorAll('.review-tile img')].filter(i => i.seen).length"
    )
    assert kept == 500 - 2, kept


def change_url(record) -> str:
    return reverse(f"admin:catalog_{record._meta.model_name}_change", args=[record.pk])
