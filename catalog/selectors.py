"""Reads other apps need from the catalog: brand resolution, record lookups by key, the
indexed near-duplicate candidate query, and the albums whose renditions were never tried."""

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from django.db import connection
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower
from django.utils.text import slugify

from catalog.keys import fold_whitespace, normalize_brand_slug
from catalog.models import (
    IMAGE_MODELS,
    IMAGE_PARENT_FIELD,
    LEGACY_PHASH_ALGORITHM,
    Brand,
    BrandAlias,
    NotDuplicate,
    Record,
    RecordImage,
    Runway,
    RunwayImage,
    StreetSnap,
    StreetSnapImage,
)

# --- Ingest lookups -------------------------------------------------------------------------


def brand_resolve(*, name: str) -> Brand | None:
    """The brand a crawler means by ``name``: its slug (as sent or slugified), else an alias.

    Case-insensitive throughout. Each branch is an equality on a unique index (slug, and the
    alias's `Lower(alias)` constraint), so this stays two index lookups however many brands.
    """
    value = fold_whitespace(name)
    if not value:
        return None
    slugs = {normalize_brand_slug(value), slugify(value)} - {""}
    brand = Brand.objects.filter(slug__in=slugs).order_by("pk").first()
    if brand is not None:
        return brand
    alias = (
        BrandAlias.objects.annotate(alias_lower=Lower("alias"))
        .filter(alias_lower=value.lower())
        .select_related("brand")
        .first()
    )
    return alias.brand if alias is not None else None


def record_by_source_key[R: Record](*, model: type[R], source: str, source_url: str) -> R | None:
    """Deleted rows included: deleting an album is terminal for its crawled article."""
    if not source_url:
        return None
    # A row of model's own (the stubs type the manager of the abstract base).
    return cast(R | None, model.objects.filter(source=source, source_url=source_url).first())


def record_by_entity_key[R: Record](*, model: type[R], values: Mapping[str, Any]) -> R | None:
    """The live record of `model` whose entity key these values of its `entity_key_fields`
    make. Live rows only: the entity key is unique among them, and a deleted row freed its
    key."""
    # A row of model's own (the stubs type the manager of the abstract base).
    return cast(R | None, model.objects.live().filter(**model.entity_key_filter(values)).first())


def runway_by_entity_key(*, brand: Brand, season_code: str, collection_type: str) -> Runway | None:
    values = {"brand": brand, "season_code": season_code, "collection_type": collection_type}
    return record_by_entity_key(model=Runway, values=values)


def street_snap_by_entity_key(*, city: str, year: int, month: int, title: str) -> StreetSnap | None:
    values = {"city": city, "year": year, "month": month, "title": title}
    return record_by_entity_key(model=StreetSnap, values=values)


