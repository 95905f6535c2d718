"""Cache tags (publicapi.tags): what a response names, in the order first named."""

from hypothesis import given
from hypothesis import strategies as st

from publicapi.tags import header_value, response_tags

SLUGS = st.sampled_from(["acme", "maison-x", "", None])
RUNWAYS = st.lists(
    st.builds(
        lambda pk, slug, has_brand: {"id": pk, "brand": {"slug": slug} if has_brand else None},
        st.integers(1, 30),
        SLUGS,
        st.booleans(),
    ),
    max_size=8,
)


def expected_runway_tags(runway) -> list[str]:
    brand = runway["brand"] or {}
    return [f"runway:{runway['id']}"] + ([f"brand:{brand['slug']}"] if brand.get("slug") else [])


@given(runways=RUNWAYS)
def test_a_runway_list_names_each_runway_and_its_brand_and_no_list(runways):
    tags = response_tags("runway", "list", {"results": runways})

    # No tag for the list itself: a new publication reaches it by its s-maxage, not a purge.
    assert tags == [tag for r in runways for tag in expected_runway_tags(r)]


@given(runways=RUNWAYS, snaps=st.lists(st.integers(1, 30), max_size=5))
def test_the_index_names_every_record_it_shows(runways, snaps):
    data = {
        "latest_runways": runways,
        "latest_street_snaps": [{"id": pk} for pk in snaps],
        "featured_brands": [{"slug": "acme"}],
    }

    tags = response_tags("index", "list", data)

    assert tags == [
        *(tag for r in runways for tag in expected_runway_tags(r)),
        *(f"street-snap:{pk}" for pk in snaps),
        "brand:acme",
    ]


def test_a_header_names_each_tag_once_in_the_order_first_named():
    runways = [
        {"id": 3, "brand": {"slug": "acme"}},
        {"id": 1, "brand": {"slug": "maison-x"}},
        {"id": 2, "brand": {"slug": "acme"}},
    ]

    assert header_value(response_tags("runway", "list", {"results": runways})) == (
        "runway:3 brand:acme runway:1 brand:maison-x runway:2"
    )
    assert response_tags("runway", "retrieve", runways[0]) == ["runway:3", "brand:acme"]
    assert response_tags("street", "retrieve", {"id": 5}) == ["street-snap:5"]
    assert response_tags("street", "list", {"results": [{"id": 5}]}) == ["street-snap:5"]
    assert response_tags("brand", "retrieve", {"slug": "acme", "runways": runways[:1]}) == [
        "brand:acme",
        "runway:3",
        "brand:acme",
    ]
    assert response_tags("brand", "list", {"results": [{"slug": "acme"}]}) == ["brand:acme"]


def test_similar_images_name_each_album_shown():
    results = [
        {"kind": "runway", "record_id": 3},
        {"kind": "street", "record_id": 5},
        {"kind": "other", "record_id": 1},
    ]

    assert response_tags("similar", "list", {"results": results}) == ["runway:3", "street-snap:5"]


def test_a_list_is_kept_briefly_and_in_grace_a_detail_long(client, settings, db):
    from tests.factories import RunwayFactory

    settings.EDGE_PURGE_BACKEND = "http"
    runway = RunwayFactory(published=True)

    listed = client.get("/api/v1/runways/")
    detail = client.get(f"/api/v1/runways/{runway.pk}/")
    facets = client.get("/api/v1/runways/facets/")

    assert "s-maxage=60" in listed["Cache-Control"] and "s-maxage=60" in facets["Cache-Control"]
    assert "s-maxage=86400" in detail["Cache-Control"]
    assert listed["X-Edge-Grace"] == detail["X-Edge-Grace"] == "86400"
    # Browsers: the short max-age alone, no grace of theirs.
    assert "stale" not in listed["Cache-Control"]
    assert "Vary" not in listed or "X-Forwarded-Proto" not in listed["Vary"]


def test_behind_a_proxy_that_says_the_scheme_a_response_varies_by_it(client, settings, db):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    response = client.get("/api/v1/runways/", headers={"X-Forwarded-Proto": "https"})

    assert "X-Forwarded-Proto" in response["Vary"]
