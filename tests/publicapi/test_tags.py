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
def test_a_runway_list_names_the_kind_then_each_runway_and_its_brand(runways):
    tags = response_tags("runway", "list", {"results": runways})

    assert tags == ["runways", *(tag for r in runways for tag in expected_runway_tags(r))]


@given(runways=RUNWAYS, snaps=st.lists(st.integers(1, 30), max_size=5))
def test_the_index_names_every_record_it_shows(runways, snaps):
    data = {
        "latest_runways": runways,
        "latest_street_snaps": [{"id": pk} for pk in snaps],
        "featured_brands": [{"slug": "acme"}],
    }

    tags = response_tags("index", "list", data)

    assert tags == [
        "runways",
        "street-snaps",
        "brands",
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
        "runways runway:3 brand:acme runway:1 brand:maison-x runway:2"
    )
    assert response_tags("runway", "retrieve", runways[0]) == ["runway:3", "brand:acme"]
    assert response_tags("street", "retrieve", {"id": 5}) == ["street-snap:5"]
    assert response_tags("street", "list", {"results": [{"id": 5}]}) == [
        "street-snaps",
        "street-snap:5",
    ]
    assert response_tags("brand", "retrieve", {"slug": "acme", "runways": runways[:1]}) == [
        "brand:acme",
        "runways",
        "runway:3",
        "brand:acme",
    ]
    assert response_tags("brand", "list", {"results": [{"slug": "acme"}]}) == [
        "brands",
        "runways",
        "brand:acme",
    ]


def test_similar_images_name_both_kinds_and_each_album_shown():
    results = [
        {"kind": "runway", "record_id": 3},
        {"kind": "street", "record_id": 5},
        {"kind": "other", "record_id": 1},
    ]

    assert response_tags("similar", "list", {"results": results}) == [
        "runways",
        "street-snaps",
        "runway:3",
        "street-snap:5",
    ]
