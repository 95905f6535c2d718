"""The admin's thumbnails: the 400 rendition where there is one, a placeholder saying why
where there is none yet, the original only where it is the small picture (narrower than 400,
marked "original"); a click always opens the original, and no page loads it."""

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
    runway = RunwayFactory(
        title="Acme Thumbs",
        images=[{"sha1": SHA1, "renditions": RENDITIONS, "rendition_status": "done"}],
    )
    image = runway.cover

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
    ],
)
def test_without_a_rendition_a_placeholder_says_why_and_no_original_loads(
    editor_client, fields, note
):
    runway = RunwayFactory(images=[{"width": 1400, **fields}])
    image = runway.cover

    page = editor_client.get(change_url(runway)).content.decode()
    listing = editor_client.get(reverse("admin:catalog_runway_changelist")).content.decode()

    original = default_storage.url(image.storage_key)
    assert f'src="{original}"' not in page + listing
    assert f'<a href="{original}"' in page  # a click still opens it
    assert 'class="review-placeholder"' in page and note in page
    assert "review-list-thumb review-placeholder" in listing and note in listing


def test_an_image_narrower_than_400_shows_as_it_is_marked_original(editor_client):
    runway = RunwayFactory(images=[{"rendition_status": "done", "width": 300}])
    image = runway.cover

    page = editor_client.get(change_url(runway)).content.decode()
    listing = editor_client.get(reverse("admin:catalog_runway_changelist")).content.decode()

    original = default_storage.url(image.storage_key)
    assert f'<img src="{original}"' in page
    assert ">original</span>" in page and "narrower than 400 px" in page
    assert f'src="{original}"' in listing and ">original</span>" in listing


def test_the_compare_view_shows_the_1200_rendition_and_links_the_original(editor_client):
    runway = RunwayFactory()
    kept = RunwayImageFactory(runway=runway, renditions=RENDITIONS, rendition_status="done")
    twin = RunwayImageFactory(
        runway=runway,
        renditions=RENDITIONS,
        rendition_status="done",
        is_duplicate=True,
        dup_of=kept,
    )

    page = editor_client.get(
        reverse("admin:catalog_runway_compare", args=[runway.pk, twin.pk])
    ).content.decode()

    preview = default_storage.url(RENDITIONS[1]["key"])
    assert page.count(f'<img src="{preview}"') == 2
    for image in (kept, twin):
        original = default_storage.url(image.storage_key)
        assert f'src="{original}"' not in page and f'href="{original}"' in page
