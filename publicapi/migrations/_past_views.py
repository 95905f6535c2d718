"""The public views' past versions, V1 to V7, frozen: each is what a migration of this app
created (publicapi/sql.py's BY_MIGRATION names which), so none may change. The views of today
and what reads them are in publicapi/sql.py; a new version goes there, and the one it replaces
moves here.
"""

import re

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
# and average colour (catalog.services.renditions writes them after the objects are stored).
# Visibility rules unchanged.
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


# V4: search and similar images.
# - `search` on the record views: the base table's generated tsvector (catalog migration
#   0007_search) on PostgreSQL; NULL on SQLite, where publicapi.search matches in Python.
#   Only for filtering: no serializer reads it.
# - public_brand_names: the names (brand name, then aliases) of brands with a public runway,
#   for `?q=` on runways ("acne" finds Acne Studios' shows).
# - public_image_hashes: the perceptual hashes of public images, both kinds, for "similar
#   images". Hashes the catalog never compares (legacy, of an unknown algorithm, and none)
#   are not in it, and its conditions are the band indexes' own, so a lookup is index probes.
# - brands LEFT JOINed (the same rows: brand_id is a NOT NULL foreign key), so a query
#   that reads no brand column (a count, a facet by brand_id) skips the join altogether.
# The image views still do not show any hash.
def _views_v4(vendor: str) -> list[str]:
    postgres = vendor == "postgresql"

    def search(alias: str) -> str:
        return f"{alias}.search_vector" if postgres else "NULL"

    return [
        f"""
    CREATE VIEW public_brand_runways AS
    SELECT r.id, r.brand_id, b.slug AS brand_slug, b.name AS brand_name,
           r.season_code, r.season, r.year, r.collection_type,
           r.title, r.description,
           CASE WHEN c.id IS NOT NULL THEN r.cover_id END AS cover_id,
           r.image_count, r.published_at, r.updated_at, {search("r")} AS search
    FROM brand_runways r
    LEFT JOIN brands b ON b.id = r.brand_id
    LEFT JOIN brand_runway_images c
           ON c.id = r.cover_id AND c.runway_id = r.id AND c.deleted_at IS NULL
    WHERE r.status = 'published' AND r.deleted_at IS NULL
    """,  # noqa: S608 - our own column names
        VIEWS_V3[1],  # with the renditions columns,
        f"""
    CREATE VIEW public_street_snaps AS
    SELECT s.id, s.city, s.year, s.month, s.title, s.description,
           CASE WHEN c.id IS NOT NULL THEN s.cover_id END AS cover_id,
           s.image_count, s.published_at, s.updated_at, {search("s")} AS search
    FROM street_snaps s
    LEFT JOIN street_snap_images c
           ON c.id = s.cover_id AND c.street_snap_id = s.id AND c.deleted_at IS NULL
    WHERE s.status = 'published' AND s.deleted_at IS NULL
    """,  # noqa: S608 - our own column names
        VIEWS_V3[3],
        VIEWS_V2[4],
        f"""
    CREATE VIEW public_brand_names AS
    SELECT b.id AS brand_id, b.name, {search("b")} AS search
    FROM brands b
    WHERE EXISTS (SELECT 1 FROM public_brand_runways r WHERE r.brand_id = b.id)
    UNION ALL
    SELECT a.brand_id, a.alias AS name, {search("a")} AS search
    FROM brand_aliases a
    WHERE EXISTS (SELECT 1 FROM public_brand_runways r WHERE r.brand_id = a.brand_id)
    """,  # noqa: S608 - our own column names
        """
    CREATE VIEW public_image_hashes AS
    SELECT 'runway' AS kind, i.id, i.runway_id AS record_id, i.phash, i.phash_algorithm,
           i.phash_band0, i.phash_band1, i.phash_band2, i.phash_band3
    FROM brand_runway_images i
    JOIN public_brand_runways r ON r.id = i.runway_id
    WHERE i.deleted_at IS NULL AND NOT (i.phash_algorithm IN ('legacy', ''))
      AND i.phash IS NOT NULL
    UNION ALL
    SELECT 'street' AS kind, i.id, i.street_snap_id AS record_id, i.phash, i.phash_algorithm,
           i.phash_band0, i.phash_band1, i.phash_band2, i.phash_band3
    FROM street_snap_images i
    JOIN public_street_snaps s ON s.id = i.street_snap_id
    WHERE i.deleted_at IS NULL AND NOT (i.phash_algorithm IN ('legacy', ''))
      AND i.phash IS NOT NULL
    """,
    ]


