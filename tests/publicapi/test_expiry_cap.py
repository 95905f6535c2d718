"""A response that shows an album with an expiry to come is cached by no one past it: its
max-age and s-maxage are capped to the seconds left, and it is never served in grace. The
clock is moved with time-machine (the views' and the application's together)."""

from datetime import UTC, datetime, timedelta

import pytest

from ingest import hashing
from tests.factories import (
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 3, 3, 19, 0, tzinfo=UTC)
EXPIRY = NOW + timedelta(seconds=90)
PHASH = 0x0123_4567_89AB_CDEF


@pytest.fixture(autouse=True)
def edge(settings, embargo_clock):
    settings.EDGE_PURGE_BACKEND = "http"
    settings.PUBLIC_API_CACHE_SECONDS = 60
    settings.EDGE_CACHE_SECONDS = 86400
    settings.EDGE_LIST_SECONDS = 60
    settings.EDGE_GRACE_SECONDS = 86400
    return embargo_clock(NOW)


@pytest.fixture
def expiring():
    brand = BrandFactory(slug="acme")
    return RunwayFactory(published=True, brand=brand, expires_at=EXPIRY)


def caching(client, path: str) -> tuple[str, str | None]:
    response = client.get(path)
    assert response.status_code == 200, response.content
    return response["Cache-Control"], response.headers.get("X-Edge-Grace")


def test_a_detail_is_not_cached_past_its_albums_expiry(client, expiring, edge):
    path = f"/api/v1/runways/{expiring.pk}/"

    assert caching(client, path) == ("public, max-age=60, s-maxage=90", None)

    edge.move_to(EXPIRY - timedelta(seconds=30, microseconds=500_000))
    assert caching(client, path) == ("public, max-age=30, s-maxage=30", None)

    edge.move_to(EXPIRY)
    assert client.get(path).status_code == 404


def test_an_album_without_an_expiry_is_cached_as_ever(client):
    runway = RunwayFactory(published=True)

    assert caching(client, f"/api/v1/runways/{runway.pk}/") == (
        "public, max-age=60, s-maxage=86400",
        "86400",
    )


@pytest.mark.parametrize(
    ("path", "edge_seconds"),
    [
        ("/api/v1/runways/", 60),  # a list's own minute is shorter than the time left
        ("/api/v1/runways/?brand=acme", 60),
        ("/api/v1/index/", 60),
        ("/api/v1/brands/acme/", 90),  # a detail's day is not
    ],
)
def test_every_page_that_shows_it_is_capped_and_never_in_grace(
    client, expiring, path, edge_seconds, edge
):
    RunwayFactory(published=True, brand=expiring.brand)  # shown beside it, for good

    assert caching(client, path) == (f"public, max-age=60, s-maxage={edge_seconds}", None)

    edge.move_to(EXPIRY - timedelta(seconds=30))
    assert caching(client, path) == ("public, max-age=30, s-maxage=30", None)


def test_a_list_is_capped_by_its_earliest_expiry(client, edge):
    RunwayFactory(published=True)  # the oldest: alone on the third page of one
    RunwayFactory(published=True, expires_at=NOW + timedelta(seconds=45))
    RunwayFactory(published=True, expires_at=NOW + timedelta(seconds=20))

    assert caching(client, "/api/v1/runways/") == ("public, max-age=20, s-maxage=20", None)
    # The page that does not show them is not capped.
    assert caching(client, "/api/v1/runways/?page_size=1&page=3") == (
        "public, max-age=60, s-maxage=60",
        "86400",
    )


def test_a_street_album_is_capped_like_a_runway(client):
    snap = StreetSnapFactory(published=True, expires_at=EXPIRY)

    assert caching(client, f"/api/v1/street-snaps/{snap.pk}/") == (
        "public, max-age=60, s-maxage=90",
        None,
    )


def test_similar_images_of_an_expiring_album_are_capped(client, edge):
    source = RunwayImageFactory(
        runway=RunwayFactory(published=True), phash=PHASH, phash_algorithm=hashing.PHASH_ALGORITHM
    )
    StreetSnapImageFactory(
        street_snap=StreetSnapFactory(published=True, expires_at=EXPIRY),
        phash=PHASH,
        phash_algorithm=hashing.PHASH_ALGORITHM,
    )

    path = f"/api/v1/runway-images/{source.pk}/similar/"
    assert len(client.get(path).json()["results"]) == 1
    assert caching(client, path) == ("public, max-age=60, s-maxage=60", None)  # a list's
    edge.move_to(EXPIRY - timedelta(seconds=10))
    assert caching(client, path) == ("public, max-age=10, s-maxage=10", None)
