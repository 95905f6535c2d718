"""The record and image serializers render directly (publicapi.serializers.DirectRendering);
DRF's field-by-field rendering of the same declared fields gives exactly the same JSON."""

import pytest

from publicapi import serializers as public
from tests.publicapi.test_schema import published_archive

pytestmark = pytest.mark.django_db


@pytest.fixture
def drf_rendering(monkeypatch):
    def render(client, url):
        monkeypatch.setattr(public.DirectRendering, "fast", False)
        slow = client.get(url).json()
        monkeypatch.setattr(public.DirectRendering, "fast", True)
        fast = client.get(url).json()
        return slow, fast

    return render


def test_every_page_renders_the_same_both_ways(client, drf_rendering):
    archive = published_archive()
    urls = ["/api/v1/runways/", "/api/v1/street-snaps/", "/api/v1/index/", "/api/v1/brands/"]
    urls += [f"/api/v1/runways/{pk}/" for pk in archive["id"]]
    urls += [f"/api/v1/street-snaps/{pk}/" for pk in archive["id"]]
    urls += [f"/api/v1/brands/{slug}/" for slug in archive["slug"]]
    urls += [f"/api/v1/runway-images/{pk}/similar/" for pk in archive["id"]]
    compared = 0
    for url in urls:
        slow, fast = drf_rendering(client, url)
        assert fast == slow, url
        compared += "results" in fast or "images" in fast
    assert compared >= 8
