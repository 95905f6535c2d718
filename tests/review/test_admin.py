"""The editors' admin as an Editors-group user sees it: the queues, the record pages, the
image curation endpoints, single and bulk transitions, stale pages, permissions, and query
counts that do not grow with the page. Portable (PostgreSQL and SQLite)."""

import re

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from catalog.models import Brand, BrandAlias, Runway, RunwayImage, StreetSnap, StreetSnapImage
from catalog.selectors import brand_resolve
from catalog.services import record_update, runway_reopen
from review import forms as review_forms
from review import services as review_services
from review.admin import record_page, transitions
from review.models import ReviewEvent
from review.services import record_approve, record_reject, record_unpublish
from tests.factories import BrandAliasFactory, BrandFactory, RunwayFactory, StreetSnapFactory
from tests.review.support import (
    editors_group,
    form_data,
    make_runway,
    make_street_snap,
    page_forms,
    recrawl,
)
from tests.support import curator

pytestmark = pytest.mark.django_db

KINDS = [
    pytest.param(make_runway, id="runway"),
    pytest.param(make_street_snap, id="street"),
]


def url(record_or_model, view: str, *args) -> str:
    opts = record_or_model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def change_url(record) -> str:
    return url(record, "change", record.pk)


def main_form(record) -> str:
    return f"{record._meta.model_name}_form"


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def count_queries(client, path: str) -> int:
    # The first request of a process fills per-process caches (content types): measure the
    # second of two identical requests, so counts compare pages, not cache warmth.
    client.get(path)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200
    return len(queries)


def duplicate_notes(html: str) -> dict[int, str]:
    """Each image tile of a record page with its near-duplicate marker, whitespace folded
    ('' for a tile without one)."""
    notes = {}
    for tile in re.split(r'(?=<div class="review-tile[ "])', html)[1:]:
        image_id = int(re.search(r'id="image-(\d+)"', tile).group(1))
        note = re.search(r'<div class="review-dup">(.*?)</div>', tile, re.S)
        notes[image_id] = " ".join(note.group(1).split()) if note else ""
    return notes


def post_image_op(client, record, image_id: int, operation: str, page=None, **extra):
    page = page or client.get(change_url(record))
    data = {**form_data(page, "image-ops"), **extra}
    return client.post(url(record, "image", record.pk, image_id, operation), data, follow=True)


# --- pages render, with bounded query counts ----------------------------------------------


