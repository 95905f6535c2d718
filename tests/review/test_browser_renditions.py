"""The review page of a 60-photo album in a real browser transfers the 400 px renditions, not the
originals: under 3 MB of images where the originals weigh more than 15 MB. The originals still
open on click."""

import hashlib
import io

import numpy as np
import pytest
from django.contrib.auth.models import User
from PIL import Image
from playwright.sync_api import expect
from skimage import data as skdata

from catalog.models import Runway, RunwayImage
from catalog.services.renditions import record_renditions_make
from catalog.storage import image_store
from tests.factories import RunwayFactory
from tests.review.support import log_in

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "camera", "immunohistochemistry")
IMAGES = 60


def runway_photo(n: int) -> bytes:
    """A distinct 1400x2100 JPEG (q90, with grain so it weighs what a camera file does)."""
    base = Image.fromarray(getattr(skdata, PHOTOS[n % len(PHOTOS)])()).convert("RGB")
    pixels = np.asarray(base.resize((1400, 2100), Image.Resampling.BILINEAR), dtype=np.float32)
    pixels += np.random.default_rng(n).normal(0, 6, size=pixels.shape[:2])[..., None]
    out = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(out, "JPEG", quality=90)
    return out.getvalue()


def album_as_ingest_leaves_it() -> tuple[Runway, int]:
    """A 60-photo album as an ingest job leaves it: originals stored, renditions not made yet.
    Returns it and the bytes of its originals."""
    photos = [runway_photo(n) for n in range(IMAGES)]
    runway = RunwayFactory(
        title="Acme Sixty Looks",
        images=[stored(data) for data in photos],
        images__width=1400,
        images__height=2100,
    )
    return runway, sum(len(data) for data in photos)


def stored(data: bytes) -> dict:
    """An original stored as ingest stores it (content-addressed); its image's fields."""
    sha1 = hashlib.sha1(data).hexdigest()  # noqa: S324 - a content address
    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    return {"storage_key": key, "sha1": sha1, "byte_size": len(data)}


def test_a_60_image_album_page_transfers_renditions_not_originals(live_server, browser_page):
    page = browser_page
    # Given a 60-photo album whose originals total more than 15 MB, with its renditions made
    runway, originals = album_as_ingest_leaves_it()
    assert record_renditions_make(kind="runway", record_id=runway.pk).done == IMAGES
    assert originals > 15_000_000
    User.objects.create_superuser("chief", password="chief-pw-2026")

    image_bytes = {"total": 0, "originals": 0}
    fetched: set[str] = set()

    def count(response):
        if response.request.resource_type == "image" and response.status == 200:
            fetched.add(response.url)
            size = len(response.body())
            image_bytes["total"] += size
            if "/images/" in response.url:
                image_bytes["originals"] += 1

    # When an editor opens the list, then the album, and scrolls through every photo
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "chief")
    page.fill("#id_password", "chief-pw-2026")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/catalog/runway/")
    cover = page.locator(".review-list-thumb").first
    expect(cover).to_have_js_property("complete", True)
    assert "/renditions/" in cover.get_attribute("src")
    page.on("response", count)
    # A phone-width window: the grid becomes a long column, which puts the last photo further
    # below the first screen than the browser's lazy-loading distance (Chromium's largest, for
    # the slowest connections, is 8000 px). On a wide screen all 60 are within it.
    page.set_viewport_size({"width": 240, "height": 640})
    page.goto(f"{live_server.url}/admin/catalog/runway/{runway.pk}/change/")
    tiles = page.locator(".review-tile img")
    expect(tiles).to_have_count(IMAGES)
    expect(tiles.first).to_have_js_property("complete", True)
    page.wait_for_load_state("networkidle")  # whatever the page loads unscrolled, it has
    last = tiles.nth(IMAGES - 1)
    below = last.evaluate("img => img.getBoundingClientRect().top - window.innerHeight")
    assert below > 8000, f"the last photo is only {below:.0f} px below the first screen"
    # Lazy loading: the last photo is not fetched before the editor scrolls to it.
    last_url = last.evaluate("img => img.src")
    assert last_url not in fetched
    assert last.evaluate("img => img.complete") is False
    for index in range(IMAGES):
        tile = tiles.nth(index)
        tile.scroll_into_view_if_needed()
        expect(tile).to_have_js_property("complete", True)
        assert tile.evaluate("img => img.naturalWidth") == 400
    page.wait_for_load_state("networkidle")
    assert last_url in fetched

    # Then the page fetched 60 renditions and no original, well under 3 MB in all
    assert image_bytes["originals"] == 0
    assert 0 < image_bytes["total"] < 3_000_000, image_bytes
    # And a click still opens the original.
    first_link = page.locator(".review-tile a").first
    assert first_link.get_attribute("href").endswith(".jpg")
    print(
        f"\n60-image album page: {image_bytes['total'] / 1e6:.2f} MB of images transferred, "
        f"originals {originals / 1e6:.1f} MB"
    )


