"""`?q=` on the runway and street-style lists: words in any order, any case, accents optional,
the last word a prefix; relevance order; every filter still applies; the same on PostgreSQL
(tsvector) and SQLite (the Python fallback)."""

import sqlite3

import pytest

from catalog.models import Runway
from publicapi import search
from publicapi.search import parse
from tests.factories import (
    BrandAliasFactory,
    BrandFactory,
    RunwayFactory,
    StreetSnapFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(at):
    acme = BrandFactory(name="Acme", slug="acme")
    BrandAliasFactory(brand=acme, alias="Acme Atelier")
    creme = BrandFactory(name="Maison Crème", slug="maison-creme")
    other = BrandFactory(name="Other", slug="other")

    def runway(brand, minutes, **fields):
        return RunwayFactory(brand=brand, published=True, published_at=at(minutes), **fields)

    runways = {
        "acme_couture": runway(
            acme,
            1,
            season_code="FW24",
            season="Fall/Winter 2024",
            year=2024,
            collection_type="couture",
            title="Acme couture",
        ),
        "acme_rtw": runway(
            acme,
            2,
            season_code="SS25",
            season="Spring/Summer 2025",
            year=2025,
            collection_type="ready-to-wear",
            title="Acme ready",
        ),
        "creme": runway(
            creme,
            3,
            season_code="FW24",
            season="Fall/Winter 2024",
            year=2024,
            collection_type="couture",
            title="Crème de la crème",
        ),
        # "acme" only in the description: ranked below the brand's own shows.
        "mention": runway(
            other,
            4,
            season_code="SS24",
            season="Spring/Summer 2024",
            year=2024,
            collection_type="menswear",
            title="Homage",
            description="A nod to ACME's archive.",
        ),
    }
    RunwayFactory(brand=acme, title="Acme couture pending")  # never found
    gone = runway(acme, 5, title="Acme couture deleted")
    Runway.objects.filter(pk=gone.pk).update(deleted_at=at(6))
    snaps = {
        "cph": StreetSnapFactory(
            published=True,
            published_at=at(1),
            city="Copenhagen",
            title="Fashion week",
            year=2026,
            month=8,
        ),
        "sao": StreetSnapFactory(
            published=True,
            published_at=at(2),
            city="São Paulo",
            title="Street style",
            year=2025,
            month=3,
            description="Seen at Copenhagen's shows too.",
        ),
    }
    StreetSnapFactory(city="Copenhagen", title="Fashion week unpublished")
    return {k: v.pk for k, v in {**runways, **snaps}.items()}


def found(client, path, **params):
    response = client.get(path, params)
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["results"]]


def runways(client, **params):
    return found(client, "/api/v1/runways/", **params)


def snaps(client, **params):
    return found(client, "/api/v1/street-snaps/", **params)


def test_words_in_any_order_any_case_last_word_a_prefix(client, corpus):
    assert runways(client, q="acme cout") == [corpus["acme_couture"]]
    assert runways(client, q="COUTURE acme 2024") == [corpus["acme_couture"]]
    # Title (4) beats collection type (2).
    assert runways(client, q="fw24 couture") == [corpus["acme_couture"], corpus["creme"]]
    assert runways(client, q="winter 2024 fall") == [corpus["creme"], corpus["acme_couture"]]


def test_accents_are_optional_both_ways(client, corpus):
    assert runways(client, q="creme") == [corpus["creme"]]
    assert runways(client, q="maison crème") == [corpus["creme"]]
    assert snaps(client, q="sao paulo") == [corpus["sao"]]
    assert snaps(client, q="SÃO") == [corpus["sao"]]


def test_brand_aliases_are_searched(client, corpus):
    assert runways(client, q="atelier ready") == [corpus["acme_rtw"]]


def test_hyphenated_and_slashed_words_are_words(client, corpus):
    assert runways(client, q="ready to wear") == [corpus["acme_rtw"]]
    assert runways(client, q="spring/summer 2025") == [corpus["acme_rtw"]]


def test_relevance_first_then_newest(client, corpus):
    # Brand name (4) beats the description (1); equal ranks: newest published first.
    assert runways(client, q="acme") == [
        corpus["acme_rtw"],
        corpus["acme_couture"],
        corpus["mention"],
    ]
    # The city (4) beats the description (1), though that album is newer.
    assert snaps(client, q="copenhagen") == [corpus["cph"], corpus["sao"]]


def test_search_combines_with_every_filter(client, corpus):
    assert runways(client, q="acme", year=2024) == [corpus["acme_couture"], corpus["mention"]]
    assert runways(client, q="acme", brand="acme", collection_type="COUTURE") == [
        corpus["acme_couture"]
    ]
    assert runways(client, q="couture", season_code="fw24", page_size=1) == [corpus["acme_couture"]]
    assert snaps(client, q="copenhagen", month=3) == [corpus["sao"]]


