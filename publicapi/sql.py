"""The SQL of the public views: today's version (V8) and what creates them again.

A migration creates a version (`DROP VIEW IF EXISTS` + `CREATE VIEW`); never edit a version
that a migration uses: add VIEWS_V<n+1> here, a migration that applies it, and a line in
BY_MIGRATION (tests/publicapi/test_views_sql.py checks that every migration is listed); the
version it replaces moves to publicapi/migrations/_past_views.py, with V1 to V7.

Visibility is decided once per kind, in the record view; the image and brand views select
from it, so they cannot disagree with it. The SQL is portable (PostgreSQL and SQLite). The
views read the public rows (catalog/public_rows/), tables that hold only the rows the views
show, so nothing hidden is beneath them whatever SQL reads them.
"""

from publicapi.migrations._past_views import (
    VIEWS_V1,
    VIEWS_V2,
    VIEWS_V3,
    VIEWS_V4,
    VIEWS_V5,
    VIEWS_V6,
    VIEWS_V7,
)

DROP_VIEWS = [
    # V4's, first: they select from the record views.
    "DROP VIEW IF EXISTS public_image_hashes",
    "DROP VIEW IF EXISTS public_brand_names",
    "DROP VIEW IF EXISTS public_brands",
    "DROP VIEW IF EXISTS public_brand_runway_images",
    "DROP VIEW IF EXISTS public_street_snap_images",
    "DROP VIEW IF EXISTS public_brand_runways",
    "DROP VIEW IF EXISTS public_street_snaps",
]


def public_view_names() -> list[str]:
    """The name of every public view any version creates (DROP_VIEWS lists them all)."""
    return [statement.split()[-1] for statement in DROP_VIEWS]


# V8: the views read the public rows (catalog/public_rows.py): tables that hold exactly the
# public rows, kept by triggers on catalog's tables, so whoever reads the views, with whatever
# SQL, has no hidden row beneath them. They check their owner's rights again (not
# security_invoker): the public role reads the views, and no table. And a record shows only
# inside its embargo, past its go-live and before its expiry, now: whatever the jobs that move
# its bytes at those times do, the API never shows it early or late. Same columns as V7.
_COMPARABLE = "phash IS NOT NULL AND NOT (phash_algorithm IN ('legacy', ''))"


def _views_v8(vendor: str) -> list[str]:
    # archive_now(): the embargo's clock (catalog/public_rows.py).
    window = (
        "(go_live_at IS NULL OR go_live_at <= archive_now()) "
        "AND (expires_at IS NULL OR expires_at > archive_now())"
    )
    return [
        f"""
    CREATE VIEW public_brand_runways AS
    SELECT id, brand_id, brand_slug, brand_name, season_code, season, year, collection_type,
           title, description, cover_id, image_count, published_at, updated_at, search,
           expires_at
    FROM public_brand_runway_rows WHERE {window}
    """,  # noqa: S608 - our own condition
        """
    CREATE VIEW public_brand_runway_images AS
    SELECT i.id, i.runway_id, i.storage_key, i.width, i.height, i.mime_type, i.sort_order,
           i.look_index, i.renditions, i.placeholder, i.color
    FROM public_brand_runway_image_rows i JOIN public_brand_runways r ON r.id = i.runway_id
    """,
        f"""
    CREATE VIEW public_street_snaps AS
    SELECT id, city, year, month, title, description, cover_id, image_count, published_at,
           updated_at, search, expires_at
    FROM public_street_snap_rows WHERE {window}
    """,  # noqa: S608 - our own condition
        """
    CREATE VIEW public_street_snap_images AS
    SELECT i.id, i.street_snap_id, i.storage_key, i.width, i.height, i.mime_type,
           i.sort_order, i.parent_id, i.is_detail, i.renditions, i.placeholder, i.color
    FROM public_street_snap_image_rows i JOIN public_street_snaps s ON s.id = i.street_snap_id
    """,
        # A brand while it has a public runway, now: counted here (a scheduled one does not).
        """
    CREATE VIEW public_brands AS
    SELECT b.id, b.name, b.slug, b.is_featured, COUNT(r.id) AS runway_count,
           MAX(r.published_at) AS latest_published_at
    FROM public_brand_rows b JOIN public_brand_runways r ON r.brand_id = b.id
    GROUP BY b.id, b.name, b.slug, b.is_featured
    """,
        """
    CREATE VIEW public_brand_names AS
    SELECT n.brand_id, n.name, n.search FROM public_brand_name_rows n
    WHERE EXISTS (SELECT 1 FROM public_brand_runways r WHERE r.brand_id = n.brand_id)
    """,
        f"""
    CREATE VIEW public_image_hashes AS
    SELECT 'runway' AS kind, i.id, i.runway_id AS record_id, i.phash, i.phash_algorithm,
           i.phash_band0, i.phash_band1, i.phash_band2, i.phash_band3
    FROM public_brand_runway_image_rows i JOIN public_brand_runways r ON r.id = i.runway_id
    WHERE i.{_COMPARABLE}
    UNION ALL
    SELECT 'street' AS kind, i.id, i.street_snap_id AS record_id, i.phash, i.phash_algorithm,
           i.phash_band0, i.phash_band1, i.phash_band2, i.phash_band3
    FROM public_street_snap_image_rows i JOIN public_street_snaps s ON s.id = i.street_snap_id
    WHERE i.{_COMPARABLE}
    """,  # noqa: S608 - our own condition
    ]


VIEWS_V8 = {vendor: _views_v8(vendor) for vendor in ("postgresql", "sqlite")}

# The views each publicapi migration leaves behind. After a `migrate` run that dropped the
# views (publicapi/apps.py), the version of the newest applied migration comes back.
BY_MIGRATION: dict[str, list[str] | dict[str, list[str]]] = {
    "0001_public_views": VIEWS_V1,
    "0002_public_views_v2": VIEWS_V2,
    "0003_public_views_v3": VIEWS_V3,
    "0004_public_views_v4": VIEWS_V4,
    "0005_public_views_v5": VIEWS_V5,
    "0006_public_views_v6": VIEWS_V6,
    "0007_public_views_v7": VIEWS_V7,
    "0008_public_rows": VIEWS_V8,
}


def for_vendor(views: list[str] | dict[str, list[str]], vendor: str) -> list[str]:
    """A version's statements for this kind of database (database_kind): a version is one
    list, or one per vendor; "postgresql<15" takes "postgresql"'s unless it has its own."""
    if not isinstance(views, dict):
        return views
    return views[vendor] if vendor in views else views[vendor.split("<")[0]]


def database_kind(connection) -> str:
    """The key of a connection's statements in a version (for_vendor)."""
    if connection.vendor == "postgresql" and connection.pg_version < 150000:
        return "postgresql<15"
    return connection.vendor


def views_for(applied: set[str]) -> list[str] | dict[str, list[str]]:
    """The CREATE VIEW statements of the newest applied publicapi migration ([] for none)."""
    names = sorted(name for name in applied if name in BY_MIGRATION)
    return BY_MIGRATION[names[-1]] if names else []