def weigh_album_page(page, url: str) -> dict:
    """Everything a first visit of the album page at `url` loads, scrolled to its end: bytes
    and responses in all, of them the admin's own scripts and styles, and originals."""
    loaded = {"bytes": 0, "responses": 0, "originals": 0, "admin_static": 0}

    def count(response):
        if not 200 <= response.status < 300:
            return
        size = len(response.body())
        loaded["responses"] += 1
        loaded["bytes"] += size
        if "/static/admin/" in response.url:
            loaded["admin_static"] += size
        if "/media/images/" in response.url:
            loaded["originals"] += 1

    page.on("response", count)
    page.set_viewport_size({"width": 240, "height": 640})
    page.goto(url)
    expect(page.locator(".review-tile")).to_have_count(IMAGES)
    for tile in page.locator(".review-tile").all():
        tile.scroll_into_view_if_needed()
    page.wait_for_load_state("networkidle")
    page.remove_listener("response", count)
    return loaded


def test_right_after_ingest_a_60_image_album_page_loads_no_original(
    live_server, browser_page, settings
):
    page = browser_page
    # Given a 60-photo album just ingested (more than 15 MB of originals, no rendition yet)
    runway, originals = album_as_ingest_leaves_it()
    assert originals > 15_000_000
    log_in(page, live_server, "anna")
    album_url = f"{live_server.url}/admin/catalog/runway/{runway.pk}/change/"

    # When an editor opens its page (a first visit: nothing cached) and scrolls to its end
    loaded = weigh_album_page(page, album_url)

    # Then every tile is a placeholder saying why, and the page, with everything it loaded
    # (HTML, styles, scripts, pictures), weighs at most 2 MB
    expect(page.locator(".review-tile .review-placeholder")).to_have_count(IMAGES)
    expect(page.locator(".review-tile .review-placeholder").first).to_have_text(
        "renditions not made yet"
    )
    assert loaded["originals"] == 0
    assert loaded["bytes"] <= 2_000_000, loaded

    # And with DEBUG on (what `make run` sets), the same first visit in a fresh browser: the
    # admin serves its vendor scripts unminified (Django picks jquery.js over jquery.min.js)
    settings.DEBUG = True
    fresh = page.context.browser.new_context()
    fresh.add_cookies(page.context.cookies())
    debug = weigh_album_page(fresh.new_page(), album_url)
    fresh.close()
    settings.DEBUG = False
    assert debug["originals"] == 0
    assert debug["admin_static"] > loaded["admin_static"], (debug, loaded)
    print(
        f"\nFIGURES 60-image album page right after ingest: {loaded['bytes'] / 1e6:.2f} MB in "
        f"{loaded['responses']} responses, {loaded['admin_static'] / 1e6:.2f} MB of it the "
        f"admin's scripts and styles (DEBUG off); {debug['bytes'] / 1e6:.2f} MB, "
        f"{debug['admin_static'] / 1e6:.2f} MB of it the admin's (DEBUG on, as `make run`); "
        f"originals {originals / 1e6:.1f} MB, none loaded"
    )
    page.set_viewport_size({"width": 240, "height": 640})

    # And the list shows a placeholder for its cover too
    page.goto(f"{live_server.url}/admin/catalog/runway/")
    expect(page.locator(".review-list-thumb.review-placeholder")).to_have_count(1)
    page.on("response", lambda response: count_original(loaded, response))

    # And once the renditions exist, the compare view shows the 1200 px rendition, the
    # original a link away
    assert record_renditions_make(kind="runway", record_id=runway.pk).done == IMAGES
    first, second = RunwayImage.objects.filter(runway=runway).order_by("sort_order")[:2]
    RunwayImage.objects.filter(pk=second.pk).update(is_duplicate=True, dup_of=first)
    loaded.update(originals=0)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/admin/catalog/runway/{runway.pk}/images/{second.pk}/compare/")
    pictures = page.locator(".review-compare-frame img")
    expect(pictures).to_have_count(2)
    for picture in pictures.all():
        expect(picture).to_have_js_property("complete", True)
        assert picture.evaluate("img => img.naturalWidth") == 1200
    original = page.locator("#compare-1 .review-original-link")
    assert original.get_attribute("href").endswith(f"{second.storage_key}")
    page.wait_for_load_state("networkidle")
    assert loaded["originals"] == 0


def count_original(loaded: dict, response) -> None:
    if 200 <= response.status < 300 and "/media/images/" in response.url:
        loaded["originals"] += 1
