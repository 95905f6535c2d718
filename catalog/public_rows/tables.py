"""The public rows' tables and their indexes, as migration 0014 made them, and the embargo's
clock the views and the triggers read."""

from __future__ import annotations

from datetime import UTC

from django.utils import timezone

# --- The tables ------------------------------------------------------------------------------
# Migration 0014 made them as they are here: a change is a migration of its own.

_IMAGE_COLUMNS = [
    ("id", "bigint NOT NULL PRIMARY KEY"),
    ("storage_key", "varchar(512) NOT NULL"),
    ("width", "integer NOT NULL"),
    ("height", "integer NOT NULL"),
    ("mime_type", "varchar(64) NOT NULL"),
    ("sort_order", "integer NOT NULL"),
    ("renditions", "{json} NOT NULL"),
    ("placeholder", "varchar(64) NOT NULL"),
    ("color", "varchar(7) NOT NULL"),
    # For similar images (public_image_hashes): never shown.
    ("phash", "bigint NULL"),
    ("phash_algorithm", "varchar(32) NOT NULL"),
    ("phash_band0", "integer NULL"),
    ("phash_band1", "integer NULL"),
    ("phash_band2", "integer NULL"),
    ("phash_band3", "integer NULL"),
]
RECORD_COLUMNS = [
    ("title", "varchar(255) NOT NULL"),
    ("description", "text NOT NULL"),
    ("cover_id", "bigint NULL"),
    ("image_count", "integer NOT NULL"),
    ("published_at", "{timestamp} NULL"),
    ("updated_at", "{timestamp} NOT NULL"),
    ("search", "{search} NULL"),
    # The embargo: the views show a row only inside it (publicapi/sql.py), whatever the jobs
    # that move its bytes at those times do.
    ("go_live_at", "{timestamp} NULL"),
    ("expires_at", "{timestamp} NULL"),
]

TABLES: dict[str, list[tuple[str, str]]] = {
    "public_brand_runway_rows": [
        ("id", "bigint NOT NULL PRIMARY KEY"),
        ("brand_id", "bigint NOT NULL"),
        ("brand_slug", "varchar(128) NOT NULL"),
        ("brand_name", "varchar(128) NOT NULL"),
        ("brand_is_featured", "boolean NOT NULL"),
        ("season_code", "varchar(16) NOT NULL"),
        ("season", "varchar(64) NOT NULL"),
        ("year", "integer NOT NULL"),
        ("collection_type", "varchar(32) NOT NULL"),
        *RECORD_COLUMNS,
    ],
    "public_brand_runway_image_rows": [
        *_IMAGE_COLUMNS[:1],
        ("runway_id", "bigint NOT NULL"),
        *_IMAGE_COLUMNS[1:6],
        ("look_index", "integer NOT NULL"),
        *_IMAGE_COLUMNS[6:],
    ],
    "public_street_snap_rows": [
        ("id", "bigint NOT NULL PRIMARY KEY"),
        ("city", "varchar(64) NOT NULL"),
        ("year", "integer NOT NULL"),
        ("month", "integer NOT NULL"),
        *RECORD_COLUMNS,
    ],
    "public_street_snap_image_rows": [
        *_IMAGE_COLUMNS[:1],
        ("street_snap_id", "bigint NOT NULL"),
        *_IMAGE_COLUMNS[1:6],
        ("parent_id", "bigint NULL"),
        ("is_detail", "boolean NOT NULL"),
        *_IMAGE_COLUMNS[6:],
    ],
    "public_brand_rows": [
        ("id", "bigint NOT NULL PRIMARY KEY"),
        ("name", "varchar(128) NOT NULL"),
        ("slug", "varchar(128) NOT NULL"),
        ("is_featured", "boolean NOT NULL"),
        ("runway_count", "integer NOT NULL"),
        ("latest_published_at", "{timestamp} NULL"),
    ],
    # A public brand's name and aliases, for `?q=` on runways (publicapi.search).
    "public_brand_name_rows": [
        ("brand_id", "bigint NOT NULL"),
        ("name", "varchar(128) NOT NULL"),
        ("search", "{search} NULL"),
    ],
}