def test_no_words_is_no_filter_and_the_newest_come_first(client, corpus):
    newest_first = [corpus[k] for k in ("mention", "creme", "acme_rtw", "acme_couture")]

    assert runways(client, q="") == newest_first
    assert runways(client, q=" ,.; ") == newest_first
    assert runways(client) == newest_first


def test_unknown_words_find_nothing(client, corpus):
    assert runways(client, q="acme zebra") == []
    assert snaps(client, q="zebra") == []
    # A prefix only on the last word.
    assert runways(client, q="acm couture") == []


def test_a_query_over_200_characters_is_a_400(client, corpus):
    ok = client.get("/api/v1/runways/", {"q": "a" * 200})
    too_long = client.get("/api/v1/runways/", {"q": "a" * 201})

    assert ok.status_code == 200
    assert too_long.status_code == 400
    body = too_long.json()
    assert body["code"] == "invalid"
    assert list(body["errors"]) == ["q"]


def test_a_nul_in_the_query_is_a_400(client, corpus):
    response = client.get("/api/v1/street-snaps/", {"q": "a\x00b"})

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["q"]


def test_tsquery_syntax_is_just_punctuation(client, corpus):
    for q in ["acme & !couture", "acme | zebra", "acme:*A", "(acme", "'acme'", "acme\\"]:
        response = client.get("/api/v1/runways/", {"q": q})
        assert response.status_code == 200, q


def test_parse_marks_only_the_last_word_as_a_prefix():
    words = parse("Acme, cout")

    assert [(w.text, w.prefix) for w in words] == [("Acme", False), ("cout", True)]
    assert [w.tsquery() for w in words] == ["Acme", "cout:*"]
    assert [w.tsquery("A") for w in words] == ["Acme:A", "cout:*A"]


def test_sqlite_a_search_takes_no_parameter_per_match(client, at):
    # The fallback once listed the matching ids as query parameters: more matches than
    # SQLite's limit on parameters (32766 by default) failed. Here the limit is lowered to 16:
    # the query's own parameters (the search's, twice) fit, one per match would not.
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's parameter limit")
    for n in range(12):
        RunwayFactory(published=True, published_at=at(n), title=f"Velvet {n}")
    connection.ensure_connection()
    limit = connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 16)
    try:
        response = client.get("/api/v1/runways/", {"q": "velvet", "page_size": 5})
        facets = client.get("/api/v1/runways/facets/", {"q": "velvet"})
    finally:
        connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)

    assert response.status_code == 200, response.content
    assert response.json()["count"] == 12
    assert facets.json()["count"] == 12


def test_a_broad_search_ranks_only_its_newest_matches(client, at, monkeypatch):
    # Given more matches than the ranking takes: the best match is the oldest.
    monkeypatch.setattr(search, "MAX_RANKED", 3)
    best = RunwayFactory(published=True, published_at=at(1), title="Velvet", year=2001)
    newer = [
        RunwayFactory(published=True, published_at=at(n), description="velvet", year=2002)
        for n in range(2, 6)
    ]
    RunwayFactory(published=True, published_at=at(9), title="Linen")  # newest, no match

    ranked = client.get("/api/v1/runways/", {"q": "velvet"}).json()
    filtered = client.get("/api/v1/runways/", {"q": "velvet", "year": 2001}).json()
    facets = client.get("/api/v1/runways/facets/", {"q": "velvet"}).json()

    # The three newest matches, ranked; a filter narrows the matches first, so it reaches
    # the oldest; facets count every match.
    assert [r["id"] for r in ranked["results"]] == [r.pk for r in reversed(newer)][:3]
    assert ranked["count"] == 3
    assert [r["id"] for r in filtered["results"]] == [best.pk]
    assert facets["count"] == 5


def test_a_search_with_a_filter_counts_exactly_what_its_pages_show(client, at):
    for n in range(7):
        RunwayFactory(published=True, published_at=at(n), title=f"Velvet {n}", year=2000 + n % 2)
    RunwayFactory(published=False, title="Velvet unpublished", year=2001)
    RunwayFactory(published=True, published_at=at(9), title="Linen", year=2001)

    first = client.get("/api/v1/runways/", {"q": "velv", "year": 2001, "page_size": 2})
    second = client.get("/api/v1/runways/", {"q": "velv", "year": 2001, "page_size": 2, "page": 2})

    shown = [r["id"] for page in (first.json(), second.json()) for r in page["results"]]
    assert (first.json()["count"], second.json()["count"]) == (3, 3)
    assert len(shown) == len(set(shown)) == 3
    assert first.json()["next"] and second.json()["next"] is None