class TestPagesRender:
    @pytest.mark.parametrize("make", KINDS)
    def test_the_changelist_shows_the_pending_queue_with_covers_counts_and_tabs(
        self, make, editor_client
    ):
        pending = make(images=3, title="Waiting album")
        make(images=2, published=True, title="Public album")
        model = type(pending)

        response = editor_client.get(url(model, "changelist"))

        html = response.content.decode()
        assert response.status_code == 200
        assert [r.pk for r in response.context["cl"].result_list] == [pending.pk]
        assert "Waiting album" in html and "Public album" not in html
        assert pending.cover.storage_key in html  # the cover thumbnail
        tabs = {t["label"]: (t["count"], t["current"]) for t in response.context["status_tabs"]}
        assert tabs == {
            "Pending review": (1, True),
            "Published": (1, False),
            "Rejected": (0, False),
            "All": (2, False),
        }
        # Beside the search box, the list's total is the "All" tab's count (RecordChangeList)
        assert '1 result (<a href="?">2 total</a>)' in html

    @pytest.mark.parametrize("make", KINDS)
    def test_the_changelist_query_count_does_not_grow_with_the_page(self, make, editor_client):
        model = type(make(images=2, duplicate=True) if make is make_runway else make(images=2))
        few = count_queries(editor_client, url(model, "changelist"))

        for _ in range(15):
            make(images=3)

        many = count_queries(editor_client, url(model, "changelist"))
        assert few == many
        assert many <= 12

    @pytest.mark.parametrize("make", KINDS)
    def test_the_record_page_shows_every_live_image(self, make, editor_client):
        record = make(images=6)
        image_model = RunwayImage if isinstance(record, Runway) else StreetSnapImage
        gone = image_model.objects.filter(pk__in=record.images.values("pk")).last()
        image_model.objects.filter(pk=gone.pk).update(deleted_at="2026-01-01T00:00:00Z")

        response = editor_client.get(change_url(record))

        html = response.content.decode()
        shown = {int(pk) for pk in re.findall(r'id="image-(\d+)"', html)}
        assert shown == set(record.images.live().values_list("pk", flat=True))
        assert gone.pk not in shown
        assert 'name="loaded"' in html
        assert "Approve and publish" in html and "Reject…" in html

    def test_a_duplicate_marker_links_to_the_image_it_duplicates(self, editor_client):
        elsewhere = make_runway(images=1)
        runway = make_runway(images=3, duplicate=True)
        twin = runway.images.order_by("sort_order").last()
        original = runway.images.order_by("sort_order").first()
        second = runway.images.order_by("sort_order")[1]
        RunwayImage.objects.filter(pk=second.pk).update(
            is_duplicate=True, dup_of=elsewhere.images.get()
        )

        html = editor_client.get(change_url(runway)).content.decode()

        # Then each tile's marker links to its original: in this album, or on the other
        # album's page
        elsewhere_image = elsewhere.images.get().pk
        other = f"{change_url(elsewhere)}#image-{elsewhere_image}"
        # (by number in this album; an image of another album by number and id, as the
        # ingest report names it by id)
        assert duplicate_notes(html) == {
            original.pk: "",
            second.pk: f'Near-duplicate of <a href="{other}">image 1 (id {elsewhere_image})</a> '
            "(in another album)",
            twin.pk: f'Near-duplicate of <a href="#image-{original.pk}">image 1</a>',
        }

    @pytest.mark.parametrize("make", KINDS)
    def test_a_duplicate_in_a_deleted_album_is_named_without_a_link(self, make, editor_client):
        # Given an album whose images repeat images of two albums since deleted
        record, plain = make(images=3), make(images=3)
        gone = [make(images=1), make(images=1)]
        image_model = type(record.images.first())
        for image, original in zip(record.images.order_by("sort_order")[1:], gone, strict=True):
            image_model.objects.filter(pk=image.pk).update(
                is_duplicate=True, dup_of=original.images.get()
            )
        type(record).objects.filter(pk__in=[g.pk for g in gone]).update(deleted_at=timezone.now())

        # When an editor opens it
        html = editor_client.get(change_url(record)).content.decode()

        # Then the markers say where the originals were, and link to no missing page
        assert html.count("(in a deleted album)") == 2
        assert not any(change_url(g) in html for g in gone)
        assert count_queries(editor_client, change_url(record)) == count_queries(
            editor_client, change_url(plain)
        )

    def test_the_street_page_groups_details_under_their_main_image(self, editor_client):
        snap = make_street_snap(images=4)
        first, detail, second, _ = snap.images.order_by("sort_order")

        response = editor_client.get(change_url(snap))

        groups = response.context["review"]["groups"]
        assert [[t["image"].pk for t in g["tiles"]] for g in groups] == [
            [first.pk, detail.pk],
            [second.pk, second.pk + 1],
        ]
        # Images are named by their number in the album (sort_order + 1), as everywhere
        assert [g["label"] for g in groups] == ["Main image 1", "Main image 3"]
        assert f'detail of <a href="#image-{first.pk}">image 1</a>' in (response.content.decode())

    @pytest.mark.parametrize("make", KINDS)
    def test_the_record_page_query_count_does_not_grow_with_its_images(
        self, make, editor_client, editor
    ):
        small, large = make(images=2), make(images=24)
        record_approve(record=small, actor=editor)
        record_approve(record=large, actor=editor)

        assert count_queries(editor_client, change_url(small)) == count_queries(
            editor_client, change_url(large)
        )

    @pytest.mark.parametrize("make", KINDS)
    def test_the_reject_page_renders_for_one_and_for_many(self, make, editor_client):
        records = [make(images=2) for _ in range(3)]
        model = type(records[0])

        single = editor_client.get(url(model, "reject", records[0].pk))
        bulk = editor_client.post(
            url(model, "changelist"),
            {"action": "reject_selected", "_selected_action": [r.pk for r in records]},
        )

        assert single.status_code == bulk.status_code == 200
        assert "Reason" in single.content.decode()
        html = bulk.content.decode()
        assert all(str(r) in html for r in records)
        assert "The same reason is recorded for each of them" in html

    @pytest.mark.parametrize("make", KINDS)
    def test_the_bulk_reject_page_query_count_does_not_grow_with_the_selection(
        self, make, editor_client
    ):
        def queries_for(n: int) -> int:
            records = [make(images=2) for _ in range(n)]
            model = type(records[0])
            selection = {"action": "reject_selected", "_selected_action": [r.pk for r in records]}
            editor_client.post(url(model, "changelist"), selection)  # warm caches
            with CaptureQueriesContext(connection) as queries:
                response = editor_client.post(url(model, "changelist"), selection)
            assert response.status_code == 200
            return len(queries)

        few, many = queries_for(2), queries_for(10)
        assert few == many
        assert many <= 10

    @pytest.mark.parametrize("make", KINDS)
    @pytest.mark.parametrize(
        ("action", "status"), [("reject", "pending"), ("unpublish", "published")]
    )
    def test_the_single_album_reason_page_query_count_does_not_grow_with_the_album(
        self, make, action, status, editor_client, make_editor
    ):
        # Given a small album and a large one with a longer history behind it
        small, large = make(images=1, status=status), make(images=24)
        bob = make_editor("bob")
        for _ in range(3):
            record_approve(record=large, actor=bob)
            record_unpublish(record=large, actor=bob, reason="Re-check")
            type(large).objects.filter(pk=large.pk).update(status="pending")
        if status == "published":
            record_approve(record=large, actor=bob)

        # Then their reject (or unpublish) pages cost the same few queries
        few = count_queries(editor_client, url(small, action, small.pk))
        many = count_queries(editor_client, url(large, action, large.pk))
        assert few == many
        assert many <= 5

    def test_brands_history_and_index_render(self, editor_client, editor):
        BrandAliasFactory(alias="ACME Studios")
        record_approve(record=make_runway(), actor=editor)

        for path in [
            reverse("admin:index"),
            url(Runway.brand.field.related_model, "changelist"),
            url(ReviewEvent, "changelist"),
        ]:
            assert editor_client.get(path).status_code == 200


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


# --- transitions from the record page and the list ----------------------------------------


