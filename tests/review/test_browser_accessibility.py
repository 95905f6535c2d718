"""The review screens against WCAG AA, checked by axe-core (the npm package scripts/browser.sh
installs, injected into each page) in Debian's Chromium: the queue, an album page, the
compare view, a repeated album's comparison, a scheduled album with its embargo banner and
form, the Scheduled tab and the keys overlay, in the light and the dark
theme, with no serious or critical violation. And the keyboard: single-key shortcuts can be
turned off (WCAG 2.1.4), Tab reaches every tile, and deleting from the compare view brings
the editor back to the image they were on."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from catalog.models import RunwayImage
from tests.factories import BrandFactory, IngestJobFactory
from tests.review.support import log_in, runway_with_looks
from tests.support import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = {"serious", "critical"}


def axe_violations(page, context: str = "document") -> list[dict]:
    """axe-core's violations on the page as it stands (WCAG 2.x A and AA rules)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(
        f"""async () => {{
        const result = await axe.run({context}, {{
            runOnly: {{ type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }},
            resultTypes: ["violations"],
        }});
        return result.violations.map(v => ({{
            id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + ": " + n.failureSummary),
        }}));
    }}"""
    )


def change_url(record) -> str:
    return reverse(f"admin:catalog_{record._meta.model_name}_change", args=[record.pk])


@pytest.fixture
def albums():
    """An album whose images repeat a published one, with a flagged near-duplicate, and the
    album it repeats."""
    acme = BrandFactory(name="Acme")
    original = runway_with_looks(6, brand=acme, title="Acme Fall 2024 RTW", season_code="FW24")
    original.status = "published"
    original.save()
    again = runway_with_looks(6, brand=acme, title="Acme AW24", season_code="AW24")
    for image, twin in zip(
        again.images.order_by("sort_order"), original.images.order_by("sort_order"), strict=True
    ):
        RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=twin)
    return original, again


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_review_screens_have_no_serious_violation(live_server, browser_page, albums, theme):
    page = browser_page
    page.emulate_media(color_scheme=theme)
    log_in(page, live_server, "anna")
    original, again = albums
    first = again.images.order_by("sort_order").first()
    IngestJobFactory(status="failed", reason="unknown_brand", payload={"title": "Acme AW24"})
    IngestJobFactory(status="succeeded", runway=again, payload={"title": "Acme AW24"})
    # The published album scheduled: its page shows the embargo banner and form
    original.go_live_at = timezone.now() + timedelta(hours=2)
    original.expires_at = timezone.now() + timedelta(days=3)
    original.save()
    screens = {
        "queue": reverse("admin:catalog_runway_changelist"),
        "album page": change_url(again),
        "compare view": reverse("admin:catalog_runway_compare", args=[again.pk, first.pk]),
        "repeated album": reverse("admin:catalog_runway_repeats", args=[again.pk, original.pk]),
        "dashboard": reverse("admin:index"),
        "scheduled album page": change_url(original),
        "scheduled tab": reverse("admin:catalog_runway_changelist") + "?status=scheduled",
        "take-down page": reverse("admin:catalog_runway_takedown", args=[again.pk]),
        "ingest jobs": reverse("admin:ingest_ingestjob_changelist"),
    }
    found: dict[str, list[dict]] = {}
    for name, path in screens.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("load")
        found[name] = axe_violations(page)
    # The preview of rejecting the repeats of published albums, from the queue's action.
    page.goto(live_server.url + reverse("admin:catalog_runway_changelist"))
    page.locator(f"input[name=_selected_action][value='{again.pk}']").check()
    page.locator("select[name=action]").select_option("reject_repeats_selected")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#repeats-rejected")).to_contain_text("6 of 6")
    found["reject repeats preview"] = axe_violations(page)
    # The keys overlay, open on the album page.
    page.goto(live_server.url + change_url(again))
    page.keyboard.press("?")
    expect(page.locator("#review-keys")).to_be_visible()
    found["keys overlay"] = axe_violations(page, "document.getElementById('review-keys')")

    counts = {name: len(violations) for name, violations in found.items()}
    print(f"\nFIGURES axe violations ({theme} theme, any impact): {json.dumps(counts)}")
    blocking = {
        name: [v for v in violations if v["impact"] in BLOCKING]
        for name, violations in found.items()
    }
    assert blocking == {name: [] for name in found}, json.dumps(blocking, indent=1)


