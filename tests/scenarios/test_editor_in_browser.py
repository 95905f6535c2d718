"""An editor's morning in a real browser: headless Debian Chromium, driven by Playwright,
against the live server. Log in, open the pending list, look at an album's photographs,
reject it with a reason, curate and approve the next one; then the database and the public
views say what happened."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from catalog.models import Runway
from publicapi.models import PublicBrand, PublicRunway, PublicRunwayImage
from review.models import ReviewEvent
from tests.factories import BrandFactory
from tests.review.support import editors_group, make_runway

pytestmark = [
    pytest.mark.slow,
    # The live server runs in another thread, so the data must be committed.
    pytest.mark.django_db(transaction=True),
]


def expect_all_images_loaded(page, count: int) -> None:
    """The record page shows `count` image tiles and every photograph has loaded."""
    tiles = page.locator(".review-tile img")
    expect(tiles).to_have_count(count)  # waits for the page
    for index in range(count):
        image = tiles.nth(index)
        image.scroll_into_view_if_needed()  # thumbnails load lazily
        expect(image).to_have_js_property("complete", True)
        assert image.evaluate("img => img.naturalWidth") > 0


def test_an_editor_rejects_one_album_and_approves_another(live_server, browser_page):
    page = browser_page
    editor = User.objects.create_user("anna", password="anna-pw-2026", is_staff=True)
    editor.groups.add(editors_group())
    brand = BrandFactory(name="Acme", slug="acme")
    first = make_runway(images=3, renditions_made=True, brand=brand, title="Acme Blurry Show")
    second = make_runway(
        images=4, duplicate=True, renditions_made=True, brand=brand, title="Acme Fall"
    )
    assert not PublicRunway.objects.exists()

    # Log in and open the pending list.
    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", "anna")
    page.fill("#id_password", "anna-pw-2026")
    page.click("input[type=submit]")
    page.get_by_role("link", name="Runways").first.click()
    expect(page.locator(".review-tab.current")).to_contain_text("Pending review")
    expect(page.locator("#result_list tbody tr")).to_have_count(2)

    # The oldest album first: every photograph shows; reject it with a reason.
    page.get_by_role("link", name="Acme Blurry Show").click()
    expect_all_images_loaded(page, 3)
    page.locator(".submit-row").first.get_by_role("button", name="Reject…").click()
    page.fill("#id_reason", "Blurry photos, wrong season")
    page.get_by_role("button", name="Reject runway").click()

    # On to the next pending album: delete its near-duplicate, fix the title, approve.
    expect(page.locator(".messagelist")).to_contain_text("Rejected “Acme Blurry Show”")
    expect(page.locator("h2").first).to_have_text("Acme Fall")
    expect_all_images_loaded(page, 4)
    duplicate = page.locator(".review-tile.is-duplicate")
    expect(duplicate).to_contain_text("Near-duplicate of")
    duplicate.get_by_role("button", name="Delete").click()
    page.locator("#review-confirm").get_by_role("button", name="Delete").click()  # confirm
    expect(page.locator(".messagelist")).to_contain_text("Deleted image")
    expect(page.locator(".review-tile")).to_have_count(3)
    page.fill("#id_title", "Acme Fall 2024 Ready-to-Wear")
    page.locator(".submit-row").first.get_by_role("button", name="Approve and publish").click()
    expect(page.locator(".messagelist")).to_contain_text("The pending queue is empty.")

    # The database: one rejected with its reason, one published with the edit, both by anna.
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.reject_reason, first.reviewer) == (
        "rejected",
        "Blurry photos, wrong season",
        "anna",
    )
    assert (second.status, second.title, second.reviewer, second.image_count) == (
        "published",
        "Acme Fall 2024 Ready-to-Wear",
        "anna",
        3,
    )
    assert list(ReviewEvent.objects.values_list("action", "actor__username")) == [
        ("reject", "anna"),
        ("approve", "anna"),
    ]

    # The public views: only the approved album, its live images, and its brand.
    assert list(PublicRunway.objects.values_list("id", "title")) == [
        (second.pk, "Acme Fall 2024 Ready-to-Wear")
    ]
    assert set(PublicRunwayImage.objects.values_list("id", flat=True)) == set(
        second.images.live().values_list("id", flat=True)
    )
    assert list(PublicBrand.objects.values_list("slug", "runway_count")) == [("acme", 1)]
    assert Runway.objects.filter(status="pending").count() == 0