# One list per database vendor: only the search column differs.
VIEWS_V4 = {vendor: _views_v4(vendor) for vendor in ("postgresql", "sqlite")}


# V5: the record views take their cover through a scalar subquery instead of a LEFT JOIN
# (the same rows and values: the join matched at most one image, by its primary key). Not
# EXISTS: PostgreSQL may run an EXISTS as one hash of every live image of the kind, built
# before the first row (100,000 street images for a page of 20).
# PostgreSQL evaluates an expensive output column after ORDER BY ... LIMIT, so a page's
# covers are checked for its rows only, not for every row sorted before the cut (a search
# sorts its 1,000 candidates; page 500 of the list skips 10,000 rows); and a query that reads
# no cover reads neither id nor cover_id, so an index-only scan of catalog 0008's indexes
# serves the facets. Visibility rules unchanged.
def _views_v5(vendor: str) -> list[str]:
    search = "{alias}.search_vector" if vendor == "postgresql" else "NULL"
    views = list(VIEWS_V4[vendor])
    views[0] = f"""
    CREATE VIEW public_brand_runways AS
    SELECT r.id, r.brand_id, b.slug AS brand_slug, b.name AS brand_name,
           r.season_code, r.season, r.year, r.collection_type,
           r.title, r.description,
           (SELECT c.id FROM brand_runway_images c
            WHERE c.id = r.cover_id AND c.runway_id = r.id AND c.deleted_at IS NULL) AS cover_id,
           r.image_count, r.published_at, r.updated_at, {search.format(alias="r")} AS search
    FROM brand_runways r
    LEFT JOIN brands b ON b.id = r.brand_id
    WHERE r.status = 'published' AND r.deleted_at IS NULL
    """  # noqa: S608 - our own column names
    views[2] = f"""
    CREATE VIEW public_street_snaps AS
    SELECT s.id, s.city, s.year, s.month, s.title, s.description,
           (SELECT c.id FROM street_snap_images c
            WHERE c.id = s.cover_id AND c.street_snap_id = s.id AND c.deleted_at IS NULL)
           AS cover_id,
           s.image_count, s.published_at, s.updated_at, {search.format(alias="s")} AS search
    FROM street_snaps s
    WHERE s.status = 'published' AND s.deleted_at IS NULL
    """  # noqa: S608 - our own column names
    return views


VIEWS_V5 = {vendor: _views_v5(vendor) for vendor in ("postgresql", "sqlite")}


# V6: the views check the rights of whoever reads them (security_invoker, PostgreSQL 15+), not
# their owner's, so the row security of the tables under them (ROW_POLICIES) applies to the
# public role. For the application's own role, which owns the tables, nothing changes: an
# owner is exempt from row security, and its plans are V5's. Not security_barrier views:
# PostgreSQL never flattens those into the query, so a page of 20 would read and sort every
# public row (measured in docs/operations.md, *Public database role*).
# Same columns, rows and visibility as V5. PostgreSQL 14 has no security_invoker: V5 as is.
_CREATE_VIEW = re.compile(r"CREATE VIEW (\w+) AS")


def _invoker(statement: str) -> str:
    return _CREATE_VIEW.sub(r"CREATE VIEW \1 WITH (security_invoker = true) AS", statement, count=1)


VIEWS_V6 = {
    "postgresql": [_invoker(statement) for statement in VIEWS_V5["postgresql"]],
    "postgresql<15": VIEWS_V5["postgresql"],
    "sqlite": VIEWS_V5["sqlite"],
}


# V7: a published record shows once its bytes are public (`bytes_public`, set by
# catalog.visibility after every live image's original and renditions are in the public
# store), so no URL the API shows fails to answer. Columns unchanged; V6 otherwise.
def _views_v7(views: list[str]) -> list[str]:
    views = list(views)
    for index, alias in ((0, "r"), (2, "s")):
        where = f"WHERE {alias}.status = 'published' AND {alias}.deleted_at IS NULL"
        if where not in views[index]:
            raise ValueError(f"V6's record view changed: {where!r} is not in it")
        views[index] = views[index].replace(where, f"{where} AND {alias}.bytes_public")
    return views


VIEWS_V7 = {kind: _views_v7(views) for kind, views in VIEWS_V6.items()}
