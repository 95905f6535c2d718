"""A refresh, as SQL over a set of ids: the statements that make a record's (or brand's) public
rows again from catalog's tables. The triggers of each database run them (postgresql, sqlite);
a migration runs `refresh_all`."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.public_rows.tables import RECORD_COLUMNS, TABLES

# --- A refresh, as SQL over a set of ids ---------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """One kind of record: its catalog tables and its public ones."""

    name: str
    table: str
    images: str
    fk: str  # the image's column naming its record
    rows: str
    image_rows: str
    own_columns: list[str]  # the record's own columns, after id
    image_columns: list[str]  # the image's own, after the common ones
    runway: bool


RUNWAY = Kind(
    name="runway",
    table="brand_runways",
    images="brand_runway_images",
    fk="runway_id",
    rows="public_brand_runway_rows",
    image_rows="public_brand_runway_image_rows",
    own_columns=["season_code", "season", "year", "collection_type"],
    image_columns=["look_index"],
    runway=True,
)
STREET = Kind(
    name="street",
    table="street_snaps",
    images="street_snap_images",
    fk="street_snap_id",
    rows="public_street_snap_rows",
    image_rows="public_street_snap_image_rows",
    own_columns=["city", "year", "month"],
    image_columns=["parent_id", "is_detail"],
    runway=False,
)
KINDS = [RUNWAY, STREET]

# A record has public rows while published, live, not expired and its bytes are public (or, in
# the embedded mode, need no copy: catalog.visibility.flag). Its go-live the views hold.
PUBLIC_RECORD = (
    "r.status = 'published' AND r.deleted_at IS NULL AND r.bytes_public "
    "AND (r.expires_at IS NULL OR r.expires_at > archive_now())"
)


def _image_copied_columns(kind: Kind) -> list[str]:
    """The columns of an image its public row copies (besides its id and hash bands)."""
    return [
        kind.fk,
        "storage_key",
        "width",
        "height",
        "mime_type",
        "sort_order",
        *kind.image_columns,
        "renditions",
        "placeholder",
        "color",
        "phash",
        "phash_algorithm",
    ]


def image_shown_columns(kind: Kind) -> list[str]:
    """The columns of an image a refresh reads: a change of any other one changes nothing."""
    return [*_image_copied_columns(kind), "deleted_at"]


def _search(vendor: str, alias: str) -> str:
    return f"{alias}.search_vector" if vendor == "postgresql" else "NULL"


def record_refresh(kind: Kind, vendor: str, ids: str) -> list[str]:
    """The statements that make the public rows of the records whose ids ``ids`` (an SQL
    expression: a subquery, or a list of values) gives what catalog's tables say now."""
    image_names = ["id", *_image_copied_columns(kind), *(f"phash_band{n}" for n in range(4))]
    if kind.runway:
        record_names = ["id", "brand_id", "brand_slug", "brand_name", "brand_is_featured"]
        record_values = ["r.id", "r.brand_id", "b.slug", "b.name", "b.is_featured"]
        joined = "JOIN brands b ON b.id = r.brand_id"
        image_values = [f"i.{name}" for name in image_names]
    else:
        record_names, record_values, joined = ["id"], ["r.id"], ""
        # A detail keeps its parent only while the parent is a live main image of the album;
        # otherwise it shows as a main image.
        image_values = [
            {
                "parent_id": "CASE WHEN p.id IS NOT NULL THEN i.parent_id END",
                "is_detail": "(p.id IS NOT NULL)",
            }.get(name, f"i.{name}")
            for name in image_names
        ]
    record_names += [*kind.own_columns, *(name for name, _ in RECORD_COLUMNS)]
    record_values += [f"r.{name}" for name in kind.own_columns]
    record_values += [
        "r.title",
        "r.description",
        # A cover only while it is a live image of the same album.
        f"(SELECT c.id FROM {kind.images} c WHERE c.id = r.cover_id AND c.{kind.fk} = r.id "
        "AND c.deleted_at IS NULL)",
        "r.image_count",
        "r.published_at",
        "r.updated_at",
        _search(vendor, "r"),
        "r.go_live_at",
        "r.expires_at",
    ]
    parent = (
        ""
        if kind.runway
        else f"LEFT JOIN {kind.images} p ON p.id = i.parent_id AND p.{kind.fk} = i.{kind.fk} "
        "AND p.deleted_at IS NULL AND NOT p.is_detail"
    )
    return [
        f"DELETE FROM {kind.image_rows} WHERE {kind.fk} IN ({ids})",
        f"DELETE FROM {kind.rows} WHERE id IN ({ids})",
        f"INSERT INTO {kind.rows} ({', '.join(record_names)}) "
        f"SELECT {', '.join(record_values)} FROM {kind.table} r {joined} "
        f"WHERE r.id IN ({ids}) AND {PUBLIC_RECORD}",
        f"INSERT INTO {kind.image_rows} ({', '.join(image_names)}) "
        f"SELECT {', '.join(image_values)} FROM {kind.images} i "
        f"JOIN {kind.rows} r ON r.id = i.{kind.fk} {parent} "
        f"WHERE i.{kind.fk} IN ({ids}) AND i.deleted_at IS NULL",
    ]


