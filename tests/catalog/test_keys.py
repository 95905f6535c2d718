"""The normal forms of key values: idempotent, in NFC, one key for the spellings of one value
(composed and decomposed ones included), refusals for values that have none, and pure (no
Django). Runs on both passes (no database)."""

import ast
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from django.utils.text import slugify
from hypothesis import example, given
from hypothesis import strategies as st

import catalog.keys
from catalog.keys import (
    KeyValueError,
    fold_title,
    fold_whitespace,
    normalize_brand_slug,
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
    normalize_source,
    normalize_source_url,
)
from catalog.legacy.keys import MAX_LENGTH
from catalog.models import Brand, Runway, StreetSnap

ALWAYS = [
    fold_whitespace,
    fold_title,
    normalize_brand_slug,
    normalize_city,
    normalize_source,
    normalize_source_url,
]
MAY_REFUSE = [normalize_season_code, normalize_collection_type]

# Whitespace as it turns up in pasted text: tabs, line breaks, no-break and thin spaces.
spaces = st.text(st.sampled_from(" \t\n\r\u00a0\u2009\u3000"), min_size=1, max_size=3)
ascii_letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Any text, and text made of what keys are made of plus the characters that trip normalisers
# up (case mappings that lengthen, ligatures, accents, apostrophes, separators; letters with
# combining marks, precomposed or not, and signs NFC replaces), so that values with a normal
# form are common too.
values = st.one_of(
    st.text(),
    st.text(
        st.sampled_from(
            [*"aZf09 -_/.\t'", "\u00a0", "ß", "ﬁ", "é", "İ", "’", "Ⅻ"]
            + ["ã", "\u0303", "H", "\u0331", "\u030a", "\u212b", "\u2126", "\u212a"]
        )
    ),
)


def random_case(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.swapcase() if flip else c for c, flip in zip(text, flips, strict=True))


def normal_or_none(normalise, value):
    try:
        return normalise(value)
    except KeyValueError:
        return None


# --- Idempotent ------------------------------------------------------------------------------


@pytest.mark.parametrize("normalise", ALWAYS + MAY_REFUSE, ids=lambda f: f.__name__)
@given(value=values)
@example(value="ß")
@example(value="ﬁ ﬂ")
@example(value="İstanbul")
@example(value="Men’s")
def test_a_normal_form_is_its_own_normal_form(normalise, value):
    once = normal_or_none(normalise, value)

    assert once is None or normalise(once) == once


# --- NFC: composed and decomposed spellings are one key --------------------------------------


@pytest.mark.parametrize("normalise", ALWAYS + MAY_REFUSE, ids=lambda f: f.__name__)
@given(value=values)
@example(value="Sa\u0303o Paulo")
@example(value="H\u0331")  # lower-cases to a letter that composes
@example(value="\u212b")  # the angstrom sign: NFC makes it Å
def test_a_normal_form_is_in_nfc(normalise, value):
    normal = normal_or_none(normalise, value)

    assert normal is None or unicodedata.is_normalized("NFC", normal)


@pytest.mark.parametrize("normalise", ALWAYS + MAY_REFUSE, ids=lambda f: f.__name__)
@given(value=values)
@example(value="São Paulo")
@example(value="Ångström")
def test_composed_and_decomposed_spellings_are_one_key(normalise, value):
    composed = unicodedata.normalize("NFC", value)
    decomposed = unicodedata.normalize("NFD", value)

    assert normal_or_none(normalise, composed) == normal_or_none(normalise, decomposed)


def test_sao_paulo_typed_either_way_is_one_city_and_one_title():
    composed, decomposed = "S\u00e3o Paulo", "Sa\u0303o Paulo"

    assert normalize_city(decomposed) == normalize_city(composed) == composed
    assert fold_title(f"{decomposed} Street Style") == f"{composed} Street Style"


# --- One key for the spellings of one value --------------------------------------------------


@st.composite
def season_code_spellings(draw: st.DrawFn) -> tuple[str, str]:
    """(a season code in normal form, a way someone types it)."""
    parts = draw(
        st.lists(st.text(ascii_letters + "0123456789", min_size=1, max_size=4), min_size=1)
    )
    separators = [draw(st.sampled_from(["", " ", "-", " - ", "\t"])) for _ in parts[1:]]
    typed = parts[0] + "".join(sep + part for sep, part in zip(separators, parts[1:], strict=True))
    padded = draw(st.sampled_from(["", " "])) + random_case(draw, typed) + draw(spaces)
    return "".join(parts).upper(), padded


@given(spelling=season_code_spellings())
@example(spelling=("FW24", "fw24"))
@example(spelling=("FW24", " fw 24 "))
@example(spelling=("FW24", "FW-24"))
def test_every_spelling_of_a_season_code_is_one_key(spelling):
    normal, typed = spelling

    assert normalize_season_code(typed) == normal
    assert re.fullmatch(r"[A-Z0-9]+", normal)


@given(value=values)
def test_a_season_code_is_never_longer_than_what_was_typed(value):
    # So a code that fits its column as typed fits it normalised.
    normal = normal_or_none(normalize_season_code, value)

    assert normal is None or len(normal) <= len(value)


