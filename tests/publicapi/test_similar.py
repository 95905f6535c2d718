"""Similar images: public, live images of other albums of either kind within
PUBLIC_SIMILAR_MAX_DISTANCE bits, nearest first, at most 24; legacy hashes never compared;
a non-public image is a 404. The band scheme agrees with ingest's."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from catalog.models import Runway, RunwayImage
from ingest import hashing
from publicapi import similar
from tests.factories import (
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)

ALGORITHM = hashing.PHASH_ALGORITHM
BASE = 0x0123_4567_89AB_CDEF


def flipped(phash: int, bits: int) -> int:
    """The hash with its lowest `bits` bits flipped, stored signed."""
    return hashing.to_signed64((phash ^ ((1 << bits) - 1)) & ((1 << 64) - 1))


def runway_image(phash, *, runway=None, algorithm=ALGORITHM, **fields):
    runway = runway or RunwayFactory(published=True)
    return RunwayImageFactory(runway=runway, phash=phash, phash_algorithm=algorithm, **fields)


def street_image(phash, *, snap=None, algorithm=ALGORITHM, **fields):
    snap = snap or StreetSnapFactory(published=True)
    return StreetSnapImageFactory(
        street_snap=snap, phash=phash, phash_algorithm=algorithm, **fields
    )


def similar_of(client, image, kind="runway-images"):
    response = client.get(f"/api/v1/{kind}/{image.pk}/similar/")
    assert response.status_code == 200, response.content
    return [
        (r["kind"], r["record_id"], r["image"]["id"], r["distance"])
        for r in response.json()["results"]
    ]


@pytest.mark.django_db
def test_other_albums_of_both_kinds_nearest_first(client):
    source = runway_image(BASE)
    same_album = runway_image(flipped(BASE, 1), runway=source.runway)
    near_street = street_image(flipped(BASE, 2))
    nearer_runway = runway_image(flipped(BASE, 1))
    edge = runway_image(flipped(BASE, 7))
    runway_image(flipped(BASE, 8))  # one bit too far
    runway_image(BASE, algorithm="legacy")  # same bits, not comparable
    street_image(BASE, algorithm="phash-other-v0")  # another algorithm

    results = similar_of(client, source)

    assert results == [
        ("runway", nearer_runway.runway_id, nearer_runway.pk, 1),
        ("street", near_street.street_snap_id, near_street.pk, 2),
        ("runway", edge.runway_id, edge.pk, 7),
    ]
    assert same_album.pk not in {r[2] for r in results}


@pytest.mark.django_db
def test_the_image_object_is_the_one_of_its_kind(client):
    source = street_image(BASE)
    match = runway_image(BASE, look_index=3)
    detail_match = street_image(BASE)

    body = client.get(f"/api/v1/street-snap-images/{source.pk}/similar/").json()

    by_kind = {r["kind"]: r for r in body["results"]}
    assert by_kind["runway"]["image"]["look_index"] == 3
    assert by_kind["runway"]["image"]["id"] == match.pk
    assert by_kind["street"]["image"]["is_detail"] is False
    assert by_kind["street"]["record_id"] == detail_match.street_snap_id
    # The image objects of the album pages.
    assert set(by_kind["runway"]["image"]) == {
        *("id", "url", "width", "height", "mime_type", "look_index"),
        *("renditions", "srcset", "placeholder", "color"),
    }


@pytest.mark.django_db
def test_never_an_unpublished_or_deleted_album_or_image(client):
    source = runway_image(BASE)
    runway_image(BASE, runway=RunwayFactory())  # pending album
    runway_image(BASE, runway=RunwayFactory(status="rejected"))
    deleted = runway_image(BASE)
    Runway.objects.filter(pk=deleted.runway_id).update(deleted_at=timezone.now())
    runway_image(BASE, deleted_at=timezone.now())
    street_image(BASE, snap=StreetSnapFactory())  # pending
    shown = street_image(BASE)

    assert similar_of(client, source) == [("street", shown.street_snap_id, shown.pk, 0)]


@pytest.mark.django_db
def test_at_most_24(client):
    source = runway_image(BASE)
    for _ in range(26):
        street_image(BASE)

    assert len(similar_of(client, source)) == 24


@pytest.mark.django_db
def test_a_hash_many_images_share_is_sorted_and_cut_in_the_database(client):
    # given: more images at distance 0 than a response holds, and some further away
    source = runway_image(BASE)
    same = [street_image(BASE) for _ in range(30)]
    for _ in range(3):
        runway_image(flipped(BASE, 1))

    with CaptureQueriesContext(connection) as queries:
        results = similar_of(client, source)

    # then: the nearest 24, by id, and the candidates query itself returned no more
    assert results == [("street", i.street_snap_id, i.pk, 0) for i in same[:24]]
    [candidates] = [q["sql"] for q in queries.captured_queries if "phash_band0" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(candidates)
        assert len(cursor.fetchall()) == 24


@pytest.mark.django_db
def test_a_non_public_image_is_a_404(client):
    pending = runway_image(BASE, runway=RunwayFactory())
    deleted = runway_image(BASE, deleted_at=timezone.now())
    paths = [
        f"/api/v1/runway-images/{pending.pk}/similar/",
        f"/api/v1/runway-images/{deleted.pk}/similar/",
        "/api/v1/runway-images/999999999/similar/",
        "/api/v1/street-snap-images/999999999/similar/",
        f"/api/v1/runway-images/{'9' * 30}/similar/",
    ]

    for path in paths:
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["code"] == "not_found"
        assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_an_image_without_a_comparable_hash_has_no_matches(client):
    legacy = runway_image(BASE, algorithm="legacy")
    unhashed = runway_image(None, algorithm="")
    runway_image(BASE, algorithm="legacy")
    runway_image(BASE)

    assert similar_of(client, legacy) == []
    assert similar_of(client, unhashed) == []


@pytest.mark.django_db
def test_the_distance_follows_the_setting(client, settings):
    settings.PUBLIC_SIMILAR_MAX_DISTANCE = 3
    source = runway_image(BASE)
    three = runway_image(flipped(BASE, 3))
    runway_image(flipped(BASE, 4))

    assert [r[2] for r in similar_of(client, source)] == [three.pk]


@pytest.mark.django_db
def test_the_query_count_is_fixed(client, django_assert_num_queries):
    source = runway_image(BASE)
    for _ in range(3):
        runway_image(BASE)
        street_image(BASE)

    # The image and its hash, the candidates, the runway images, the street images.
    with django_assert_num_queries(4):
        similar_of(client, source)


@given(phash=st.integers(0, (1 << 64) - 1), distance=st.integers(0, 15))
def test_the_band_scheme_is_ingests(phash, distance):
    assert similar.bands(phash) == hashing.bands(phash)
    assert similar.band_probes(phash, distance) == hashing.band_probes(phash, distance)
    assert similar.bands(hashing.to_signed64(phash)) == hashing.bands(phash)


@given(a=st.integers(0, (1 << 64) - 1), flips=st.sets(st.integers(0, 63), max_size=7))
def test_a_hash_within_the_distance_shares_a_probed_band(a, flips):
    b = a
    for bit in flips:
        b ^= 1 << bit
    probes = similar.band_probes(a, 7)

    assert similar.hamming(a, hashing.to_signed64(b)) == len(flips)
    assert any(band in probes[n] for n, band in enumerate(similar.bands(b)))


def test_runway_image_is_what_the_views_read():
    # The view reads the generated band columns; their names are the model's.
    assert {f"phash_band{n}" for n in range(4)} <= {f.name for f in RunwayImage._meta.fields}