def brand_refresh(vendor: str, ids: str) -> list[str]:
    """The statements that make the public rows of the brands ``ids`` gives: a brand with a
    public runway, its count and newest publication, its name and aliases."""
    public = "EXISTS (SELECT 1 FROM public_brand_rows p WHERE p.id = {column})"
    return [
        f"DELETE FROM public_brand_rows WHERE id IN ({ids})",
        "INSERT INTO public_brand_rows "
        "(id, name, slug, is_featured, runway_count, latest_published_at) "
        "SELECT brand_id, brand_name, brand_slug, brand_is_featured, COUNT(*), "
        "MAX(published_at) FROM public_brand_runway_rows "
        f"WHERE brand_id IN ({ids}) "
        "GROUP BY brand_id, brand_name, brand_slug, brand_is_featured",
        f"DELETE FROM public_brand_name_rows WHERE brand_id IN ({ids})",
        "INSERT INTO public_brand_name_rows (brand_id, name, search) "
        f"SELECT b.id, b.name, {_search(vendor, 'b')} FROM brands b "
        f"WHERE b.id IN ({ids}) AND {public.format(column='b.id')} "
        f"UNION ALL SELECT a.brand_id, a.alias, {_search(vendor, 'a')} FROM brand_aliases a "
        f"WHERE a.brand_id IN ({ids}) AND {public.format(column='a.brand_id')}",
    ]


def brand_columns_refresh(ids: str) -> list[str]:
    """A brand's own columns on its public runways (its name, slug, featured flag)."""
    return [
        "UPDATE public_brand_runway_rows SET brand_slug = b.slug, brand_name = b.name, "
        "brand_is_featured = b.is_featured FROM brands b "
        f"WHERE b.id = public_brand_runway_rows.brand_id AND b.id IN ({ids})"
    ]


def trigger_names() -> list[tuple[str, str]]:
    names = []
    for kind in KINDS:
        for table in (kind.table, kind.images):
            names += [
                (f"{table}_public_{event}", table) for event in ("insert", "update", "delete")
            ]
    names.append(("brands_public_update", "brands"))
    names += [
        (f"brand_aliases_public_{e}", "brand_aliases") for e in ("insert", "update", "delete")
    ]
    return names


def refresh_all(vendor: str) -> list[str]:
    """Every public row made again from catalog's tables (after a migrate that ran without the
    triggers, and when the tables are first made)."""
    statements = [f"DELETE FROM {table}" for table in TABLES]
    for kind in KINDS:
        statements += record_refresh(kind, vendor, f"SELECT id FROM {kind.table}")
    return statements + brand_refresh(vendor, "SELECT id FROM brands")