@st.composite
def collection_type_spellings(draw: st.DrawFn) -> tuple[str, str]:
    words = draw(
        st.lists(
            st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6), min_size=1
        )
    )
    separators = [draw(st.sampled_from([" ", "-", "_", " - ", "  ", "/", "\t"])) for _ in words[1:]]
    typed = words[0] + "".join(sep + word for sep, word in zip(separators, words[1:], strict=True))
    padded = draw(st.sampled_from(["", " ", "-"])) + random_case(draw, typed) + draw(spaces)
    return "-".join(words), padded


@given(spelling=collection_type_spellings())
@example(spelling=("ready-to-wear", "Ready to Wear"))
@example(spelling=("ready-to-wear", "ready_to_wear"))
@example(spelling=("ready-to-wear", "READY-TO-WEAR"))
def test_every_spelling_of_a_collection_type_is_one_key(spelling):
    normal, typed = spelling

    assert normalize_collection_type(typed) == normal
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", normal)


@pytest.mark.parametrize(
    ("typed", "normal"),
    [
        ("Prêt-à-porter", "pret-a-porter"),
        ("Men’s", "mens"),
        ("Men's", "mens"),
        ("Resort/Cruise", "resort-cruise"),
        ("ﬁne jewellery", "fine-jewellery"),
    ],
)
def test_collection_types_drop_accents_and_apostrophes(typed, normal):
    assert normalize_collection_type(typed) == normal


@pytest.mark.parametrize(
    "value",
    ["ready-to-wear", "Ready to Wear", "Couture", "Haute Couture", "Pre-Fall", "menswear",
     "Resort", "Prêt-à-porter", "Bridal 2025", " Ready  To   Wear "],
)  # fmt: skip
def test_the_usual_collection_types_normalise_as_slugify_did(value):
    # Ingest used Django's slugify before: the keys it stored keep matching.
    assert normalize_collection_type(value) == slugify(value)


@st.composite
def source_spellings(draw: st.DrawFn) -> tuple[str, str]:
    site = draw(st.from_regex(r"[a-z0-9][a-z0-9_.-]{0,20}", fullmatch=True))
    return site, draw(st.sampled_from(["", " "])) + random_case(draw, site) + draw(spaces)


@given(spelling=source_spellings())
@example(spelling=("vogue", "Vogue"))
@example(spelling=("vogue", " VOGUE "))
def test_every_spelling_of_a_source_is_one_key(spelling):
    normal, typed = spelling

    assert normalize_source(typed) == normal


@given(
    words=st.lists(st.text(ascii_letters + "éøü-'", min_size=1, max_size=8), min_size=1),
    data=st.data(),
)
def test_a_city_or_title_spaced_differently_is_one_key_with_its_case_kept(words, data):
    typed = data.draw(st.sampled_from(["", " "])) + "".join(
        word + data.draw(spaces) for word in words
    )

    assert normalize_city(typed) == fold_title(typed) == " ".join(words)


def test_a_city_keeps_its_case():
    assert normalize_city("  New   York ") == "New York"
    assert normalize_city("paris") != normalize_city("Paris")


@pytest.mark.parametrize(
    ("typed", "normal"),
    [("ACME", "acme"), (" Maison  X ", "maison x"), ("A.P.C.", "a.p.c."), ("Café", "café")],
)
def test_a_brand_slug_is_lower_cased_as_ingest_looks_it_up(typed, normal):
    # Nothing else is rewritten: dots, accents and spaces are kept (brand_resolve also tries
    # the slugified name, so "A.P.C." still finds a brand stored as "apc").
    assert normalize_brand_slug(typed) == normal


def test_a_source_url_is_only_stripped_and_put_in_nfc():
    assert normalize_source_url("  https://Example.com/Show/A \n") == "https://Example.com/Show/A"
    assert normalize_source_url("https://example.com/cafe\u0301") == "https://example.com/caf\u00e9"


def test_a_null_title_is_empty():
    assert fold_title(None) == fold_whitespace(None) == ""


# --- Values without a normal form ------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "   ", "-", "FW/24", "ÉTÉ24", "ß24", "FW.24", "２４"])
def test_a_season_code_without_letters_and_digits_only_is_refused(value):
    with pytest.raises(KeyValueError, match="Letters and digits"):
        normalize_season_code(value)


@pytest.mark.parametrize("value", ["", "  ", "---", "’", "✨"])
def test_a_collection_type_without_a_letter_or_digit_is_refused(value):
    with pytest.raises(KeyValueError, match="collection type"):
        normalize_collection_type(value)


# --- Pure, and in step with the catalog's columns -------------------------------------------


def test_keys_imports_only_the_standard_library():
    tree = ast.parse(Path(catalog.keys.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }

    assert imported <= sys.stdlib_module_names, imported


@pytest.mark.parametrize("name", sorted(MAX_LENGTH))
def test_the_legacy_import_knows_the_catalog_column_lengths(name):
    model = {"season_code": Runway, "collection_type": Runway, "slug": Brand}.get(name, StreetSnap)

    assert MAX_LENGTH[name] == model._meta.get_field(name).max_length
