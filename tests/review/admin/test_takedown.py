"""Take down from the admin (review.admin.views.takedown): a button on the album's page and
a link on each image, each asking for the reason; and the admin still shows every image of
the albums it reviews, though pending and rejected ones have no public URL. Portable."""

import re

import pytest
from django.test import Client

from catalog.models import Runway
from review.models import ReviewEvent
from tests.review.admin.support import KINDS, change_url, messages_of, url
from tests.review.support import form_data, make_runway

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("make", KINDS)
def test_the_album_page_takes_an_album_down_with_a_reason(make, editor_client):
    record = make(images=2, published=True)
    page = editor_client.get(change_url(record))
    assert "Take down…" in page.content.decode()

    form = editor_client.post(
        url(record, "takedown", record.pk), form_data(page, "transition-form")
    )
    assert form.status_code == 200
    assert "Also delete the album" in form.content.decode()
    response = editor_client.post(
        url(record, "takedown", record.pk),
        {**form_data(form, "reason-form"), "reason": "The agency asked", "delete": "on"},
        follow=True,
    )

    record.refresh_from_db()
    assert (record.status, record.deleted_at is not None) == ("rejected", True)
    assert messages_of(response) == [f"Took “{record}” down and deleted it: The agency asked"]
    event = ReviewEvent.objects.get(action="takedown")
    assert (event.actor.username, event.reason) == ("anna", "The agency asked")


def test_an_editor_without_the_permission_sees_no_button_and_is_refused(make_editor):
    record = make_runway(images=1, published=True)
    editor = make_editor("bob")
    editor.groups.first().permissions.remove(
        *editor.groups.first().permissions.filter(codename__startswith="takedown_")
    )
    client = Client()
    client.force_login(editor)

    assert "Take down…" not in client.get(change_url(record)).content.decode()
    assert client.post(url(record, "takedown", record.pk), {}).status_code == 403


def test_an_image_is_taken_down_from_its_tile(editor_client):
    runway = make_runway(images=3, published=True)
    gone = runway.images.order_by("sort_order")[1]
    page = editor_client.get(change_url(runway))
    link = re.search(rf'href="([^"]*/images/{gone.pk}/takedown/[^"]*)"', page.content.decode())
    assert link is not None

    form = editor_client.get(link.group(1).replace("&amp;", "&"))
    response = editor_client.post(
        link.group(1).replace("&amp;", "&"),
        {**form_data(form, "reason-form"), "reason": "The model asked"},
        follow=True,
    )

    gone.refresh_from_db()
    assert gone.deleted_at is not None
    assert messages_of(response)[0].endswith("The model asked")
    assert Runway.objects.get(pk=runway.pk).status == "published"


def test_the_admin_shows_pending_images_that_have_no_public_url(editor_client):
    anonymous = Client()
    runway = make_runway(images=2)  # pending: nobody outside may see its images
    html = editor_client.get(change_url(runway)).content.decode()
    # Each tile opens its original full size (its thumbnail, a rendition, is at the same kind
    # of address once made).
    sources = re.findall(r'<a href="([^"]+)" target="_blank"', html)
    assert len(sources) == 2

    for src in sources:
        assert src.startswith("/admin/media/")
        answer = editor_client.get(src)
        assert answer.status_code == 200
        assert answer["Cache-Control"] == "private, max-age=3600"
        # Not to anyone else, at either address.
        assert anonymous.get(src).status_code == 403
        public = anonymous.get(src.replace("/admin/media/", "/media/"))
        assert (public.status_code, public["Cache-Control"]) == (404, "no-store")