def test_single_key_shortcuts_can_be_turned_off(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(3, brand=BrandFactory(name="Acme"), title="Keys")
    page.goto(live_server.url + change_url(runway))

    # The keys list (its button, as "?" would) has the switch; the browser keeps the choice
    page.get_by_role("button", name="Keys").click()
    page.get_by_label("Single-key shortcuts").uncheck()
    page.keyboard.press("Escape")
    page.reload()
    page.keyboard.press("ArrowRight")  # arrows still move
    expect(page.locator(".review-tile[aria-current=true]")).to_have_attribute("data-number", "1")

    # Then x asks nothing, ? opens nothing
    page.keyboard.press("x")
    page.keyboard.press("?")
    expect(page.locator("#review-confirm")).to_have_count(0)
    expect(page.locator("#review-keys")).to_be_hidden()

    # And turned on again, x asks to delete the image
    page.get_by_role("button", name="Keys").click()
    page.get_by_label("Single-key shortcuts").check()
    page.keyboard.press("Escape")
    page.keyboard.press("x")
    expect(page.locator("#review-confirm")).to_contain_text("Delete image 1 ")


def test_tab_reaches_the_tiles_and_the_keys_act_on_that_tile(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(3, brand=BrandFactory(name="Acme"), title="Tabs")
    page.goto(live_server.url + change_url(runway))
    first = runway.images.order_by("sort_order").first()

    page.locator(".review-keys-button").focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('review-tile')"):
            break

    expect(page.locator(f"#image-{first.pk}")).to_be_focused()
    expect(page.locator(f"#image-{first.pk}")).to_have_attribute("aria-current", "true")
    page.keyboard.press("x")
    expect(page.locator("#review-confirm")).to_contain_text("Delete image 1 ")


def test_after_deleting_in_the_compare_view_the_album_page_keeps_the_place(
    live_server, browser_page
):
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(6, brand=BrandFactory(name="Acme"), title="Twins")
    images = list(runway.images.order_by("sort_order"))
    RunwayImage.objects.filter(pk=images[3].pk).update(is_duplicate=True, dup_of=images[0])
    page.goto(live_server.url + change_url(runway))

    # On image 4, a near-duplicate: v compares it; x Enter deletes it there
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("v")
    expect(page.locator("#compare-1 h2")).to_contain_text("image 4")
    # The view's keys work once its script has run: the heading shows before that.
    page.wait_for_load_state("load")
    page.keyboard.press("x")
    expect(page.locator("#review-confirm")).to_be_visible()
    page.keyboard.press("Enter")

    # Back on the album page, the keys are on image 5, which took its place
    expect(page.locator(".messagelist")).to_contain_text("Deleted image 4")
    expect(page.locator(f"#image-{images[4].pk}")).to_be_focused()
    expect(page.locator(".review-tile[aria-current=true]")).to_have_attribute("data-number", "5")


def test_the_embargo_form_schedules_the_album_from_its_page(live_server, browser_page, settings):
    # Given a published album and editors in Paris
    settings.EDITORS_TIME_ZONE = "Europe/Paris"
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(2, brand=BrandFactory(name="Acme"), title="Embargoed")
    runway.status = "published"
    runway.save()
    page.goto(live_server.url + change_url(runway))

    # When the editor types a go-live in the form (outside the main form) and saves it
    # (folded in the status bar while the album has neither time)
    page.get_by_text("Go-live and expiry…").click()
    page.locator("#embargo-go-live-at").fill("2099-03-03T20:30")
    page.get_by_role("button", name="Save the times").click()

    # Then the album is scheduled for that Paris time, and the banner says so
    expect(page.locator(".messagelist")).to_contain_text("Goes live Tue 3 Mar 2099 20:30 Paris")
    expect(page.locator("#review-embargo-banner")).to_contain_text("Scheduled.")
    runway.refresh_from_db()
    assert runway.go_live_at.isoformat() == "2099-03-03T19:30:00+00:00"
