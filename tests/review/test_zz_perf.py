import json, statistics
import pytest
from django.urls import reverse
from tests.review.test_browser_review import street_album, log_in, page_figures

pytestmark = [pytest.mark.django_db(transaction=True)]

def test_perf(live_server, browser_page):
    page = browser_page
    log_in(page, live_server, "anna")
    snap = street_album(500, title="Big")
    url = live_server.url + reverse("admin:catalog_streetsnap_change", args=[snap.pk])
    cdp = page.context.new_cdp_session(page)
    page.goto(url); page.wait_for_load_state("load")
    for variant in ["normal", "nocss", "normal"]:
        if variant == "nocss":
            page.route("**/*.css", lambda route: route.abort())
        else:
            page.unroute("**/*.css")
        runs = []
        for i in range(3):
            page.goto(url); page.wait_for_load_state("load")
            f = page_figures(page)
            runs.append((f["first_byte_ms"], f["interactive_ms"]))
        print("\nVARIANT", variant, runs)
