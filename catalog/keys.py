"""Pure key derivations shared by ingest, review and the legacy import (no Django import).

The entity keys (runway: brand, season_code, collection_type; street: city, year, month,
title_key) and the source key (source, source_url) are compared by plain equality: in the
database's unique constraints and in ingest's lookups (catalog/selectors.py). So every path
that writes one of these values (the ingest serializer, the editors' record form, the legacy
import) must store the same normal form, or one show becomes two rows and a deleted article
comes back. These functions are that normal form, the only one.

Every normal form starts with Unicode NFC: "São Paulo" typed with a precomposed "ã" and with
an "a" followed by a combining tilde (as macOS file names, some keyboards and some sites send
it) are canonically the same text, shown alike, and must be one key. Where a case mapping
follows, the result is put in NFC again ("H" with a combining line below lower-cases to a
letter that composes).

Each normaliser is idempotent (normalising a normal value returns it unchanged) and maps the
spellings people and crawlers actually use for one value to one key (hypothesis checks both:
tests/catalog/test_keys.py). A value that has no normal form raises `KeyValueError`; each
caller turns that into its own refusal (a 400 field error, a form error, a legacy row that
stops the import).
"""

import re
import unicodedata

__all__ = [
    "KeyValueError",
    "fold_title",
    "fold_whitespace",
    "normalize_brand_slug",
    "normalize_city",
    "normalize_collection_type",
    "normalize_season_code",
    "normalize_source",
    "normalize_source_url",
]

_SEASON_CODE = re.compile(r"[A-Za-z0-9]+")
# Whitespace and hyphens inside a season code are how people space it ("fw 24", "FW-24").
_SEASON_CODE_SEPARATORS = re.compile(r"[\s-]+")
_NOT_SLUG_CHARACTER = re.compile(r"[^a-z0-9]+")
# Dropped, not turned into a separator: "Men's" is "mens", not "men-s".
_APOSTROPHES = str.maketrans("", "", "'\u2019\u02bc")


class KeyValueError(ValueError):
    """A value that has no normal form (empty, or characters a key cannot hold)."""


def _nfc(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def fold_whitespace(value: str | None) -> str:
    """The text in NFC, with runs of whitespace (spaces, tabs, line breaks, no-break spaces)
    as one space, none at either end; None as ''. Case and wording are kept.

    The one whitespace folding of the project: key parts (city, title_key) and the free-text
    fields ingest stores (brand as sent, season, title) all go through it.
    """
    return " ".join(_nfc(value or "").split())


def fold_title(title: str | None) -> str:
    """The street entity key's title part (`title_key`): the title in NFC, whitespace folded.

    Crawlers and the legacy archive send the same album with stray spaces, tabs or line breaks
    in the title; folding them here keeps one album one row. Case and wording differences are
    different albums on purpose: they cannot be told apart mechanically, and editors see both.
    """
    return fold_whitespace(title)


def normalize_season_code(value: str) -> str:
    """A season code as the catalog stores it: ASCII letters and digits, upper case.

    "fw24", "FW 24", " fw-24 " -> "FW24". Whitespace and hyphens are dropped (they only space
    the code out); anything else (a slash, an accented letter) has no normal form and is
    refused rather than guessed. The result is never longer than the value.
    """
    code = _SEASON_CODE_SEPARATORS.sub("", _nfc(value))
    # Checked before upper-casing: "ß".upper() is "SS", which would let a non-ASCII code in.
    if not _SEASON_CODE.fullmatch(code):
        raise KeyValueError("Letters and digits, e.g. FW24.")
    return code.upper()


def normalize_collection_type(value: str) -> str:
    """A collection type as the catalog stores it: a lower-case ASCII slug of its words.

    "Ready to Wear", "ready_to_wear", "READY-TO-WEAR" -> "ready-to-wear"; "Prêt-à-porter" ->
    "pret-a-porter"; "Men's" -> "mens". Accents are dropped (NFKD), apostrophes are dropped,
    every other run of non-alphanumerics separates words. The same as Django's `slugify` on
    the usual vocabulary (tested), except that underscores and punctuation separate words
    instead of being kept or glued ("ready_to_wear" was a second key for "ready-to-wear").
    NFKD may lengthen a value ("ﬁ" -> "fi"): callers check the result against the column.
    """
    decomposed = unicodedata.normalize("NFKD", _nfc(value).translate(_APOSTROPHES))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    slug = _NOT_SLUG_CHARACTER.sub("-", plain).strip("-")
    if not slug:
        raise KeyValueError("A collection type, e.g. ready-to-wear.")
    return slug


def normalize_source(value: str) -> str:
    """A source (the crawler's site id) as the catalog stores it: NFC, whitespace folded, lower
    case.

    "Vogue", " VOGUE " -> "vogue". Part of the source key, which must not depend on how a
    crawler, an editor or the legacy archive capitalised the site id. '' stays '' (legacy
    rows without a source).
    """
    return _nfc(fold_whitespace(value).lower())


def normalize_source_url(value: str) -> str:
    """A source URL as the catalog stores it: NFC, without surrounding whitespace.

    Ingest, the legacy import and any other writer store the same string. Nothing else is
    touched: a URL's path is case-sensitive, and rewriting URLs (scheme, host case, trailing
    slash, percent-encoding) would guess at what a site considers one article. NFC only joins
    spellings of one text (an IRI's "é" sent precomposed or decomposed).
    """
    return _nfc(value).strip()


def normalize_brand_slug(value: str) -> str:
    """A brand slug as ingest looks it up: NFC, whitespace folded, lower case.

    "ACME" -> "acme". `catalog.selectors.brand_resolve` finds a crawler's brand by this form
    of the name it sends (or by its slugified form, or an alias), so a brand stored as "Acme"
    would never be found by slug; the legacy import stores new brands this way and matches
    legacy slugs against this form of the catalog's. Nothing else is rewritten: a slug with
    dots or accents ("a.p.c.", "café") is kept, as the archive's URLs used it.
    """
    return _nfc(fold_whitespace(value).lower())


def normalize_city(value: str) -> str:
    """A city as the catalog stores it (street entity key): NFC, whitespace folded, case kept.

    Case is kept on purpose: the city is displayed as stored ("New York", "Saint-Tropez",
    "McAllen"), and no mechanical capitalisation gets every city right. So "Paris" and
    "paris" are two keys, like two wordings of a title; the public API's city filter ignores
    case. A case-insensitive key would need its own column (as `title_key` is for titles).
    """
    return fold_whitespace(value)
