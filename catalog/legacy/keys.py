"""The entity and source keys of legacy rows and catalog records, compared in the catalog's
normal form (catalog.keys, the same functions ingest and the editors' form use)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from catalog.keys import (
    KeyValueError,
    fold_title,
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
    normalize_source,
    normalize_source_url,
)
from catalog.legacy.plan import BrandKey
from catalog.legacy.rows import RUNWAY, LegacyRecord

# The catalog's column lengths (catalog/models.py; a test keeps them in step) for the values the
# import normalises: a normal form can be longer than the legacy value (NFKD turns a ligature
# into two letters), and a value too long for its column cannot be stored.
MAX_LENGTH = {
    "slug": 128,
    "season_code": 16,
    "collection_type": 32,
    "city": 64,
    "source": 32,
    "source_url": 1024,
}

# The fields of a legacy row that are key or source values, with their normal form. Runway key
# parts may have none (the row stops the run); the others always have one.
_RUNWAY_KEY_FIELDS = {
    "season_code": normalize_season_code,
    "collection_type": normalize_collection_type,
}
_STREET_KEY_FIELDS = {"city": normalize_city}
_SOURCE_FIELDS = {"source": normalize_source, "source_url": normalize_source_url}


def normalise_record(row: LegacyRecord) -> tuple[LegacyRecord, tuple[str, ...], list[str]]:
    """`row` with its key and source values in the catalog's normal form, the names of the
    fields that changed, and why a value cannot be stored (no normal form, or too long for its
    column; such a value is kept as given and the row stops the run)."""
    normalisers = _RUNWAY_KEY_FIELDS if row.kind == RUNWAY else _STREET_KEY_FIELDS
    values: dict[str, Any] = {}  # replace() takes every field's type
    problems: list[str] = []
    for name, normalise in (normalisers | _SOURCE_FIELDS).items():
        given = getattr(row, name)
        try:
            value = normalise(given)
        except KeyValueError as error:
            problems.append(f"{name} {given!r} has no normal form ({error})")
            continue
        if len(value) > MAX_LENGTH[name]:
            problems.append(
                f"{name} {value!r} is longer than {MAX_LENGTH[name]} characters once normalised"
            )
        elif value != given:
            values[name] = value
    return (replace(row, **values) if values else row), tuple(values), problems


def normal_or_given(normalise: Callable[[str], str], value: str) -> str:
    """The normal form of a value read from the catalog, or the value when it has none (it
    then equals only a legacy value that has none either, and such a row stops the run)."""
    try:
        return normalise(value)
    except KeyValueError:
        return value


# The catalog's entity key columns (each model's `entity_key`) that the planner compares in
# normal form; the others (a brand's id, a year, a month) compare as stored.
_CATALOG_NORMAL_FORMS: dict[str, Callable[[str], str]] = {
    "season_code": normalize_season_code,
    "collection_type": normalize_collection_type,
    "city": normalize_city,
    "title_key": fold_title,
}


def catalog_entity_key(columns: Sequence[str], values: Sequence[Any]) -> tuple:
    """The entity key of a record already in the catalog (the `values` of its model's
    `entity_key` `columns`), in the form legacy keys take.

    Catalog rows are stored in normal form by every writer; normalising here as well keeps the
    comparison honest for a row written before that was so (an editor's "fw24")."""
    return tuple(
        normal_or_given(_CATALOG_NORMAL_FORMS[column], value)
        if column in _CATALOG_NORMAL_FORMS
        else value
        for column, value in zip(columns, values, strict=True)
    )


def catalog_source_key(source: str, source_url: str) -> tuple[str, str]:
    return (normalize_source(source), normalize_source_url(source_url))


def runway_key(brand: BrandKey, row: LegacyRecord) -> tuple:
    """The entity key of a legacy runway (its values already normalised)."""
    return (brand, row.season_code, row.collection_type)


def street_key(row: LegacyRecord) -> tuple:
    return (row.city, row.year, row.month, fold_title(row.title))


def describe_key(kind: str, key: tuple | None, brand_slugs: Mapping[BrandKey, str]) -> str:
    if key is None:
        return kind
    if kind == RUNWAY:
        brand, season_code, collection_type = key
        return f"runway {brand_slugs.get(brand, brand)} {season_code} {collection_type}"
    city, year, month, title_key = key
    return f"street {city} {year}-{month:02d} {title_key!r}"
