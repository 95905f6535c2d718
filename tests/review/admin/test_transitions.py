"""Approve, reject and unpublish from the record page and in bulk
(review.admin.views.transitions), through the transition services. Portable."""

import re

import pytest
from django.test import Client

from catalog.models import Runway
from catalog.services import runway_reopen
from review import services as review_services
from review.admin import record_page
from review.admin.views import transitions
from review.models import ReviewEvent
from review.services import record_approve, record_reject
from tests.review.admin.support import (
    KINDS,
    change_url,
    main_form,
    messages_of,
    url,
)
from tests.review.support import (
    form_data,
    make_runway,
    recrawl,
)

pytestmark = pytest.mark.django_db


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
    """Admin actions call the `<entity>_<action>` services (STYLE.md): record_approve, and
    record_reject with the action (reject or unpublish)."""

    @pytest.fixture
    def calls(self, monkeypatch):
        seen: list[tuple[str, str | None]] = []
        for name in ["record_approve", "record_reject"]:
            original = getattr(review_services, name)

            def spy(*, _name=name, _original=original, **kwargs):
                seen.append((_name, kwargs.get("action")))
                return _original(**kwargs)

            # Where the admin calls them: the record page saves (with approve), the
            # transitions views run the rest.
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

        assert calls == [("record_approve", None), ("record_approve", None)]
        assert set(Runway.objects.values_list("status", flat=True)) == {"published"}

    @pytest.mark.parametrize(
        ("action", "status"), [("reject", "pending"), ("unpublish", "published")]
    )
    def test_reject_and_unpublish_from_the_page_and_in_bulk(
        self, editor_client, calls, action, status
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

        assert calls == [("record_reject", action), ("record_reject", action)]
        assert set(Runway.objects.values_list("status", flat=True)) == {"rejected"}
