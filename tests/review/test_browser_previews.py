"""Press previews in Debian's Chromium: the preview page a journalist opens, checked by
axe-core against WCAG AA in the light and the dark theme, its pictures loaded; and the album
page's Press previews section, made and revoked by an editor."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from review.services import preview_link_make
from tests.factories import BrandFactory
from tests.review.support import log_in, runway_with_looks
from tests.review.test_browser_accessibility import BLOCKING, axe_violations, change_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_preview_page_has_no_serious_violation(live_server, browser_page, theme):
    page = browser_page
    page.emulate_media(color_scheme=theme)
    runway = runway_with_looks(4, shots=2, brand=BrandFactory(name="Acme"), title="Acme FW26")
    editor = User.objects.create_superuser("anna")
    _, token = preview_link_make(record=runway, actor=editor, label="Le Monde")

    page.goto(f"{live_server.url}/preview/{token}/")
    page.wait_for_load_state("load")

    expect(page.get_by_role("heading", level=1)).to_have_text("Acme FW26")
    expect(page.get_by_role("img", name="Look 1, picture 1 of 2")).to_be_visible()
    first = page.get_by_role("img", name="Look 1, picture 1 of 2")
    assert first.evaluate("i => i.complete && i.naturalWidth > 0"), "the picture did not load"
    found = axe_violations(page)
    print(f"\nFIGURES axe violations, preview page ({theme}): {len(found)}")
    assert [v for v in found if v["impact"] in BLOCKING] == [], json.dumps(found, indent=1)


def test_an_editor_makes_a_link_then_revokes_it(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    runway = runway_with_looks(2, brand=BrandFactory(name="Acme"), title="Acme FW26")
    page.goto(live_server.url + change_url(runway))

    # Folded while the album has no link: its heading opens it.
    expect(page.get_by_label("For")).to_be_hidden()
    page.locator("#preview-links > summary").click()
    page.get_by_label("For").fill("Le Monde")
    page.get_by_role("button", name="Make a preview link").click()
    url = page.locator("#preview-made-url").input_value()
    section = page.locator("#preview-links")
    found = axe_violations(page, "document.getElementById('preview-links')")
    page.get_by_role("button", name="Revoke the link for Le Monde").click()
    page.get_by_role("button", name="Revoke", exact=True).click()  # review.js asks first

    expect(page.locator(".messagelist")).to_contain_text("Revoked the preview link for Le Monde")
    expect(section).to_contain_text("revoked")
    assert page.request.get(url).status == 404
    assert [v for v in found if v["impact"] in BLOCKING] == [], json.dumps(found, indent=1)
