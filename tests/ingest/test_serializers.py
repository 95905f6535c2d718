"""Album validation: bounds, http(s) URLs, runway vs street fields, street parents, and the
normalisation of entity-key parts."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError

from catalog.keys import (
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
    normalize_source,
)
from ingest.serializers import album_validate
from ingest.views import AsciiJSONRenderer
from tests.ingest.support import runway_album, street_album

URL = "https://example.com/a/1.jpg"


def errors_of(album) -> dict:
    with pytest.raises(ValidationError) as caught:
        album_validate(album)
    return caught.value.detail


def test_a_runway_album_is_normalised():
    album = runway_album(
        [URL, "http://example.com/a/2.jpg"],
        source="Vogue",
        season_code=" fw 24 ",
        collection_type="Ready to Wear",
        brand="  Acme   Studios ",
        title="Acme  Fall\t2024",
    )
    album["images"][1].pop("look_index")

    validated = album_validate(album)

    assert validated["source"] == "vogue"
    assert validated["season_code"] == "FW24"
    assert validated["collection_type"] == "ready-to-wear"
    assert validated["brand"] == "Acme Studios"
    assert validated["title"] == "Acme Fall 2024"
    assert validated["images"] == [
        {"url": URL, "look_index": 1},
        {"url": "http://example.com/a/2.jpg", "look_index": 2},
    ]


def test_a_street_album_with_a_detail_is_accepted():
    album = street_album([URL, "https://example.com/s/1-detail.jpg"])
    album["images"][1].update(is_detail=True, parent=0)

    validated = album_validate(album)

    assert validated["images"] == [
        {"url": URL, "is_detail": False, "parent": None},
        {"url": "https://example.com/s/1-detail.jpg", "is_detail": True, "parent": 0},
    ]


def test_a_parent_without_is_detail_makes_a_detail():
    album = street_album([URL, URL + "?d"])
    album["images"][1]["parent"] = 0

    assert album_validate(album)["images"][1]["is_detail"] is True


@pytest.mark.parametrize(
    ("image", "message"),
    [
        ({"is_detail": True}, "needs the index"),
        ({"is_detail": False, "parent": 0}, "Only a detail"),
        ({"parent": 7}, "images[7] does not exist"),
        ({"parent": 1}, "own parent"),
        ({"parent": 2}, "images[2] is a detail"),
    ],
)
def test_street_parents_must_name_a_main_image_of_the_album(image, message):
    album = street_album([URL, URL + "?1", URL + "?2"])
    album["images"][2].update(is_detail=True, parent=0)
    album["images"][1].update(image)

    errors = errors_of(album)

    assert message in str(errors["images"][1]["parent"][0])


def test_every_mistake_of_an_album_is_in_one_answer():
    # given a wrong year, a wrong URL on images[0] and a detail of a detail on images[2]
    album = street_album([URL, URL + "?1", URL + "?2"], year=1200)
    album["images"][0]["url"] = "ftp://example.com/0.jpg"
    album["images"][1].update(is_detail=True, parent=0)
    album["images"][2].update(is_detail=True, parent=1)

    errors = errors_of(album)

    # then all three are named at once, each image by its index
    assert set(errors) == {"year", "images"}
    assert set(errors["images"]) == {0, 2}
    assert "http(s)" in str(errors["images"][0]["url"][0])
    assert "images[1] is a detail" in str(errors["images"][2]["parent"][0])


def test_a_parent_naming_an_invalid_image_is_not_second_guessed():
    album = street_album([URL, URL + "?1"])
    album["images"][0]["is_detail"] = "maybe"
    album["images"][1].update(is_detail=True, parent=0)

    errors = errors_of(album)

    # images[0]'s own error, and nothing guessed about whether it is a detail
    assert set(errors["images"]) == {0}
    assert "is_detail" in errors["images"][0]


def test_a_street_field_in_a_runway_album_is_named():
    errors = errors_of(runway_album([URL], city="Paris"))

    assert "street album field" in str(errors["city"][0])


def test_a_runway_field_in_a_street_album_and_image_is_named():
    album = street_album([URL], brand="Acme")
    album["images"][0]["look_index"] = 3

    errors = errors_of(album)

    assert "runway album field" in str(errors["brand"][0])
    assert "runway image field" in str(errors["images"][0]["look_index"][0])


@pytest.mark.parametrize(
    ("make", "where", "field", "message"),
    [
        (runway_album, (), "month", "A street album field, not allowed in a runway album."),
        (street_album, (), "season_code", "A runway album field, not allowed in a street album."),
        (
            runway_album,
            ("images", 0),
            "parent",
            "A street image field, not allowed in a runway image.",
        ),
        (
            street_album,
            ("images", 0),
            "look_index",
            "A runway image field, not allowed in a street image.",
        ),
    ],
)
def test_a_field_of_the_other_kind_is_named_as_its(make, where, field, message):
    album = make([URL])
    target = album["images"][0] if where else album
    target[field] = 1

    errors = errors_of(album)

    for key in where:
        errors = errors[key]
    assert [str(m) for m in errors[field]] == [message]


def test_an_unknown_field_is_refused_with_the_known_ones():
    errors = errors_of(runway_album([URL], colour="red"))

    assert "Unknown field" in str(errors["colour"][0])


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/a.jpg",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "//example.com/a.jpg",
        "/a.jpg",
        "https://exa mple.com/a.jpg",
    ],
)
def test_image_urls_must_be_absolute_http_or_https(url):
    errors = errors_of(runway_album([url]))

    assert "http(s)" in str(errors["images"][0]["url"][0])


def test_the_image_count_is_bounded(settings):
    settings.INGEST_MAX_IMAGES = 3

    too_many = errors_of(runway_album([f"{URL}?{n}" for n in range(4)]))
    none = errors_of(runway_album([]))

    assert "At most 3" in str(too_many["images"])
    assert "at least one" in str(none["images"])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "t" * 256),
        ("brand", "b" * 129),
        ("season_code", "S" * 17),
        ("collection_type", "c" * 33),
        ("description", "d" * 20_001),
        ("source", "s" * 33),
        ("source_url", "https://example.com/" + "p" * 1010),
    ],
)
def test_string_lengths_are_bounded(field, value):
    errors = errors_of(runway_album([URL], **{field: value}))

    assert field in errors


def test_an_image_url_is_bounded():
    errors = errors_of(runway_album(["https://example.com/" + "p" * 2040]))

    assert "url" in errors["images"][0]


@pytest.mark.parametrize(
    ("field", "value"),
    [("month", 0), ("month", 13), ("year", 1849), ("year", 2101), ("title", "   ")],
)
def test_street_entity_fields_are_bounded(field, value):
    errors = errors_of(street_album([URL], **{field: value}))

    assert field in errors


@pytest.mark.parametrize("kind", [None, "editorial", 3, ["runway"], {"runway": 1}])
def test_the_kind_must_be_runway_or_street(kind):
    errors = errors_of({**runway_album([URL]), "kind": kind})

    assert "kind" in errors


def test_a_non_object_body_is_refused():
    assert "non_field_errors" in errors_of([runway_album([URL])])


@pytest.mark.parametrize("season_code", ["FW/24", "ÉTÉ24", "   "])
def test_a_season_code_is_letters_and_digits(season_code):
    assert "season_code" in errors_of(runway_album([URL], season_code=season_code))


# --- Entity-key and source-key parts: the catalog's normal forms -----------------------------


@given(
    season_code=st.sampled_from(["fw24", "FW 24", " Fw-24 ", "ss25", "PF25"]),
    collection_type=st.sampled_from(["Ready to Wear", "ready_to_wear", "Pre-Fall", "Couture"]),
    source=st.sampled_from(["Vogue", "VOGUE", "the.Impression", "wwd"]),
    city=st.sampled_from(["Copenhagen", "  New   York ", "saint-Tropez"]),
)
def test_key_parts_are_stored_in_the_form_the_catalog_keys_give(
    season_code, collection_type, source, city
):
    # One function per key part: the editors' form and the legacy import call the same ones.
    runway = album_validate(
        runway_album([URL], season_code=season_code, collection_type=collection_type, source=source)
    )
    street = album_validate(street_album([URL], city=city, source=source))

    assert runway["season_code"] == normalize_season_code(season_code)
    assert runway["collection_type"] == normalize_collection_type(collection_type)
    assert runway["source"] == street["source"] == normalize_source(source)
    assert street["city"] == normalize_city(city)


@pytest.mark.parametrize(
    ("field", "sent", "stored"),
    [
        ("season_code", "FW-24", "FW24"),
        ("collection_type", "ready_to_wear", "ready-to-wear"),
        ("collection_type", "Prêt-à-porter", "pret-a-porter"),
    ],
)
def test_other_spellings_of_a_key_part_are_one_key(field, sent, stored):
    assert album_validate(runway_album([URL], **{field: sent}))[field] == stored


def test_a_city_keeps_its_case_and_loses_its_extra_spaces():
    assert album_validate(street_album([URL], city=" New \t York "))["city"] == "New York"


@pytest.mark.parametrize("season_code", ["ß24", "ﬀ24"])
def test_a_season_code_that_is_ascii_only_once_upper_cased_is_refused(season_code):
    # "ß".upper() is "SS": checked before upper-casing, or it would pass as letters.
    assert "season_code" in errors_of(runway_album([URL], season_code=season_code))


def test_the_collection_type_length_is_checked_once_normalised():
    # 20 ligatures are 20 characters sent and 40 stored: too long for the column (32).
    errors = errors_of(runway_album([URL], collection_type="ﬀ" * 20))

    assert "32" in str(errors["collection_type"][0])


def test_a_collection_type_without_letters_or_digits_is_refused():
    errors = errors_of(runway_album([URL], collection_type="---"))

    assert "ready-to-wear" in str(errors["collection_type"][0])


# JSON text may hold lone surrogates (json.loads accepts "\\udc80"); validation messages quote
# field names, so the rendered answer must survive them.
JSON_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=8) | st.text(
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),
    min_size=1,
    max_size=3,
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | JSON_TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(JSON_TEXT, children, max_size=3)
    ),
    max_leaves=8,
)
ALBUM_FIELDS = [
    "kind",
    "source",
    "source_url",
    "brand",
    "season_code",
    "collection_type",
    "year",
    "month",
    "city",
    "title",
    "images",
]


def validates_or_explains(album) -> None:
    """An album validates, or the 400 the endpoint would send renders with field messages."""
    try:
        album_validate(album)
    except ValidationError as error:
        assert error.detail
        assert json.loads(AsciiJSONRenderer().render(error.detail))


@given(
    base=st.sampled_from([runway_album([URL]), street_album([URL, URL + "?2"])]),
    field=st.sampled_from(ALBUM_FIELDS) | JSON_TEXT,
    value=JSON_VALUES,
)
def test_any_json_in_any_field_is_a_validation_error_or_an_album(base, field, value):
    """Whatever a crawler sends in whatever field, validation answers with field messages,
    never a crash (a crash would be a 500 at the endpoint)."""
    validates_or_explains({**base, field: value})


@given(
    value=JSON_VALUES,
    key=st.sampled_from(["url", "look_index", "parent", "is_detail"]) | JSON_TEXT,
)
def test_any_json_in_an_image_field_is_a_validation_error_or_an_album(value, key):
    for base in (runway_album([URL]), street_album([URL, URL + "?2"])):
        base["images"][-1][key] = value
        validates_or_explains(base)