class TestSingleTransitions:
    @pytest.mark.parametrize("make", KINDS)
    def test_approve_saves_the_edits_publishes_and_moves_to_the_next_album(
        self, make, editor_client
    ):
        record, following = make(images=3), make(images=1)
        images_before = sorted(record.images.values_list("pk", "storage_key", "deleted_at"))
        page = editor_client.get(change_url(record))

        response = editor_client.post(
            change_url(record),
            form_data(page, main_form(record), title="Fixed title", _approve="Approve"),
        )

        record.refresh_from_db()
        assert response.status_code == 302
        assert response.url == change_url(following)
        assert (record.status, record.title, record.reviewer) == (
            "published",
            "Fixed title",
            "anna",
        )
        event = record.review_events.get()
        assert event.changes["title"][1] == "Fixed title"
        assert sorted(record.images.values_list("pk", "storage_key", "deleted_at")) == (
            images_before
        )

    def test_the_last_approve_goes_back_to_the_empty_queue(self, editor_client):
        runway = make_runway()
        page = editor_client.get(change_url(runway))

        response = editor_client.post(
            change_url(runway), form_data(page, "runway_form", _approve="1"), follow=True
        )

        assert response.redirect_chain[-1][0] == url(Runway, "changelist")
        assert "The pending queue is empty." in messages_of(response)

    def test_save_keeps_the_status_and_bumps_the_version(self, editor_client):
        runway = make_runway()
        page = editor_client.get(change_url(runway))

        editor_client.post(
            change_url(runway), form_data(page, "runway_form", title="Edited", _save="Save")
        )

        runway.refresh_from_db()
        assert (runway.status, runway.title, runway.version) == ("pending", "Edited", 2)
        assert not ReviewEvent.objects.exists()

    @pytest.mark.parametrize("make", KINDS)
    def test_reject_asks_for_a_reason_then_rejects(self, make, editor_client):
        record = make()
        page = editor_client.get(change_url(record))
        token = form_data(page, "transition-form")

        asked = editor_client.post(url(record, "reject", record.pk), token)
        empty = editor_client.post(
            url(record, "reject", record.pk), {**form_data(asked, "reason-form"), "reason": "  "}
        )
        done = editor_client.post(
            url(record, "reject", record.pk),
            {**form_data(asked, "reason-form"), "reason": "Not our season"},
        )

        assert asked.status_code == 200 and empty.status_code == 200
        assert "This field is required" in empty.content.decode()
        assert done.status_code == 302
        record.refresh_from_db()
        assert (record.status, record.reject_reason) == ("rejected", "Not our season")

    def test_unpublish_asks_for_a_reason(self, editor_client):
        runway = make_runway(published=True)
        page = editor_client.get(change_url(runway))
        assert "Unpublish…" in page.content.decode()
        assert "Approve and publish" not in page.content.decode()

        asked = editor_client.post(
            url(runway, "unpublish", runway.pk), form_data(page, "transition-form")
        )
        editor_client.post(
            url(runway, "unpublish", runway.pk),
            {**form_data(asked, "reason-form"), "reason": "Photographer asked"},
        )

        runway.refresh_from_db()
        assert (runway.status, runway.reject_reason) == ("rejected", "Photographer asked")

    @pytest.mark.parametrize("make", KINDS)
    def test_an_edit_onto_another_albums_entity_key_is_a_form_error(self, make, editor_client):
        taken = make(title="Taken")
        record = make(title="Mine")
        key = (
            {"season_code": taken.season_code, "brand": taken.brand_id}
            if isinstance(record, Runway)
            else {"title": " Taken "}
        )
        page = editor_client.get(change_url(record))

        response = editor_client.post(change_url(record), form_data(page, main_form(record), **key))

        assert response.status_code == 200
        assert "already" in str(response.context["adminform"].form.errors)
        assert type(record).objects.get(pk=record.pk).version == 1

    def test_a_source_url_is_linked_only_when_it_is_http(self, editor_client):
        safe = make_runway(source="vogue", source_url="https://example.com/show")
        odd = make_runway(source="legacy", source_url="javascript:alert(1)")

        assert 'href="https://example.com/show"' in (
            editor_client.get(change_url(safe)).content.decode()
        )
        assert 'href="javascript:' not in editor_client.get(change_url(odd)).content.decode()

    def test_a_refused_transition_says_why(self, editor_client, make_editor):
        runway = make_runway()
        page = editor_client.get(url(runway, "reject", runway.pk))
        record_approve(record=runway, actor=make_editor("bob"))

        response = editor_client.post(
            url(runway, "reject", runway.pk),
            {**form_data(page, "reason-form"), "reason": "Late"},
            follow=True,
        )

        runway.refresh_from_db()
        assert runway.status == "published"
        [message] = messages_of(response)
        assert "status changed from pending to published by bob" in message

    def test_the_history_is_shown_read_only_on_the_record(self, editor_client, make_editor):
        runway = make_runway(title="Acme")
        record_approve(record=runway, actor=make_editor("bob"), changes={"title": "Acme FW"})

        html = editor_client.get(change_url(runway)).content.decode()

        [history] = re.findall(r'<fieldset class="module review-history".*?</fieldset>', html, re.S)
        assert "Review history" in history
        assert "bob" in history and "“Acme” → “Acme FW”" in history
        assert not re.search(r"<(input|textarea|select|button)\b", history)  # nothing to edit

    def test_a_recrawl_that_reopened_a_rejected_album_shows_in_its_history(
        self, editor_client, make_editor
    ):
        runway = make_runway(title="First crawl")
        record_reject(record=runway, actor=make_editor("bob"), reason="Blurry")
        runway_reopen(runway=runway, **recrawl(runway, ingest_job_id=17))

        response = editor_client.get(change_url(runway))

        history = response.context["review"]["history"]
        assert [(line.who, line.action, line.to_status) for line in history] == [
            ("bob", "Rejected", "rejected"),
            ("ingest job 17", "Re-crawled", "pending"),
        ]
        html = response.content.decode()
        recrawl_row = html[html.index('class="review-history-recrawl"') :]
        assert "ingest job 17" in recrawl_row and "back in the review queue" in recrawl_row
        assert "rejected, then re-crawled" in html  # the status panel says it too


