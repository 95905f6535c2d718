"""The admin's thumbnails: the 400 rendition where there is one, the original (marked
"original", with the reason) where there is none; a click always opens the original."""

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from tests.factories import RunwayFactory, RunwayImageFactory

pytestmark = pytest.mark.django_db

SHA1 = "ab" * 20
RENDITIONS = [
    {"width": 400, "height": 600, "key": f"renditions/ab/{SHA1}/400.webp"},
    {"width": 1200, "height": 1800, "key": f"renditions/ab/{SHA1}/1200.webp"},
]


def change_url(record) -> str:
    return reverse("admin:catalog_runway_change", args=[record.pk])


def test_tiles_and_covers_show_the_400_rendition_and_link_the_original(editor_client):
    runway = RunwayFactory(title="Acme Thumbs")
    image = RunwayImageFactory(
        runway=runway, sha1=SHA1, renditions=RENDITIONS, rendition_status="done"
    )
    runway.cover = image
    runway.save()

    page = editor_client.get(change_url(runway)).content.decode()
    listing = editor_client.get(reverse("admin:catalog_runway_changelist")).content.decode()

    thumb = default_storage.url(RENDITIONS[0]["key"])
    original = default_storage.url(image.storage_key)
    assert f'<img src="{thumb}"' in page and 'width="400" height="600"' in page
    assert f'<a href="{original}"' in page
    assert f'<img src="{original}"' not in page
    assert f'src="{thumb}"' in listing and f'src="{original}"' not in listing
    assert ">original</span>" not in page + listing


@pytest.mark.parametrize(
    ("fields", "note"),
    [
        (
            {"rendition_status": "failed", "rendition_error": "storing a rendition: boom"},
            "no renditions: storing a rendition: boom",
        ),
        ({"rendition_status": "pending"}, "renditions not made yet"),
        ({"rendition_status": "done", "width": 300}, "narrower than 400 px"),
    ],
)
def test_without_a_rendition_the_original_shows_marked_with_the_reason(editor_client, fields, note):
    runway = RunwayFactory()
    image = RunwayImageFactory(runway=runway, **fields)
    runway.cover = image
    runway.save()

    page = editor_client.get(change_url(runway)).content.decode()
    listing = editor_client.get(reverse("admin:catalog_runway_changelist")).content.decode()

    original = default_storage.url(image.storage_key)
    assert f'<img src="{original}"' in page
    assert ">original</span>" in page and note in page
    assert f'src="{original}"' in listing and ">original</span>" in listing