def image_near_duplicate_candidates(
    *,
    image_model: type[RunwayImage] | type[StreetSnapImage],
    probes: Sequence[Sequence[int]],
    phash_algorithm: str,
    exclude_record_id: int | None = None,
    sha1: str = "",
    phash: int | None = None,
    max_distance: int | None = None,
) -> list[tuple[int, int]]:
    """Live images of live records, hashed by ``phash_algorithm``, whose perceptual-hash bands
    match any probe (and, given ``phash`` and ``max_distance``, within that many bits of it).
    Returns ``(id, phash)`` pairs.

    ``probes[n]`` lists the 16-bit values to look for in band ``n`` (see
    ``ingest.hashing.band_probes``). Each band has a partial index on live rows with a
    comparable hash that carries each candidate's id and hash: four index-only scans, one per
    band, over a few hundred probe values, with the exact distance checked there (PostgreSQL)
    or in Python, never a scan of the table nor a heap page per candidate. Only the matches
    are then read from the table: their algorithm, their album (bench/scale.py; docs/hashing.md).

    Hashes of another algorithm are not comparable bit for bit, so they are filtered here, in
    the query: the legacy archive's (of an unknown algorithm) are not even in the band
    indexes, so at millions of legacy images a lookup never visits their rows.

    Given the new image's ``sha1``, the pictures an editor said it is not a duplicate of
    (:func:`not_duplicates_of`) are left out too.
    """
    if len(probes) != 4:
        raise ValueError("four bands of probes expected")
    if phash_algorithm in (LEGACY_PHASH_ALGORITHM, ""):
        raise ValueError(f"hashes of algorithm {phash_algorithm!r} are never compared")
    # Spelled out: the band indexes' own condition, which is what lets SQLite (and not only
    # PostgreSQL) use them.
    comparable = image_model.objects.live().comparable_hashes()
    near = phash is not None and max_distance is not None
    if phash is not None and near and connection.vendor == "postgresql":
        signed = phash - (1 << 64) if phash >= 1 << 63 else phash
        comparable = comparable.filter(
            RawSQL(  # noqa: S611 - the values are parameters
                "bit_count((phash # %s)::bit(64)) <= %s",
                [signed, max_distance],
                output_field=BooleanField(),
            )
        )
    bands = [
        comparable.filter(**{f"phash_band{band}__in": list(values)})
        .order_by()
        .values_list("id", "phash")
        for band, values in enumerate(probes)
    ]
    found: dict[int, int] = {}
    for image_id, image_phash in bands[0].union(*bands[1:], all=True):
        if phash is not None and max_distance is not None:
            if ((image_phash ^ phash) & _MASK64).bit_count() > max_distance:
                continue
        found[image_id] = image_phash
    if not found:
        return []
    # Only these are read from the table: their algorithm, their album.
    record = image_model.record_field
    rows = image_model.objects.filter(
        pk__in=list(found), phash_algorithm=phash_algorithm, **{f"{record}__deleted_at": None}
    )
    if exclude_record_id is not None:
        rows = rows.exclude(**{f"{record}_id": exclude_record_id})
    distinct = not_duplicates_of(sha1) if sha1 else set()
    if distinct:
        rows = rows.exclude(sha1__in=distinct)
    return sorted((pk, found[pk]) for pk in rows.values_list("pk", flat=True))


_MASK64 = (1 << 64) - 1


def not_duplicates_of(sha1: str) -> set[str]:
    """The contents an editor said the picture ``sha1`` is not a near-duplicate of."""
    pairs = NotDuplicate.objects.filter(Q(sha1_low=sha1) | Q(sha1_high=sha1))
    return {
        high if low == sha1 else low for low, high in pairs.values_list("sha1_low", "sha1_high")
    }


# --- Renditions -----------------------------------------------------------------------------

_CATCH_UP_PAGE = 500
_CATCH_UP_PAGES = 10


def records_without_renditions(
    *, limit: int, stored_before: datetime, exclude: Collection[tuple[str, int]] = ()
) -> list[tuple[str, int]]:
    """Albums (kind, id) with an image whose renditions were never tried (neither made nor
    failed) stored before ``stored_before``, leaving out ``exclude``; at most ``limit``:
    runway albums first, each kind's by its oldest such image.

    The catch-up's query (ingest.tasks.renditions_catch_up). It walks the partial index of
    pending images by id for at most a few pages, so a million-row legacy import waiting for
    its backfill costs each run the same few milliseconds.
    """
    found: dict[tuple[str, int], None] = {}
    for kind, model in IMAGE_MODELS.items():
        pending = model.objects.filter(
            rendition_status=RecordImage.RenditionStatus.PENDING, created_at__lt=stored_before
        ).order_by("pk")
        after = 0
        for _ in range(_CATCH_UP_PAGES):
            if len(found) >= limit:
                return list(found)
            page = list(
                pending.filter(pk__gt=after).values_list("pk", IMAGE_PARENT_FIELD[kind])[
                    :_CATCH_UP_PAGE
                ]
            )
            for _, record_id in page:
                if (kind, record_id) not in exclude and len(found) < limit:
                    found.setdefault((kind, record_id))
            if len(page) < _CATCH_UP_PAGE:
                break
            after = page[-1][0]
    return list(found)