class TestBulkActions:
    def test_bulk_approve_reports_what_changed_and_what_was_refused(self, editor_client):
        first, second = make_runway(title="First"), make_runway(title="Second")
        already = make_runway(title="Already", published=True)

        response = editor_client.post(
            url(Runway, "changelist") + "?status=all",
            {
                "action": "approve_selected",
                "_selected_action": [first.pk, second.pk, already.pk],
            },
            follow=True,
        )

        assert Runway.objects.filter(status="published").count() == 3
        success, refused = messages_of(response)
        assert success == "Approved 2 runways."
        assert "1 not approved" in refused and "“Already”" in refused
        assert "it is published; only pending runways can be approved" in refused

    @pytest.mark.parametrize("make", KINDS)
    def test_bulk_reject_applies_one_reason_to_all(self, make, editor_client):
        records = [make() for _ in range(3)]
        model = type(records[0])
        selection = {"action": "reject_selected", "_selected_action": [r.pk for r in records]}

        asked = editor_client.post(url(model, "changelist"), selection)
        response = editor_client.post(
            url(model, "changelist"),
            {**form_data(asked, "reason-form"), "reason": "Duplicate of an older album"},
            follow=True,
        )

        reasons = set(model.objects.values_list("status", "reject_reason"))
        assert reasons == {("rejected", "Duplicate of an older album")}
        assert messages_of(response) == [f"Rejected 3 {model._meta.verbose_name_plural}."]
        assert ReviewEvent.objects.filter(action="reject").count() == 3

    def test_bulk_unpublish(self, editor_client):
        runway = make_runway(published=True)
        selection = {"action": "unpublish_selected", "_selected_action": [runway.pk]}

        asked = editor_client.post(url(Runway, "changelist") + "?status=published", selection)
        editor_client.post(
            url(Runway, "changelist") + "?status=published",
            {**form_data(asked, "reason-form"), "reason": "Takedown"},
        )

        runway.refresh_from_db()
        assert (runway.status, runway.reject_reason) == ("rejected", "Takedown")

    @pytest.mark.parametrize("make", KINDS)
    def test_a_record_changed_since_the_list_was_loaded_is_refused_saying_what_changed(
        self, make, editor_client, make_editor
    ):
        # Given Anna's list, and Bob who then renames one of its albums on its page
        record, other = make(title="Moving"), make(title="Still")
        model = type(record)
        listing = editor_client.get(url(model, "changelist"))
        selected = form_data(listing, "changelist-form")
        bob = Client()
        bob.force_login(make_editor("bob"))
        bob_page = bob.get(change_url(record))
        bob.post(change_url(record), form_data(bob_page, main_form(record), title="Moved"))

        # When Anna approves both from her list
        response = editor_client.post(
            url(model, "changelist"),
            {**selected, "action": "approve_selected", "_selected_action": [record.pk, other.pk]},
            follow=True,
        )

        # Then the renamed one is refused, and the message says who changed what
        assert model.objects.get(pk=record.pk).status == "pending"
        assert model.objects.get(pk=other.pk).status == "published"
        refused = messages_of(response)[1]
        assert "1 not approved" in refused
        assert "“Moved” changed since you opened it" in refused
        assert "title changed from “Moving” to “Moved”" in refused
        assert "edited by bob at" in refused
        assert "Nothing was saved" in refused
        assert "version" not in refused.lower()

    def test_bulk_reject_refuses_an_album_approved_since_the_list_was_loaded(
        self, editor_client, make_editor
    ):
        # Given Anna's list, and Bob who approves one of its albums meanwhile
        first, second = make_runway(title="First"), make_runway(title="Second")
        listing = editor_client.get(url(Runway, "changelist"))
        selection = {
            **form_data(listing, "changelist-form"),
            "action": "reject_selected",
            "_selected_action": [first.pk, second.pk],
        }
        asked = editor_client.post(url(Runway, "changelist"), selection)
        record_approve(record=first, actor=make_editor("bob"))

        # When Anna gives the reason and rejects both
        response = editor_client.post(
            url(Runway, "changelist"),
            {**form_data(asked, "reason-form"), "reason": "Off season"},
            follow=True,
        )

        # Then the approved one stays published and the message names who approved it
        assert Runway.objects.get(pk=first.pk).status == "published"
        assert Runway.objects.get(pk=second.pk).status == "rejected"
        refused = messages_of(response)[1]
        assert "status changed from pending to published by bob at" in refused

    def test_a_tampered_row_token_refuses_that_row_only(self, editor_client):
        runway, other = make_runway(title="Tampered"), make_runway(title="Fine")
        listing = editor_client.get(url(Runway, "changelist"))
        selected = {**form_data(listing, "changelist-form"), f"loaded_{runway.pk}": "forged"}

        response = editor_client.post(
            url(Runway, "changelist"),
            {**selected, "action": "approve_selected", "_selected_action": [runway.pk, other.pk]},
            follow=True,
        )

        assert Runway.objects.get(pk=runway.pk).status == "pending"
        assert Runway.objects.get(pk=other.pk).status == "published"
        assert "“Tampered”: This page is out of date" in messages_of(response)[1]


class TestTheAdminCallsTheTransitionServices:
    """Admin actions call the `<entity>_<action>` services (STYLE.md), one per transition."""

    @pytest.fixture
    def calls(self, monkeypatch):
        seen: list[str] = []
        for name in ["record_approve", "record_reject", "record_unpublish"]:
            original = getattr(review_services, name)

            def spy(*, _name=name, _original=original, **kwargs):
                seen.append(_name)
                return _original(**kwargs)

            # Where the admin's modules call them: the record page saves (with approve),
            # the transitions module runs the rest.
            for module in [record_page, transitions]:
                if hasattr(module, name):
                    monkeypatch.setattr(module, name, spy)
        return seen

    def test_approve_from_the_page_and_in_bulk(self, editor_client, calls):
        one, other = make_runway(), make_runway()
        page = editor_client.get(change_url(one))

        editor_client.post(change_url(one), form_data(page, "runway_form", _approve="1"))
        editor_client.post(
            url(Runway, "changelist"),
            {"action": "approve_selected", "_selected_action": [other.pk]},
        )

        assert calls == ["record_approve", "record_approve"]
        assert set(Runway.objects.values_list("status", flat=True)) == {"published"}

    @pytest.mark.parametrize(
        ("action", "status", "service"),
        [("reject", "pending", "record_reject"), ("unpublish", "published", "record_unpublish")],
    )
    def test_reject_and_unpublish_from_the_page_and_in_bulk(
        self, editor_client, calls, action, status, service
    ):
        one, other = make_runway(status=status), make_runway(status=status)
        page = editor_client.get(change_url(one))
        asked = editor_client.post(url(one, action, one.pk), form_data(page, "transition-form"))
        editor_client.post(
            url(one, action, one.pk), {**form_data(asked, "reason-form"), "reason": "r"}
        )
        selection = {"action": f"{action}_selected", "_selected_action": [other.pk]}
        listing = url(Runway, "changelist") + f"?status={status}"
        asked = editor_client.post(listing, selection)
        editor_client.post(listing, {**form_data(asked, "reason-form"), "reason": "r"})

        assert calls == [service, service]
        assert set(Runway.objects.values_list("status", flat=True)) == {"rejected"}


# --- two editors, one album ------------------------------------------------------------------


