"""Who may do what in the editors' admin (review.admin.records, RecordAdmin): the Editors group,
editors without the publish permission, publishers who may not edit. Portable."""

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import Runway
from catalog.services import record_update
from review.models import ReviewEvent
from review.services import record_approve
from tests.review.admin.support import (
    KINDS,
    change_url,
    messages_of,
    post_image_op,
    url,
)
from tests.review.support import (
    editors_group,
    form_data,
    make_runway,
)
from tests.support import curator

pytestmark = pytest.mark.django_db


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
        assert actions == {"", "reject_selected", "reject_repeats_selected"}

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
