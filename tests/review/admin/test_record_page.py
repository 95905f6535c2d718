"""The record page (review.admin.record_page): a save or an approve from a stale page,
and edits of a published album. Portable."""

import pytest
from django.test import Client

from catalog.models import Runway, StreetSnapImage
from review.models import ReviewEvent
from review.services import record_approve
from tests.review.admin.support import (
    KINDS,
    change_url,
    main_form,
    messages_of,
    post_image_op,
)
from tests.review.support import (
    form_data,
    make_runway,
    make_street_snap,
)

pytestmark = pytest.mark.django_db


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