class TestStalePages:
    @pytest.mark.parametrize("make", KINDS)
    def test_the_second_save_is_refused_and_says_what_changed(self, make, client, make_editor):
        record = make(title="Original")
        anna, bob = Client(), Client()
        anna.force_login(make_editor("anna"))
        bob.force_login(make_editor("bob"))
        anna_page, bob_page = anna.get(change_url(record)), bob.get(change_url(record))

        anna.post(change_url(record), form_data(anna_page, main_form(record), title="Anna's"))
        refused = bob.post(
            change_url(record), form_data(bob_page, main_form(record), title="Bob's")
        )

        record.refresh_from_db()
        assert record.title == "Anna's"
        assert refused.status_code == 200  # the form again, with Bob's edits and the reason
        error = " ".join(refused.context["adminform"].form.non_field_errors())
        assert "title changed from “Original” to “Anna’s”" in error.replace("'", "’")
        assert "edited by anna" in error
        assert "Nothing was saved" in error

    def test_the_second_approve_is_refused_and_names_who_approved(self, make_editor):
        runway = make_runway(title="Shared")
        anna, bob = Client(), Client()
        anna.force_login(make_editor("anna"))
        bob.force_login(make_editor("bob"))
        anna_page, bob_page = anna.get(change_url(runway)), bob.get(change_url(runway))

        anna.post(change_url(runway), form_data(anna_page, "runway_form", _approve="1"))
        refused = bob.post(
            change_url(runway), form_data(bob_page, "runway_form", title="Bob's", _approve="1")
        )

        runway.refresh_from_db()
        assert (runway.title, runway.reviewer) == ("Shared", "anna")
        assert ReviewEvent.objects.count() == 1
        error = " ".join(refused.context["adminform"].form.non_field_errors())
        assert "status changed from pending to published by anna at" in error

    def test_a_recrawl_that_reopened_the_album_is_named(self, editor_client):
        runway = make_runway(status="rejected", title="Old crawl")
        page = editor_client.get(change_url(runway))
        # What the ingest pipeline's reopen writes (its own service, another branch).
        Runway.objects.filter(pk=runway.pk).update(
            status="pending", ingest_job_id=17, title="New crawl", version=2
        )

        refused = editor_client.post(change_url(runway), form_data(page, "runway_form"))

        error = " ".join(refused.context["adminform"].form.non_field_errors())
        assert "status changed from rejected to pending" in error
        assert "re-crawled (ingest job 17)" in error
        assert "title changed from “Old crawl” to “New crawl”" in error

    def test_a_curation_click_on_a_stale_page_is_refused(self, editor_client, make_editor):
        snap = make_street_snap(images=4)
        page = editor_client.get(change_url(snap))
        first = snap.images.order_by("sort_order").first()
        record_approve(record=snap, actor=make_editor("bob"))

        response = post_image_op(editor_client, snap, first.pk, "delete", page=page)

        assert StreetSnapImage.objects.get(pk=first.pk).deleted_at is None
        assert "status changed from pending to published by bob" in messages_of(response)[0]

    def test_a_tampered_token_is_refused(self, editor_client):
        runway = make_runway()
        page = editor_client.get(change_url(runway))

        response = editor_client.post(
            change_url(runway), form_data(page, "runway_form", loaded="forged", title="X")
        )

        assert "out of date" in " ".join(response.context["adminform"].form.non_field_errors())
        assert Runway.objects.get(pk=runway.pk).version == 1


# --- curation endpoints ----------------------------------------------------------------------


class TestCuration:
    def test_delete_the_cover_moves_it_and_says_so(self, editor_client):
        runway = make_runway(images=3)
        first, second, _ = runway.images.order_by("sort_order")

        response = post_image_op(editor_client, runway, first.pk, "delete")

        runway.refresh_from_db()
        assert (runway.cover_id, runway.image_count) == (second.pk, 2)
        assert messages_of(response) == [
            f"Deleted image 1 (id {first.pk}); the cover moved to image 2 (id {second.pk})."
        ]
        assert response.redirect_chain[-1][0] == change_url(runway) + "#images"

    def test_make_cover(self, editor_client):
        runway = make_runway(images=3)
        last = runway.images.order_by("sort_order").last()

        post_image_op(editor_client, runway, last.pk, "cover")

        runway.refresh_from_db()
        assert runway.cover_id == last.pk

    def test_street_attach_detach_and_attach_selected(self, editor_client):
        snap = make_street_snap(images=4)  # main, detail, main, detail
        a, a_detail, b, b_detail = snap.images.order_by("sort_order")

        post_image_op(editor_client, snap, b.pk, "attach-previous")
        assert set(snap.images.filter(parent=a).values_list("pk", flat=True)) == {
            a_detail.pk,
            b.pk,
            b_detail.pk,
        }

        post_image_op(editor_client, snap, b.pk, "detach")
        page = editor_client.get(change_url(snap))
        editor_client.post(
            url(snap, "attach", snap.pk),
            {**form_data(page, "image-ops"), "main": b.pk, "images": [a_detail.pk, b_detail.pk]},
        )

        assert set(snap.images.filter(parent=b).values_list("pk", flat=True)) == {
            a_detail.pk,
            b_detail.pk,
        }
        assert not snap.images.filter(parent=a).exists()

    def test_attach_selected_moves_a_main_image_with_its_own_detail(self, editor_client):
        snap = make_street_snap(images=4)  # main, detail, main, detail
        a, a_detail, b, b_detail = snap.images.order_by("sort_order")
        page = editor_client.get(change_url(snap))

        response = editor_client.post(
            url(snap, "attach", snap.pk),
            {**form_data(page, "image-ops"), "main": a.pk, "images": [b.pk, b_detail.pk]},
            follow=True,
        )

        assert set(snap.images.filter(parent=a).values_list("pk", flat=True)) == {
            a_detail.pk,
            b.pk,
            b_detail.pk,
        }
        assert messages_of(response) == [
            f"Images 3 (id {b.pk}), 4 (id {b_detail.pk}) attached to main image 1 (id {a.pk})."
        ]
        assert StreetSnap.objects.get(pk=snap.pk).version == 2

    def test_attach_selected_refuses_the_main_image_itself(self, editor_client):
        snap = make_street_snap(images=4)
        a, a_detail, b, _ = snap.images.order_by("sort_order")
        page = editor_client.get(change_url(snap))

        response = editor_client.post(
            url(snap, "attach", snap.pk),
            {**form_data(page, "image-ops"), "main": a.pk, "images": [a.pk, b.pk]},
            follow=True,
        )

        assert "cannot be a detail of itself" in messages_of(response)[0]
        assert StreetSnap.objects.get(pk=snap.pk).version == 1

    def test_a_refused_operation_says_why(self, editor_client):
        snap = make_street_snap(images=2)
        main = snap.images.order_by("sort_order").first()

        response = post_image_op(editor_client, snap, main.pk, "detach")

        assert messages_of(response) == [f"Image {main.pk} is already a main image."]

    def test_an_image_of_another_album_is_refused(self, editor_client):
        runway, other = make_runway(images=1), make_runway(images=1)
        foreign = other.images.get()

        response = post_image_op(editor_client, runway, foreign.pk, "delete")

        assert RunwayImage.objects.get(pk=foreign.pk).deleted_at is None
        assert "is not an image of" in messages_of(response)[0]

    def test_curation_is_logged_in_the_admin_history(self, editor_client):
        runway = make_runway(images=2)
        last = runway.images.order_by("sort_order").last()

        post_image_op(editor_client, runway, last.pk, "cover")

        history = editor_client.get(url(runway, "history", runway.pk)).content.decode()
        assert f"Image 2 (id {last.pk}) is now the cover." in history

    def test_operations_need_post_and_a_csrf_token(self, editor):
        runway = make_runway(images=2)
        image = runway.images.first()
        strict = Client(enforce_csrf_checks=True)
        strict.force_login(editor)

        got = strict.get(url(runway, "image", runway.pk, image.pk, "delete"))
        posted = strict.post(url(runway, "image", runway.pk, image.pk, "delete"), {})

        assert got.status_code == 302 and posted.status_code == 403
        assert RunwayImage.objects.get(pk=image.pk).deleted_at is None


