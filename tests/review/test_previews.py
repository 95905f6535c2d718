"""Press previews (review.services.previews, review.previews): a link to a read-only page of an
album not public yet, which expires and is revoked at once; its page and pictures are never
cached nor indexed, and a picture's URL is signed, short-lived, and dies with its link."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core import signing
from django.urls import reverse

from catalog.models import Runway, StreetSnap
from catalog.storage import rendition_key
from review.models import PreviewLink
from review.previews import PREVIEW_IMAGE_SECONDS
from review.services import (
    PREVIEW_HOURS_MAX,
    PreviewRefused,
    preview_link_make,
    preview_link_open,
    preview_link_revoke,
)
from tests.factories import RunwayFactory, StreetSnapFactory, store

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8 fake picture"


def with_renditions(record):
    """Every image of `record` with its 400 and 1200 renditions in the private store, as the
    renditions job leaves them."""
    for image in record.images.all():
        image.renditions = []
        for width in (400, 1200):
            key = rendition_key(sha1=image.sha1, width=width)
            store(key, WEBP + str(width).encode())
            image.renditions.append({"width": width, "height": width * 3 // 2, "key": key})
        image.rendition_status = "done"
        image.save(update_fields=["renditions", "rendition_status"])
    return record


@pytest.fixture
def album():
    return with_renditions(RunwayFactory(images=4, images__shots=2, title="Acme FW26"))


def page(client, token):
    return client.get(reverse("preview", args=[token]))


def image_urls(response) -> list[str]:
    """The picture URLs the page shows (src of each img), in order."""
    html = response.content.decode()
    return [part.split('"', 1)[0] for part in html.split(' src="')[1:]]


# --- making a link ------------------------------------------------------------------------


def test_a_link_lasts_48_hours_by_default_and_opens_the_page(client, album, editor):
    link, token = preview_link_make(record=album, actor=editor, label="Le Monde")

    response = page(client, token)

    assert link.expires_at - link.made_at == timedelta(hours=48)
    assert response.status_code == 200
    assert "Acme FW26" in response.content.decode()
    assert link.token_hash != token and token not in link.token_hash  # only its hash is kept


def test_a_link_may_last_7_days_not_more(album, editor):
    link, _ = preview_link_make(record=album, actor=editor, label="Vogue", hours=PREVIEW_HOURS_MAX)
    assert link.expires_at - link.made_at == timedelta(days=7)

    with pytest.raises(PreviewRefused, match="7 days"):
        preview_link_make(record=album, actor=editor, label="Vogue", hours=PREVIEW_HOURS_MAX + 1)
    assert PreviewLink.objects.count() == 1


def test_a_link_says_who_it_is_for(album, editor):
    for label in ("  ", "x" * 201):
        with pytest.raises(PreviewRefused, match="who the preview is for"):
            preview_link_make(record=album, actor=editor, label=label)
    assert not PreviewLink.objects.exists()


def test_a_public_album_gets_no_preview(editor):
    public = RunwayFactory(images=1, published=True)

    with pytest.raises(PreviewRefused, match="public already"):
        preview_link_make(record=public, actor=editor, label="Vogue")


def test_a_scheduled_album_gets_one_a_rejected_one_does_not(editor, embargo_clock):
    embargo_clock(START)
    scheduled = RunwayFactory(images=1, published=True, go_live_at=START + timedelta(days=2))
    rejected = RunwayFactory(images=1, status="rejected")

    link, _ = preview_link_make(record=scheduled, actor=editor, label="Vogue")

    assert link.runway == scheduled
    with pytest.raises(PreviewRefused, match="rejected"):
        preview_link_make(record=rejected, actor=editor, label="Vogue")


def test_only_an_editor_who_may_publish_the_kind_makes_or_revokes_one(album, make_editor):
    junior, senior = make_editor("junior", publish=False), make_editor("senior")

    with pytest.raises(PreviewRefused, match="permission"):
        preview_link_make(record=album, actor=junior, label="Vogue")
    link, _ = preview_link_make(record=album, actor=senior, label="Vogue")
    with pytest.raises(PreviewRefused, match="permission"):
        preview_link_revoke(link=link, actor=junior)
    link.refresh_from_db()
    assert link.revoked_at is None


def test_a_street_album_has_previews_too(client, editor):
    snap = with_renditions(StreetSnapFactory(images=3, images__details=True, title="Paris"))

    link, token = preview_link_make(record=snap, actor=editor, label="Elle")
    response = page(client, token)

    assert link.record == snap and link.runway is None
    assert response.status_code == 200
    assert len(image_urls(response)) == 3
    assert 'alt="Picture 1, detail 1"' in response.content.decode()


# --- opening it: expiry, revocation, counting -------------------------------------------------


def test_the_link_expires_at_its_time(client, album, editor, embargo_clock):
    clock = embargo_clock(START)
    _, token = preview_link_make(record=album, actor=editor, label="Vogue", hours=2)

    clock.move_to(START + timedelta(hours=2) - timedelta(seconds=1))
    assert page(client, token).status_code == 200
    clock.move_to(START + timedelta(hours=2))
    assert page(client, token).status_code == 404


def test_a_revoked_link_shows_nothing_at_once_even_a_valid_image_url(client, album, editor):
    link, token = preview_link_make(record=album, actor=editor, label="Vogue")
    shown = page(client, token)
    urls = image_urls(shown)
    assert urls and client.get(urls[0]).status_code == 200

    assert preview_link_revoke(link=link, actor=editor) is True

    assert page(client, token).status_code == 404
    # The picture URLs' signatures are still good: the link is checked at every request.
    assert [client.get(url).status_code for url in urls] == [404] * len(urls)
    assert preview_link_revoke(link=link, actor=editor) is False  # once is enough


def test_an_image_url_dies_with_its_link_however_fresh(client, album, editor, embargo_clock):
    clock = embargo_clock(START)
    _, token = preview_link_make(record=album, actor=editor, label="Vogue", hours=1)
    clock.move_to(START + timedelta(minutes=59))
    url = image_urls(page(client, token))[0]

    clock.move_to(START + timedelta(hours=1, seconds=1))  # one minute after it was signed

    assert client.get(url).status_code == 404


def test_an_image_url_lasts_minutes_not_the_links_life(client, album, editor, embargo_clock):
    clock = embargo_clock(START)
    _, token = preview_link_make(record=album, actor=editor, label="Vogue")
    url = image_urls(page(client, token))[0]

    clock.move_to(START + timedelta(seconds=PREVIEW_IMAGE_SECONDS - 1))
    assert client.get(url).status_code == 200
    clock.move_to(START + timedelta(seconds=PREVIEW_IMAGE_SECONDS + 1))
    assert client.get(url).status_code == 404


def test_a_tampered_image_url_is_refused(client, album, editor):
    link, token = preview_link_make(record=album, actor=editor, label="Vogue")
    url = image_urls(page(client, token))[0]
    other = album.images.order_by("-pk").first()
    signed = url.rstrip("/").rsplit("/", 1)[-1]
    value, stamp, signature = signed.rsplit(":", 2)
    forged = f"{link.pk}.{other.pk}.1200:{stamp}:{signature}"
    unsigned = signing.TimestampSigner(salt="something else").sign(f"{link.pk}.{other.pk}.400")

    for bad in (forged, unsigned, signed[:-2] + "xx", "nothing"):
        assert client.get(reverse("preview-image", args=[bad])).status_code == 404


def test_an_image_of_another_album_is_not_shown_through_a_link(client, album, editor):
    link, _ = preview_link_make(record=album, actor=editor, label="Vogue")
    stranger = with_renditions(RunwayFactory(images=1)).images.get()
    signed = signing.TimestampSigner(salt="review.previews.image").sign(
        f"{link.pk}.{stranger.pk}.400"
    )

    assert client.get(reverse("preview-image", args=[signed])).status_code == 404


def test_an_unknown_token_is_a_404_like_a_revoked_one(client, album):
    response = page(client, "not-a-token")

    assert response.status_code == 404
    assert response["Cache-Control"] == "private, no-store"
    assert response["X-Robots-Tag"] == "noindex"


def test_a_taken_down_album_shows_nothing(client, album, editor):
    _, token = preview_link_make(record=album, actor=editor, label="Vogue")
    Runway.objects.filter(pk=album.pk).update(status="rejected")

    assert page(client, token).status_code == 404


def test_each_view_is_counted_with_its_time(client, album, editor, embargo_clock):
    clock = embargo_clock(START)
    link, token = preview_link_make(record=album, actor=editor, label="Vogue")
    page(client, token)
    clock.move_to(START + timedelta(minutes=5))
    page(client, token)
    image_urls(page(client, "wrong"))

    link.refresh_from_db()
    assert link.view_count == 2
    assert link.last_used_at == START + timedelta(minutes=5)
    assert preview_link_open(token="wrong") is None


# --- the page and its pictures -----------------------------------------------------------------


def test_page_and_pictures_are_never_cached_nor_indexed(client, album, editor):
    _, token = preview_link_make(record=album, actor=editor, label="Vogue")
    response = page(client, token)
    picture = client.get(image_urls(response)[0])

    for answer in (response, picture):
        assert answer["Cache-Control"] == "private, no-store"
        assert answer["X-Robots-Tag"] == "noindex"
    assert picture["Content-Type"] == "image/webp"
    assert b"".join(picture.streaming_content) == WEBP + b"400"


def test_pictures_come_in_look_order_with_alt_text(client, editor):
    runway = RunwayFactory(images=[{"look_index": 2}, {"look_index": 1}, {"look_index": 1}])
    with_renditions(runway)
    _, token = preview_link_make(record=runway, actor=editor, label="Vogue")

    html = page(client, token).content.decode()

    assert html.index(">Look 1<") < html.index(">Look 2<")
    assert 'alt="Look 1, picture 1 of 2"' in html and 'alt="Look 2"' in html
    assert 'lang="en"' in html and 'name="robots" content="noindex' in html


def test_a_picture_without_renditions_is_said_not_shown(client, editor):
    runway = RunwayFactory(images=2)  # renditions not made yet: originals are not sent
    _, token = preview_link_make(record=runway, actor=editor, label="Vogue")

    response = page(client, token)

    assert image_urls(response) == []
    assert response.content.decode().count("Not ready yet") == 2


@pytest.mark.parametrize("pictures", [2, 60])
def test_the_page_does_the_same_queries_whatever_its_size(
    client, editor, pictures, django_assert_num_queries
):
    runway = with_renditions(RunwayFactory(images=pictures, images__shots=2))
    _, token = preview_link_make(record=runway, actor=editor, label="Vogue")

    # The link with its album and brand, the view's count, the pictures.
    with django_assert_num_queries(3):
        response = page(client, token)
    assert len(image_urls(response)) == pictures


def test_a_street_album_with_a_deleted_picture_hides_it(client, editor):
    snap = with_renditions(StreetSnapFactory(images=2, images__details=False))
    gone = snap.images.order_by("sort_order").last()
    _, token = preview_link_make(record=snap, actor=editor, label="Vogue")
    urls = image_urls(page(client, token))
    StreetSnap.image_model().objects.filter(pk=gone.pk).update(deleted_at=START)

    assert len(urls) == 2
    assert client.get(urls[1]).status_code == 404
    assert len(image_urls(page(client, token))) == 1


def test_the_request_log_keeps_the_route_not_the_key(client, album, editor, caplog):
    _, token = preview_link_make(record=album, actor=editor, label="Vogue")

    with caplog.at_level("INFO", logger="config.requests"):
        url = image_urls(page(client, token))[0]
        client.get(url)

    assert "GET /preview/…/ 200" in caplog.text and "GET /preview/images/…/ 200" in caplog.text
    assert token not in caplog.text and url.split("/")[-2] not in caplog.text


def test_pictures_stream_from_a_private_bucket_and_stay_private(client, editor, s3_storage):
    from django.core.files.storage import storages

    album = with_renditions(RunwayFactory(images=2))
    _, token = preview_link_make(record=album, actor=editor, label="Vogue")

    picture = client.get(image_urls(page(client, token))[0])

    assert picture.status_code == 200
    assert b"".join(picture.streaming_content) == WEBP + b"400"
    assert picture["Cache-Control"] == "private, no-store"
    public = storages["public"]
    assert public.listdir("")[1] == [] and public.listdir("")[0] == []  # nothing published


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_views_at_once_both_count():
    from django.contrib.auth.models import User
    from django.db import transaction

    from tests.review.test_concurrency import in_thread, wait_until_a_backend_waits_for_a_lock

    album = RunwayFactory(images=1)
    editor = User.objects.create_superuser("anna")
    link, token = preview_link_make(record=album, actor=editor, label="Vogue")

    with transaction.atomic():
        assert preview_link_open(token=token) is not None  # holds the row until commit
        thread, outcome = in_thread(lambda: preview_link_open(token=token))
        wait_until_a_backend_waits_for_a_lock()
    thread.join(timeout=30)

    link.refresh_from_db()
    assert outcome[0][0] == "ok" and link.view_count == 2
