"""The facets endpoints: the pinned shape, each facet counted with every *other* filter
applied, values by count then value, at most 50, and the list's parameters (q included)."""

import pytest

from catalog.models import Runway
from tests.factories import BrandFactory, RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def runways(at):
    acme = BrandFactory(name="Acme", slug="acme")
    zeta = BrandFactory(name="Zeta", slug="zeta")
    specs = [
        (acme, "FW24", 2024, "couture"),
        (acme, "FW24", 2024, "ready-to-wear"),
        (acme, "SS25", 2025, "couture"),
        (zeta, "FW24", 2024, "couture"),
        (zeta, "SS25", 2025, "menswear"),
    ]
    for n, (brand, code, year, kind) in enumerate(specs):
        RunwayFactory(
            brand=brand,
            season_code=code,
            year=year,
            collection_type=kind,
            published=True,
            published_at=at(n),
        )
    # Never counted: pending, rejected, deleted.
    RunwayFactory(brand=acme, season_code="FW24", collection_type="resort")
    RunwayFactory(brand=acme, season_code="FW24", collection_type="pre-fall", status="rejected")
    gone = RunwayFactory(brand=zeta, season_code="AW23", published=True)
    Runway.objects.filter(pk=gone.pk).update(deleted_at=at(9))


def facets(client, path="/api/v1/runways/facets/", **params):
    response = client.get(path, params)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_shape_and_counts_without_filters(client, runways):
    body = facets(client)

    assert body == {
        "count": 5,
        "facets": {
            "brand": [
                {"value": "acme", "label": "Acme", "count": 3},
                {"value": "zeta", "label": "Zeta", "count": 2},
            ],
            "season_code": [{"value": "FW24", "count": 3}, {"value": "SS25", "count": 2}],
            "year": [{"value": 2024, "count": 3}, {"value": 2025, "count": 2}],
            "collection_type": [
                {"value": "couture", "count": 3},
                # Equal counts: by value.
                {"value": "menswear", "count": 1},
                {"value": "ready-to-wear", "count": 1},
            ],
        },
    }


def test_each_facet_ignores_its_own_filter_and_applies_the_others(client, runways):
    body = facets(client, brand="acme", collection_type="couture")

    assert body["count"] == 2
    # Brands: with collection_type=couture only.
    assert body["facets"]["brand"] == [
        {"value": "acme", "label": "Acme", "count": 2},
        {"value": "zeta", "label": "Zeta", "count": 1},
    ]
    # Collection types: with brand=acme only.
    assert body["facets"]["collection_type"] == [
        {"value": "couture", "count": 2},
        {"value": "ready-to-wear", "count": 1},
    ]
    # The others: both filters.
    assert body["facets"]["year"] == [{"value": 2024, "count": 1}, {"value": 2025, "count": 1}]


def test_q_applies_to_every_facet(client, runways):
    body = facets(client, q="zeta")

    assert body["count"] == 2
    assert body["facets"]["brand"] == [{"value": "zeta", "label": "Zeta", "count": 2}]
    assert body["facets"]["season_code"] == [
        {"value": "FW24", "count": 1},
        {"value": "SS25", "count": 1},
    ]


def test_at_most_50_values(client, at):
    brand = BrandFactory()
    for n in range(53):
        RunwayFactory(brand=brand, season_code=f"X{n:02d}", published=True, published_at=at(n))

    body = facets(client)

    assert len(body["facets"]["season_code"]) == 50
    assert body["facets"]["season_code"][0] == {"value": "X00", "count": 1}
    assert body["count"] == 53


def test_brands_cut_at_50_by_count_then_slug_each_with_its_name(client, at):
    # PostgreSQL groups brands by id and reads each one's slug and name afterwards: the cut
    # at 50 among equal counts still goes by slug, and every value keeps its own label.
    top = BrandFactory(name="Top", slug="zz-top")
    RunwayFactory(brand=top, season_code="AA01", published=True, published_at=at(0))
    RunwayFactory(brand=top, season_code="AA02", published=True, published_at=at(1))
    for n in reversed(range(53)):
        brand = BrandFactory(name=f"Brand {n:02d}", slug=f"b{n:02d}")
        RunwayFactory(brand=brand, published=True, published_at=at(10 + n))
    hidden = BrandFactory(name="Hidden", slug="a-hidden")
    RunwayFactory(brand=hidden)  # pending: neither counted nor named

    brands = facets(client)["facets"]["brand"]
    filtered = facets(client, season_code="AA01")["facets"]["brand"]

    assert brands[0] == {"value": "zz-top", "label": "Top", "count": 2}
    assert brands[1:] == [
        {"value": f"b{n:02d}", "label": f"Brand {n:02d}", "count": 1} for n in range(49)
    ]
    assert filtered == [{"value": "zz-top", "label": "Top", "count": 1}]


def test_a_bad_filter_is_a_400_in_the_error_shape(client, runways):
    response = client.get("/api/v1/runways/facets/", {"year": "abc", "q": "x" * 201})

    assert response.status_code == 400
    body = response.json()
    assert (body["status"], body["code"]) == (400, "invalid")
    assert sorted(body["errors"]) == ["q", "year"]


def test_page_parameters_are_ignored(client, runways):
    assert facets(client, page=99, page_size="x")["count"] == 5


def test_street_snap_facets(client, at):
    for n, (city, year, month) in enumerate(
        [("Paris", 2025, 3), ("Paris", 2025, 9), ("Milan", 2025, 3), ("Milan", 2024, 9)]
    ):
        StreetSnapFactory(city=city, year=year, month=month, published=True, published_at=at(n))
    StreetSnapFactory(city="Oslo", year=2025, month=3)  # pending

    body = facets(client, "/api/v1/street-snaps/facets/", month=3)

    assert body == {
        "count": 2,
        "facets": {
            "city": [{"value": "Milan", "count": 1}, {"value": "Paris", "count": 1}],
            "year": [{"value": 2025, "count": 2}],
            "month": [{"value": 3, "count": 2}, {"value": 9, "count": 2}],
        },
    }


def test_the_query_count_is_fixed(client, runways, django_assert_num_queries):
    # PostgreSQL: every facet and the total in one scan (GROUPING SETS). SQLite: the total
    # and one per facet.
    from django.db import connection

    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 5):
        facets(client, brand="acme", year=2024)
