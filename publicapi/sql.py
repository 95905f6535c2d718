"""The SQL of the public views, one frozen list per version.

A migration creates a version (`DROP VIEW IF EXISTS` + `CREATE VIEW`); never edit a version
that a migration uses: add VIEWS_V<n+1>, a migration that applies it, and a line in
BY_MIGRATION (tests/publicapi/test_views_sql.py checks that every migration is listed).

Visibility is decided once per kind, in the record view; the image and brand views select
from it, so they cannot disagree with it. The SQL is portable: PostgreSQL and SQLite.
"""

DROP_VIEWS = [
    "DROP VIEW IF EXISTS public_brands",
    "DROP VIEW IF EXISTS public_brand_runway_images",
    "DROP VIEW IF EXISTS public_street_snap_images",
    "DROP VIEW IF EXISTS public_brand_runways",
    "DROP VIEW IF EXISTS public_street_snaps",
]

VIEWS_V1 = [
    # A cover shows only while it is a live image of the same runway.
    """
    CREATE VIEW public_brand_runways AS
    SELECT r.id, r.brand_id, r.season_code, r.season, r.year, r.collection_type,
           r.title, r.description,
           CASE WHEN c.id IS NOT NULL THEN r.cover_id END AS cover_id,
           r.image_count, r.published_at, r.updated_at
    FROM brand_runways r
    LEFT JOIN brand_runway_images c
           ON c.id = r.cover_id AND c.runway_id = r.id AND c.deleted_at IS NULL
    WHERE r.status = 'published' AND r.deleted_at IS NULL
    """,
    """
    CREATE VIEW public_brand_runway_images AS
    SELECT i.id, i.runway_id, i.storage_key, i.width, i.height, i.sort_order, i.look_index
    FROM brand_runway_images i
    JOIN public_brand_runways r ON r.id = i.runway_id
    WHERE i.deleted_at IS NULL
    """,
    """
    CREATE VIEW public_street_snaps AS
    SELECT s.id, s.city, s.year, s.month, s.title, s.description,
           CASE WHEN c.id IS NOT NULL THEN s.cover_id END AS cover_id,
           s.image_count, s.published_at, s.updated_at
    FROM street_snaps s
    LEFT JOIN street_snap_images c
           ON c.id = s.cover_id AND c.street_snap_id = s.id AND c.deleted_at IS NULL
    WHERE s.status = 'published' AND s.deleted_at IS NULL
    """,
    # A detail keeps its parent only while the parent is a live main image of the same album;
    # otherwise it is shown as a main image.
    """
    CREATE VIEW public_street_snap_images AS
    SELECT i.id, i.street_snap_id, i.storage_key, i.width, i.height, i.sort_order,
           CASE WHEN p.id IS NOT NULL THEN i.parent_id END AS parent_id,
           (p.id IS NOT NULL) AS is_detail
    FROM street_snap_images i
    JOIN public_street_snaps s ON s.id = i.street_snap_id
    LEFT JOIN street_snap_images p
           ON p.id = i.parent_id AND p.street_snap_id = i.street_snap_id
          AND p.deleted_at IS NULL AND NOT p.is_detail
    WHERE i.deleted_at IS NULL
    """,
    # A brand is public while it has at least one public runway.
    """
    CREATE VIEW public_brands AS
    SELECT b.id, b.name, b.slug, b.is_featured,
           COUNT(r.id) AS runway_count, MAX(r.published_at) AS latest_published_at
    FROM brands b
    JOIN public_brand_runways r ON r.brand_id = b.id
    GROUP BY b.id, b.name, b.slug, b.is_featured
    """,
]

# V2: the brand's slug and name on each runway (the list shows and filters them without
# joining public_brands, whose GROUP BY would aggregate every brand per request), and each
# image's mime_type (so the frontend can pick a <source type>). Visibility rules unchanged.
VIEWS_V2 = [
    """
    CREATE VIEW public_brand_runways AS
    SELECT r.id, r.brand_id, b.slug AS brand_slug, b.name AS brand_name,
           r.season_code, r.season, r.year, r.collection_type,
           r.title, r.description,
           CASE WHEN c.id IS NOT NULL THEN r.cover_id END AS cover_id,
           r.image_count, r.published_at, r.updated_at
    FROM brand_runways r
    JOIN brands b ON b.id = r.brand_id
    LEFT JOIN brand_runway_images c
           ON c.id = r.cover_id AND c.runway_id = r.id AND c.deleted_at IS NULL
    WHERE r.status = 'published' AND r.deleted_at IS NULL
    """,
    """
    CREATE VIEW public_brand_runway_images AS
    SELECT i.id, i.runway_id, i.storage_key, i.width, i.height, i.mime_type, i.sort_order,
           i.look_index
    FROM brand_runway_images i
    JOIN public_brand_runways r ON r.id = i.runway_id
    WHERE i.deleted_at IS NULL
    """,
    VIEWS_V1[2],
    """
    CREATE VIEW public_street_snap_images AS
    SELECT i.id, i.street_snap_id, i.storage_key, i.width, i.height, i.mime_type, i.sort_order,
           CASE WHEN p.id IS NOT NULL THEN i.parent_id END AS parent_id,
           (p.id IS NOT NULL) AS is_detail
    FROM street_snap_images i
    JOIN public_street_snaps s ON s.id = i.street_snap_id
    LEFT JOIN street_snap_images p
           ON p.id = i.parent_id AND p.street_snap_id = i.street_snap_id
          AND p.deleted_at IS NULL AND NOT p.is_detail
    WHERE i.deleted_at IS NULL
    """,
    VIEWS_V1[4],
]

# V3: each image's renditions (JSON: [{"width", "height", "key"}, ...]), ThumbHash placeholder
# and average colour (catalog.rendering writes them after the objects are stored). Visibility
# rules unchanged.
VIEWS_V3 = [
    VIEWS_V2[0],
    """
    CREATE VIEW public_brand_runway_images AS
    SELECT i.id, i.runway_id, i.storage_key, i.width, i.height, i.mime_type, i.sort_order,
           i.look_index, i.renditions, i.placeholder, i.color
    FROM brand_runway_images i
    JOIN public_brand_runways r ON r.id = i.runway_id
    WHERE i.deleted_at IS NULL
    """,
    VIEWS_V2[2],
    """
    CREATE VIEW public_street_snap_images AS
    SELECT i.id, i.street_snap_id, i.storage_key, i.width, i.height, i.mime_type, i.sort_order,
           CASE WHEN p.id IS NOT NULL THEN i.parent_id END AS parent_id,
           (p.id IS NOT NULL) AS is_detail,
           i.renditions, i.placeholder, i.color
    FROM street_snap_images i
    JOIN public_street_snaps s ON s.id = i.street_snap_id
    LEFT JOIN street_snap_images p
           ON p.id = i.parent_id AND p.street_snap_id = i.street_snap_id
          AND p.deleted_at IS NULL AND NOT p.is_detail
    WHERE i.deleted_at IS NULL
    """,
    VIEWS_V2[4],
]

# The views each publicapi migration leaves behind. After a `migrate` run that dropped the
# views (publicapi/apps.py), the version of the newest applied migration comes back.
BY_MIGRATION = {
    "0001_public_views": VIEWS_V1,
    "0002_public_views_v2": VIEWS_V2,
    "0003_public_views_v3": VIEWS_V3,
}


def views_for(applied: set[str]) -> list[str]:
    """The CREATE VIEW statements of the newest applied publicapi migration ([] for none)."""
    names = sorted(name for name in applied if name in BY_MIGRATION)
    return BY_MIGRATION[names[-1]] if names else []