# --- permissions ------------------------------------------------------------------------------


class TestPermissions:
    @pytest.fixture
    def junior_client(self, make_editor):
        client = Client()
        client.force_login(make_editor("junior", publish=False))
        return client

    @pytest.mark.parametrize("make", KINDS)
    def test_without_publish_no_approve_or_unpublish_controls(self, make, junior_client):
        pending, published = make(), make(published=True)
        model = type(pending)

        pending_page = junior_client.get(change_url(pending)).content.decode()
        published_page = junior_client.get(change_url(published)).content.decode()
        listing = junior_client.get(url(model, "changelist"))

        assert "Approve and publish" not in pending_page and "Reject…" in pending_page
        assert "Unpublish…" not in published_page
        actions = {name for name, _ in listing.context["action_form"].fields["action"].choices}
        assert actions == {"", "reject_selected"}

    @pytest.mark.parametrize("make", KINDS)
    def test_without_publish_a_published_album_is_read_only_and_says_why(self, make, junior_client):
        pending, published = make(images=2), make(images=2, published=True)

        pending_page = junior_client.get(change_url(pending)).content.decode()
        published_page = junior_client.get(change_url(published)).content.decode()

        assert 'name="title"' in pending_page and "data-review-curation" in pending_page
        assert 'name="title"' not in published_page
        assert "data-review-curation" not in published_page  # no image buttons
        assert "You can see this album but not change it: it is published" in published_page
        assert "review-readonly-note" not in pending_page

    def test_without_publish_a_save_onto_an_album_published_meanwhile_says_what_happened(
        self, junior_client, make_editor
    ):
        # Given a junior editor's page, loaded while the album was pending
        runway = make_runway(title="Before")
        page = junior_client.get(change_url(runway))
        record_approve(record=runway, actor=make_editor("anna"))

        # When they save an edit after Anna published it
        response = junior_client.post(
            change_url(runway), form_data(page, "runway_form", title="Renamed"), follow=True
        )

        # Then no 403: a message says who published it, and nothing is saved
        assert response.status_code == 200
        [message] = messages_of(response)
        assert "status changed from pending to published by anna" in message
        assert Runway.objects.get(pk=runway.pk).title == "Before"

    def test_without_publish_a_current_save_of_a_published_album_is_refused_in_words(
        self, junior_client
    ):
        runway = make_runway(title="Public", published=True)
        page = junior_client.get(change_url(runway))
        token = form_data(page, "transition-form")["loaded"]

        response = junior_client.post(
            change_url(runway),
            {"loaded": token, "title": "Renamed", "brand": runway.brand_id},
            follow=True,
        )

        [message] = messages_of(response)
        assert "is published, so it is on the public site" in message
        assert Runway.objects.get(pk=runway.pk).title == "Public"
        assert not ReviewEvent.objects.exists()

    @pytest.mark.parametrize("published", [False, True], ids=["pending", "published"])
    def test_a_save_by_an_editor_who_may_publish_reads_the_album_once_before_its_lock(
        self, editor_client, published
    ):
        # Given an editor who may publish, on an album's page
        runway = make_runway(title="Before", published=published)
        page = editor_client.get(change_url(runway))
        table = connection.ops.quote_name(Runway._meta.db_table)

        # When they save an edit
        with CaptureQueriesContext(connection) as queries:
            response = editor_client.post(
                change_url(runway), form_data(page, "runway_form", title="After")
            )

        # Then the album's row is read by Django's change view and under the service's lock,
        # and by nothing else (no check of whether they may publish: they may)
        reads = [
            query["sql"]
            for query in queries.captured_queries
            if query["sql"].startswith("SELECT") and f'{table}."id" = {runway.pk}' in query["sql"]
        ]
        assert response.status_code == 302
        assert Runway.objects.get(pk=runway.pk).title == "After"
        assert len(reads) == 2
        assert sum("FOR UPDATE" in sql for sql in reads) == (connection.vendor == "postgresql")

    @pytest.mark.parametrize("make", KINDS)
    def test_without_publish_images_of_a_published_album_cannot_be_deleted(
        self, make, junior_client
    ):
        record = make(images=2, published=True)
        page = junior_client.get(change_url(record))

        for image in list(record.images.all()):
            response = post_image_op(junior_client, record, image.pk, "delete", page=page)
            assert "is published, so it is on the public site" in messages_of(response)[0]

        assert record.images.live().count() == 2
        assert type(record).objects.get(pk=record.pk).image_count == 2
        assert not ReviewEvent.objects.exists()

    def test_without_publish_approve_through_the_admin_is_refused(self, junior_client):
        runway = make_runway(title="Stay")
        page = junior_client.get(change_url(runway))

        response = junior_client.post(
            change_url(runway),
            form_data(page, "runway_form", title="Sneaky", _approve="1"),
            follow=True,
        )
        bulk = junior_client.post(
            url(Runway, "changelist"),
            {"action": "approve_selected", "_selected_action": [runway.pk]},
            follow=True,
        )
        unpublish = junior_client.get(url(runway, "unpublish", runway.pk))

        runway.refresh_from_db()
        assert (runway.status, runway.title) == ("pending", "Stay")  # edits rolled back too
        assert "You do not have permission to approve runways." in messages_of(response)
        # The junior is offered no approve action, so Django runs none
        assert messages_of(bulk) == ["No action selected."]
        assert unpublish.status_code == 403
        assert not ReviewEvent.objects.exists()

    @pytest.fixture
    def publisher_client(self):
        # May view, approve, reject and unpublish, but not edit fields or curate images.
        group = Group.objects.create(name="Publishers")
        group.permissions.set(editors_group().permissions.exclude(codename__startswith="change_"))
        user = User.objects.create_user("pia", is_staff=True)
        user.groups.add(group)
        client = Client()
        client.force_login(user)
        return client

    @pytest.mark.parametrize("make", KINDS)
    def test_approve_needs_only_the_publish_permission_on_the_page_and_in_bulk(
        self, make, publisher_client
    ):
        one, other = make(title="From the page"), make(title="From the list")
        model = type(one)
        page = publisher_client.get(change_url(one))
        assert "Approve and publish" in page.content.decode()
        assert 'name="title"' not in page.content.decode()  # read-only: no edits to save

        from_page = publisher_client.post(
            url(one, "approve", one.pk), form_data(page, "transition-form"), follow=True
        )
        in_bulk = publisher_client.post(
            url(model, "changelist"),
            {"action": "approve_selected", "_selected_action": [other.pk]},
            follow=True,
        )

        assert model.objects.get(pk=one.pk).status == "published"
        assert model.objects.get(pk=other.pk).status == "published"
        assert f"Approved and published “{one}”." in messages_of(from_page)
        assert messages_of(in_bulk) == [f"Approved 1 {model._meta.verbose_name}."]

    def test_without_the_change_permission_an_approve_carries_no_edits(self, publisher_client):
        runway = make_runway(title="As crawled")
        page = publisher_client.get(change_url(runway))

        refused = publisher_client.post(
            change_url(runway), form_data(page, "transition-form", title="Sneaky", _approve="1")
        )

        assert refused.status_code == 403  # the change form takes no edits from them
        runway.refresh_from_db()
        assert (runway.status, runway.title) == ("pending", "As crawled")

    def test_without_publish_the_approve_url_is_refused(self, junior_client):
        runway = make_runway()
        page = junior_client.get(change_url(runway))

        response = junior_client.post(
            url(runway, "approve", runway.pk), form_data(page, "transition-form")
        )

        assert response.status_code == 403
        assert Runway.objects.get(pk=runway.pk).status == "pending"

    def test_a_stale_approve_from_the_read_only_page_is_refused(
        self, publisher_client, make_editor
    ):
        runway = make_runway(title="Shared")
        page = publisher_client.get(change_url(runway))
        record_update(actor=curator(), record=runway, changes={"title": "Changed meanwhile"})

        response = publisher_client.post(
            url(runway, "approve", runway.pk), form_data(page, "transition-form"), follow=True
        )

        assert Runway.objects.get(pk=runway.pk).status == "pending"
        assert "changed since you opened it" in messages_of(response)[0]

    def test_a_staff_user_outside_the_group_sees_nothing(self):
        stranger = User.objects.create_user("stranger", is_staff=True)
        client = Client()
        client.force_login(stranger)
        runway = make_runway()

        assert client.get(url(Runway, "changelist")).status_code == 403
        assert client.get(change_url(runway)).status_code == 403

    def test_editors_cannot_add_delete_records_or_edit_history(self, editor_client, editor):
        runway = make_runway()
        record_approve(record=runway, actor=editor)
        event = ReviewEvent.objects.get()

        assert editor_client.get(url(Runway, "add")).status_code == 403
        assert editor_client.get(url(runway, "delete", runway.pk)).status_code == 403
        assert editor_client.post(url(event, "delete", event.pk)).status_code == 403
        page = editor_client.get(url(event, "change", event.pk))
        assert page.status_code == 200 and 'name="reason"' not in page.content.decode()