# The lists' order (publicapi.search.NEWEST_FIRST), a brand's runways, an album's images, the
# band probes of similar images (comparable hashes only, as catalog's own band indexes).
_COMPARABLE = "phash IS NOT NULL AND NOT (phash_algorithm IN ('legacy', ''))"
INDEXES = [
    "CREATE INDEX public_runway_row_newest ON public_brand_runway_rows "
    "(published_at DESC{nulls_last}, id DESC)",
    "CREATE INDEX public_runway_row_brand ON public_brand_runway_rows "
    "(brand_id, published_at DESC{nulls_last}, id DESC)",
    "CREATE INDEX public_street_row_newest ON public_street_snap_rows "
    "(published_at DESC{nulls_last}, id DESC)",
    "CREATE INDEX public_runway_image_row_album ON public_brand_runway_image_rows "
    "(runway_id, sort_order, id)",
    "CREATE INDEX public_street_image_row_album ON public_street_snap_image_rows "
    "(street_snap_id, sort_order, id)",
    # The facets' columns (publicapi.facets): a count reads this index alone.
    "CREATE INDEX public_runway_row_facets ON public_brand_runway_rows "
    "(season_code, year, collection_type, brand_id)",
    "CREATE INDEX public_street_row_facets ON public_street_snap_rows (city, year, month)",
    "CREATE INDEX public_brand_row_name ON public_brand_rows (name, id)",
    "CREATE INDEX public_brand_row_slug ON public_brand_rows (slug)",
    "CREATE INDEX public_brand_name_row_brand ON public_brand_name_rows (brand_id)",
    *(
        f"CREATE INDEX public_{kind}_image_row_band{n} ON {table} (phash_band{n}) "
        f"WHERE {_COMPARABLE}"
        for kind, table in (
            ("runway", "public_brand_runway_image_rows"),
            ("street", "public_street_snap_image_rows"),
        )
        for n in range(4)
    ),
]
_SEARCH_INDEXES = [
    "CREATE INDEX public_runway_row_search ON public_brand_runway_rows USING GIN (search)",
    "CREATE INDEX public_street_row_search ON public_street_snap_rows USING GIN (search)",
    "CREATE INDEX public_brand_name_row_search ON public_brand_name_rows USING GIN (search)",
]


def create_tables(vendor: str) -> list[str]:
    postgres = vendor == "postgresql"
    types = {
        "json": "jsonb" if postgres else "text",
        "timestamp": "timestamp with time zone" if postgres else "datetime",
        "search": "tsvector" if postgres else "text",
    }
    statements = []
    for table, columns in TABLES.items():
        listed = ", ".join(f"{name} {kind.format(**types)}" for name, kind in columns)
        statements.append(f"CREATE TABLE {table} ({listed})")
    nulls_last = " NULLS LAST" if postgres else ""
    statements += [index.format(nulls_last=nulls_last) for index in INDEXES]
    return statements + ([*_SEARCH_INDEXES, CLOCK] if postgres else [])


def drop_tables(vendor: str) -> list[str]:
    clock = ["DROP FUNCTION IF EXISTS archive_now()"] if vendor == "postgresql" else []
    return [f"DROP TABLE IF EXISTS {table}" for table in TABLES] + clock


# SQLite the application's clock, registered on each connection (catalog/apps.py), as Django
# stores a time there (ISO text in UTC). A test moves it with the application's (tests/support).
CLOCK = (
    "CREATE OR REPLACE FUNCTION archive_now() RETURNS timestamptz LANGUAGE sql STABLE "
    "AS $$ SELECT now() $$"
)


def sqlite_clock() -> str:
    return timezone.now().astimezone(UTC).replace(tzinfo=None).isoformat(" ")
