"""The record and image serializers render directly (publicapi.serializers.TableSerializer);
DRF's field-by-field rendering of the same declared fields gives exactly the same JSON."""

import json
from types import SimpleNamespace

import pytest
from rest_framework import serializers

from publicapi import serializers as public
from publicapi.models import PublicRunway
from publicapi.serializers.table import Column, Table
from tests.publicapi.test_schema import published_archive

pytestmark = pytest.mark.django_db


@pytest.fixture
def drf_rendering(monkeypatch):
    """The body of a URL rendered DRF's way, then the table's way: the bytes must be the
    same (key order included, so the ETag is too)."""

    def render(client, url):
        monkeypatch.setattr(public.TableSerializer, "fast", False)
        slow = client.get(url).content
        monkeypatch.setattr(public.TableSerializer, "fast", True)
        fast = client.get(url).content
        return json.loads(slow), json.loads(fast), slow == fast

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
        slow, fast, same_bytes = drf_rendering(client, url)
        assert fast == slow, url
        assert same_bytes, url
        compared += "results" in fast or "images" in fast
    assert compared >= 8


def test_times_render_the_same_both_ways_in_another_time_zone(client, drf_rendering, settings):
    settings.TIME_ZONE = "Europe/Paris"
    archive = published_archive()
    pk = archive["id"][0]

    for url in ["/api/v1/runways/", f"/api/v1/runways/{pk}/", "/api/v1/street-snaps/"]:
        slow, fast, same_bytes = drf_rendering(client, url)
        assert (fast, same_bytes) == (slow, True), url
    shown = client.get(f"/api/v1/runways/{pk}/").json()["published_at"]
    assert shown.endswith(("+01:00", "+02:00")), shown


def test_a_table_reads_attributes_renders_functions_and_keeps_the_column_order():
    table = Table(
        PublicRunway,
        Column("title"),
        Column("twice", render=lambda record, request: [record.title, request]),
        Column("class", field=serializers.CharField(source="brand.name")),  # a keyword
        Column("odd", field=serializers.IntegerField(source="not-a-name")),
    )
    record = SimpleNamespace(title="Fall", brand=SimpleNamespace(name="Acme"))
    setattr(record, "not-a-name", 7)

    rendered = table.render(record, "the request")

    assert list(rendered) == ["title", "twice", "class", "odd"]
    assert rendered == {
        "title": "Fall",
        "twice": ["Fall", "the request"],
        "class": "Acme",
        "odd": 7,
    }
    with pytest.raises(AttributeError):
        table.render(SimpleNamespace(title="x"), None)