class TestEditingAPublishedAlbum:
    @pytest.mark.parametrize("make", KINDS)
    def test_an_edit_is_saved_and_shows_in_the_history(self, make, editor_client, editor):
        record = make(title="Acme", published=True)
        page = editor_client.get(change_url(record))

        editor_client.post(change_url(record), form_data(page, main_form(record), title="Acme FW"))

        record.refresh_from_db()
        assert (record.status, record.title) == ("published", "Acme FW")
        event = ReviewEvent.objects.get()
        assert (event.action, event.actor, event.changes) == (
            "edit",
            editor,
            {"title": ["Acme", "Acme FW"]},
        )
        html = editor_client.get(change_url(record)).content.decode()
        assert "Edited while published" in html and "“Acme” → “Acme FW”" in html

    def test_an_image_operation_shows_in_the_history_with_what_was_done(self, editor_client):
        runway = make_runway(images=3, published=True)
        first, second, _ = runway.images.order_by("sort_order")

        post_image_op(editor_client, runway, first.pk, "delete")

        event = ReviewEvent.objects.get()
        assert (event.action, event.reason) == (
            "edit",
            f"Deleted image 1 (id {first.pk}); the cover moved to image 2 (id {second.pk}).",
        )
        assert event.record_version == Runway.objects.get(pk=runway.pk).version

    @pytest.mark.parametrize("make", KINDS)
    def test_the_last_image_cannot_be_deleted_and_the_message_says_unpublish_first(
        self, make, editor_client
    ):
        record = make(images=1, published=True)
        image = record.images.get()

        response = post_image_op(editor_client, record, image.pk, "delete")

        [message] = messages_of(response)
        assert f"Image {image.pk} is the last image of" in message
        assert "unpublish the album first" in message
        assert record.images.live().count() == 1
        assert not ReviewEvent.objects.exists()


