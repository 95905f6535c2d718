"""Press previews on the album page (review.admin.views.previews): the links with their views
and last use, a form that makes one and shows its URL once, a Revoke button per link; and
who may do it. Portable."""

import re

import pytest
from django.test import Client

from review.models import PreviewLink
from review.services import preview_link_make
from tests.review.admin.support import KINDS, change_url, messages_of, url
from tests.review.support import form_data, make_runway

pytestmark = pytest.mark.django_db


def made_url(html: str) -> str:
    found = re.search(r'id="preview-made-url" value="([^"]+)"', html)
    assert found is not None, "no new link shown"
    return found.group(1)


@pytest.mark.parametrize("make", KINDS)
def test_an_editor_makes_a_link_and_copies_it_once(make, editor_client):
    record = make(images=2)
    page = editor_client.get(change_url(record))

    response = editor_client.post(
        url(record, "previewmake", record.pk),
        form_data(page, "preview-make", label="Le Monde, Anne"),
        follow=True,
    )

    html = response.content.decode()
    link = PreviewLink.objects.get()
    assert (link.record, link.label, link.made_by.username) == (record, "Le Monde, Anne", "anna")
    assert (link.expires_at - link.made_at).total_seconds() == 48 * 3600  # the form's default
    assert messages_of(response)[0].startswith("Made a preview link for Le Monde, Anne.")
    shown = made_url(html)
    assert shown.startswith("http://testserver/preview/")
    assert Client().get(shown).status_code == 200
    # Shown once: the next load of the page lists the link, not its URL.
    again = editor_client.get(change_url(record)).content.decode()
    assert "Le Monde, Anne" in again and shown not in again


def test_more_than_7_days_is_refused_with_a_message(editor_client):
    record = make_runway(images=1)
    page = editor_client.get(change_url(record))

    response = editor_client.post(
        url(record, "previewmake", record.pk),
        form_data(page, "preview-make", label="Vogue", hours="169"),
        follow=True,
    )

    assert not PreviewLink.objects.exists()
    assert "168" in messages_of(response)[0] and "No link was made" in messages_of(response)[0]


def test_a_public_album_offers_no_form_and_refuses_a_post(editor_client):
    record = make_runway(images=1, published=True)

    page = editor_client.get(change_url(record)).content.decode()
    response = editor_client.post(
        url(record, "previewmake", record.pk), {"label": "Vogue", "hours": "48"}, follow=True
    )

    assert 'id="preview-make"' not in page and "share its public page" in page
    assert "public already" in messages_of(response)[0]
    assert not PreviewLink.objects.exists()


def test_the_list_shows_views_and_last_use_and_revokes(editor, editor_client):
    record = make_runway(images=1)
    link, token = preview_link_make(record=record, actor=editor, label="Elle")
    Client().get(f"/preview/{token}/")
    Client().get(f"/preview/{token}/")

    page = editor_client.get(change_url(record))
    row = re.search(r"<tr>\s*<td>Elle</td>(.*?)</tr>", page.content.decode(), re.S).group(1)
    assert "<td>2</td>" in row and "never" not in row and "valid" in row

    response = editor_client.post(
        url(record, "previewrevoke", record.pk, link.pk),
        form_data(page, f"preview-revoke-{link.pk}"),
        follow=True,
    )

    link.refresh_from_db()
    assert (link.revoked_by, link.revoked_at is not None) == (editor, True)
    assert messages_of(response) == [
        "Revoked the preview link for Elle: it shows nothing any more."
    ]
    assert Client().get(f"/preview/{token}/").status_code == 404
    assert f'id="preview-revoke-{link.pk}"' not in response.content.decode()


def test_a_link_of_another_album_is_not_revoked_from_this_one(editor, editor_client):
    record, other = make_runway(images=1), make_runway(images=1)
    link, _ = preview_link_make(record=other, actor=editor, label="Elle")

    response = editor_client.post(url(record, "previewrevoke", record.pk, link.pk))

    assert response.status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None


def test_an_editor_who_may_not_publish_sees_the_links_but_no_buttons(make_editor, editor):
    record = make_runway(images=1)
    link, _ = preview_link_make(record=record, actor=editor, label="Elle")
    junior = Client()
    junior.force_login(make_editor("junior", publish=False))

    page = junior.get(change_url(record)).content.decode()

    assert "Elle" in page
    assert 'id="preview-make"' not in page and "preview-revoke-" not in page
    assert junior.post(url(record, "previewmake", record.pk), {"label": "x"}).status_code == 403
    revoke = url(record, "previewrevoke", record.pk, link.pk)
    assert junior.post(revoke).status_code == 403
