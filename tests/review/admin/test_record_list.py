"""The record lists (review.admin.record_list, filters): tabs, order, filters, search.
Portable."""

import pytest

from catalog.models import Runway, StreetSnap
from review.services import record_approve
from tests.factories import BrandFactory, RunwayFactory, StreetSnapFactory
from tests.review.admin.support import (
    url,
)
from tests.review.support import (
    make_runway,
    make_street_snap,
)

pytestmark = pytest.mark.django_db


# --- the list: tabs, ordering, filters, search ---------------------------------------------


class TestTheQueue:
    def test_pending_is_oldest_first_and_all_puts_pending_first(self, editor_client):
        older, newer = RunwayFactory(), RunwayFactory()
        published = RunwayFactory(published=True)

        queue = editor_client.get(url(Runway, "changelist"))
        everything = editor_client.get(url(Runway, "changelist") + "?status=all")

        assert [r.pk for r in queue.context["cl"].result_list] == [older.pk, newer.pk]
        assert [r.pk for r in everything.context["cl"].result_list][-1] == published.pk

    def test_published_shows_the_latest_decisions_first_and_legacy_rows_last(
        self, editor_client, editor
    ):
        legacy = RunwayFactory(status="published", reviewed_at=None)
        earlier, later = RunwayFactory(), RunwayFactory()
        record_approve(record=earlier, actor=editor)
        record_approve(record=later, actor=editor)

        response = editor_client.get(url(Runway, "changelist") + "?status=published")

        ids = [r.pk for r in response.context["cl"].result_list]
        assert ids == [later.pk, earlier.pk, legacy.pk]

    def test_with_a_filter_on_the_tabs_count_and_link_the_filtered_list(self, editor_client):
        # Given two brands' shows in every status
        acme, other = BrandFactory(name="Acme"), BrandFactory(name="Other")
        for brand, pending, published in ((acme, 2, 1), (other, 3, 2)):
            for _ in range(pending):
                RunwayFactory(brand=brand)
            for _ in range(published):
                RunwayFactory(brand=brand, published=True)

        # When an editor filters the list by Acme and searches nothing else
        response = editor_client.get(
            url(Runway, "changelist") + f"?brand__id__exact={acme.pk}&status=pending"
        )

        # Then the tabs count Acme's shows, and each tab's link keeps the filter
        tabs = {t["label"]: t for t in response.context["status_tabs"]}
        counts = {label: tab["count"] for label, tab in tabs.items()}
        assert counts == {
            "Pending review": 2,
            "Published": 1,
            "Scheduled": 0,
            "Rejected": 0,
            "All": 3,
        }
        published = editor_client.get(url(Runway, "changelist") + tabs["Published"]["url"])
        assert {r.brand_id for r in published.context["cl"].result_list} == {acme.pk}
        assert len(published.context["cl"].result_list) == 1
        # And beside the search box, the total is still every show of the kind
        assert '2 results (<a href="?">8 total</a>)' in response.content.decode()

    def test_a_search_narrows_the_tab_counts_too(self, editor_client):
        RunwayFactory(title="Acme Fall"), RunwayFactory(title="Other Fall")
        RunwayFactory(title="Acme Resort", published=True)

        response = editor_client.get(url(Runway, "changelist") + "?q=Acme")

        counts = {t["label"]: t["count"] for t in response.context["status_tabs"]}
        assert counts == {
            "Pending review": 1,
            "Published": 1,
            "Scheduled": 0,
            "Rejected": 0,
            "All": 2,
        }
        assert all("q=Acme" in t["url"] for t in response.context["status_tabs"])

    def test_deleted_records_are_not_in_the_queue(self, editor_client):
        RunwayFactory(deleted_at="2026-01-01T00:00:00Z")

        response = editor_client.get(url(Runway, "changelist") + "?status=all")

        assert list(response.context["cl"].result_list) == []

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("duplicates=yes", ["dup"]),
            ("duplicates=no", ["clean"]),
            ("q=needle", ["clean"]),
            ("q=Zebra", ["dup"]),
            ("q=example.com/needle", ["clean"]),
            ("season_code=SS26", ["dup"]),
            ("collection_type=couture", ["clean"]),
            ("source=vogue", ["dup"]),
        ],
    )
    def test_runway_filters_and_search(self, editor_client, query, expected):
        make_runway(
            images=2,
            duplicate=True,
            title="dup",
            brand=BrandFactory(name="Zebra"),
            season_code="SS26",
            source="vogue",
            source_url="https://example.com/zebra",
        )
        make_runway(
            images=2,
            title="clean needle",
            collection_type="couture",
            source="wwd",
            source_url="https://example.com/needle",
        )

        response = editor_client.get(f"{url(Runway, 'changelist')}?{query}")

        titles = [r.title.split()[0] for r in response.context["cl"].result_list]
        assert titles == expected

    @pytest.mark.parametrize(
        ("query", "expected"),
        [("city=Paris", ["paris"]), ("month=3", ["paris"]), ("q=Milan", ["milan"])],
    )
    def test_street_filters_and_search(self, editor_client, query, expected):
        make_street_snap(city="Paris", month=3, title="paris")
        make_street_snap(city="Milan", month=9, title="milan")

        response = editor_client.get(f"{url(StreetSnap, 'changelist')}?{query}")

        assert [r.title for r in response.context["cl"].result_list] == expected


def test_street_snaps_and_runways_are_separate_queues(editor_client):
    StreetSnapFactory()
    RunwayFactory()

    runways = editor_client.get(url(Runway, "changelist"))
    snaps = editor_client.get(url(StreetSnap, "changelist"))

    assert runways.context["cl"].result_count == snaps.context["cl"].result_count == 1