# --- brands -----------------------------------------------------------------------------------


def test_an_editor_adds_an_alias_to_a_brand(editor_client):
    brand = BrandFactory(name="Acne Studios", slug="acne-studios")
    page = editor_client.get(url(brand, "change", brand.pk))
    data = form_data(page, "brand_form", **{"aliases-0-alias": "ACNE"})

    response = editor_client.post(url(brand, "change", brand.pk), data)

    assert response.status_code == 302
    assert list(brand.aliases.values_list("alias", flat=True)) == ["ACNE"]
    assert "aliases-TOTAL_FORMS" in page_forms(page)["brand_form"]


class TestBrandAliases:
    def post_aliases(self, client, brand, *aliases: str, **extra):
        """Save the brand's page with `aliases` typed into its empty alias rows."""
        page = client.get(url(brand, "change", brand.pk))
        data = form_data(page, "brand_form")
        existing = int(data["aliases-INITIAL_FORMS"])
        for n, alias in enumerate(aliases, start=existing):
            data[f"aliases-{n}-alias"] = alias
            data[f"aliases-{n}-brand"] = str(brand.pk)
        data["aliases-TOTAL_FORMS"] = str(existing + len(aliases))
        data.update(extra)
        return client.post(url(brand, "change", brand.pk), data, follow=True)

    def row_errors(self, response) -> list[str]:
        [formset] = response.context["inline_admin_formsets"]
        return [str(error) for form in formset.formset.forms for error in form.errors.values()]

    def test_one_alias_typed_twice_in_different_capitals_is_a_row_error(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")

        response = self.post_aliases(editor_client, brand, "ACNE", "acne")

        assert response.status_code == 200
        [error] = self.row_errors(response)
        assert "“acne” is the same alias as “ACNE”" in error
        assert "capitals and spaces do not count" in error
        assert not brand.aliases.exists()

    def test_the_same_alias_spaced_differently_is_one_alias(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")

        response = self.post_aliases(editor_client, brand, "Acne Studios", " acne   studios")

        assert "is the same alias as “Acne Studios”" in self.row_errors(response)[0]
        assert not brand.aliases.exists()

    def test_an_alias_another_brand_holds_names_that_brand(self, editor_client):
        BrandAliasFactory(
            brand=BrandFactory(name="Acne Studios", slug="acne-studios"), alias="Acne"
        )
        other = BrandFactory(name="Acme", slug="acme")

        response = self.post_aliases(editor_client, other, "ACNE")

        [error] = self.row_errors(response)
        assert "“ACNE” is already an alias of Acne Studios" in error
        assert "Constraint" not in response.content.decode()
        assert not other.aliases.exists()

    def test_an_alias_is_saved_with_its_spaces_folded_and_then_resolves(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")

        self.post_aliases(editor_client, brand, "  ACNE \t  Paris ")

        assert list(brand.aliases.values_list("alias", flat=True)) == ["ACNE Paris"]
        assert brand_resolve(name="acne  paris") == brand

    def test_every_writer_folds_the_spaces(self):
        alias = BrandAliasFactory(alias="Acne  Studios\n")

        assert BrandAlias.objects.get(pk=alias.pk).alias == "Acne Studios"

    def test_an_editor_deletes_an_alias(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")
        BrandAliasFactory(brand=brand, alias="Wrong brand name")

        response = self.post_aliases(editor_client, brand, **{"aliases-0-DELETE": "on"})

        assert response.redirect_chain[-1][0] == url(brand, "changelist")
        assert not brand.aliases.exists()

    def test_renaming_one_row_frees_its_alias_for_a_new_row(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")
        BrandAliasFactory(brand=brand, alias="Acne")

        self.post_aliases(editor_client, brand, "acne", **{"aliases-0-alias": "Acne Paris"})

        assert sorted(brand.aliases.values_list("alias", flat=True)) == ["Acne Paris", "acne"]

    def test_an_alias_another_editor_saved_meanwhile_is_a_message(self, editor_client, monkeypatch):
        # Given another editor who saves "ACNE" for another brand after this page's checks
        # passed, and before its save
        brand = BrandFactory(name="Acme", slug="acme")
        holder = BrandFactory(name="Acne Studios", slug="acne-studios")
        checked = review_forms.BrandAliasFormSet.clean

        def clean_then_lose_the_race(formset):
            checked(formset)
            BrandAlias.objects.create(brand=holder, alias="acne")

        monkeypatch.setattr(review_forms.BrandAliasFormSet, "clean", clean_then_lose_the_race)

        # When this editor saves the alias
        response = self.post_aliases(editor_client, brand, "ACNE", name="Acme Paris")

        # Then nothing of the save is kept, and the message says why
        [message] = messages_of(response)
        assert "Nothing was saved" in message and "already" in message
        assert not brand.aliases.exists()
        assert Brand.objects.get(pk=brand.pk).name == "Acme"


def test_street_snaps_and_runways_are_separate_queues(editor_client):
    StreetSnapFactory()
    RunwayFactory()

    runways = editor_client.get(url(Runway, "changelist"))
    snaps = editor_client.get(url(StreetSnap, "changelist"))

    assert runways.context["cl"].result_count == snaps.context["cl"].result_count == 1
