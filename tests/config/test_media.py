"""Django's own media routes (config/media.py): in the embedded mode /media/ answers from the
database at each request, with a Cache-Control; /admin/media/ is the editors'; the favicon
answers. Portable."""

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import Runway
from tests.visibility_support import album, keys_of

pytestmark = pytest.mark.django_db


def test_an_image_answers_exactly_while_a_published_album_shows_it(client):
    runway = album(status="published", photos=("astronaut", "coffee"))
    keys = sorted(keys_of(runway))

    for key in keys:
        response = client.get(f"/media/{key}")
        assert response.status_code == 200, key
        assert response["Cache-Control"] == "public, max-age=600"
        assert b"".join(response.streaming_content)

    Runway.objects.filter(pk=runway.pk).update(status="rejected")  # even by SQL: read each time

    for key in keys:
        response = client.get(f"/media/{key}")
        assert (response.status_code, response["Cache-Control"]) == (404, "no-store")


@pytest.mark.parametrize(
    "state",
    [{"status": "pending"}, {"status": "rejected"}, {"status": "published", "deleted_at": "now"}],
    ids=["pending", "rejected", "deleted"],
)
def test_nothing_unpublished_answers(client, state):
    if state.get("deleted_at"):
        state = {**state, "deleted_at": timezone.now()}
    runway = album(**state)

    for key in keys_of(runway):
        assert client.get(f"/media/{key}").status_code == 404


def test_a_deleted_image_of_a_published_album_does_not_answer_but_shared_bytes_do(client):
    a = album(status="published", photos=("astronaut", "coffee"))
    b = album(status="published", photos=("coffee",))
    for image in a.images.all():
        image.deleted_at = timezone.now()
        image.save(update_fields=["deleted_at"])

    assert {
        key: client.get(f"/media/{key}").status_code for key in keys_of(a, live_only=False)
    } == {key: 200 if key in keys_of(b) else 404 for key in keys_of(a, live_only=False)}


def test_with_a_purge_backend_shared_caches_may_keep_images_long(client, settings):
    settings.EDGE_PURGE_BACKEND = "http"
    runway = album(status="published", photos=("astronaut",))

    response = client.get(f"/media/{runway.cover.storage_key}")

    assert response["Cache-Control"] == "public, max-age=600, s-maxage=86400"


def test_with_a_folder_of_copies_media_serves_that_folder(client, public_copies):
    runway = album(status="published", photos=("astronaut",))  # its bytes not copied yet
    key = runway.cover.storage_key

    assert client.get(f"/media/{key}").status_code == 404
    (public_copies / key).parent.mkdir(parents=True)
    (public_copies / key).write_bytes(b"\xff\xd8copy")
    assert client.get(f"/media/{key}").status_code == 200


def test_the_private_route_is_for_editors_only(django_user_model):
    runway = album(status="pending", photos=("astronaut",))
    path = f"/admin/media/{runway.cover.storage_key}"
    staff, reader = Client(), Client()
    staff.force_login(django_user_model.objects.create_user("ed", is_staff=True))
    reader.force_login(django_user_model.objects.create_user("reader"))

    assert staff.get(path).status_code == 200
    assert staff.get("/admin/media/images/00/none.jpg").status_code == 404
    for client in (reader, Client()):
        response = client.get(path)
        assert (response.status_code, response["Cache-Control"]) == (403, "no-store")


def test_the_favicon_answers(client):
    response = client.get("/favicon.ico")

    assert (response.status_code, response["Content-Type"]) == (200, "image/x-icon")
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO
    assert "max-age=86400" in response["Cache-Control"]


@pytest.mark.parametrize("copies", [False, True], ids=["from the database", "folder of copies"])
def test_a_file_name_too_long_for_the_file_system_is_a_404(
    client, copies, request, django_user_model
):
    # A name of 256 characters is past what the file system takes: OSError, not "missing".
    if copies:
        request.getfixturevalue("public_copies").mkdir(parents=True)
    settings = request.getfixturevalue("settings")
    settings.MEDIA_ROOT.mkdir(parents=True, exist_ok=True)  # the private store's folder
    name = "a" * 256 + ".jpg"
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("ed", is_staff=True))

    response = client.get(f"/media/{name}")
    private = staff.get(f"/admin/media/{name}")

    assert (response.status_code, response["Cache-Control"]) == (404, "no-store")
    assert private.status_code == 404
