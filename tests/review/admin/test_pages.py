"""Every page of the editors' admin renders, with query counts that do not grow with
the page: the lists, the record pages, the reason pages, brands and the history. Portable."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from catalog.models import Runway, RunwayImage, StreetSnapImage
from review.models import ReviewEvent
from review.services import Action, record_approve, record_reject
from tests.factories import BrandAliasFactory
from tests.review.admin.support import (
    KINDS,
    change_url,
    count_queries,
    duplicate_notes,
    url,
)
from tests.review.support import (
    make_runway,
    make_street_snap,
)

pytestmark = pytest.mark.django_db


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
        # The cover: a placeholder until its renditions exist (never the original)
        assert 'class="review-list-thumb review-placeholder"' in html
        assert pending.cover.storage_key not in html
        tabs = {t["label"]: (t["count"], t["current"]) for t in response.context["status_tabs"]}
        assert tabs == {
            "Pending review": (1, True),
            "Published": (1, False),
            "Scheduled": (0, False),
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
        # two of them: which albums the rows repeat (records_repeats), their re-posts
        assert many <= 14

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
        assert many <= 11  # the list behind the action reads its rows' repeats and re-posts

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
            record_reject(record=large, actor=bob, reason="Re-check", action=Action.UNPUBLISH)
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
