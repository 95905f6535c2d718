"""The public API bench's archive, built in SQL (INSERT ... SELECT generate_series): a million
ORM objects take many minutes, this takes about one.

RUNWAYS runways (a tenth pending, a tenth rejected, 1 brand per 25, a quarter of the brands
with an alias), RUNWAY_IMAGES images each; RUNWAYS // 5 street snaps with STREET_IMAGES each.
Titles and descriptions are drawn from a small vocabulary so searches find hundreds of rows,
not one. Hashes: each one is shared, give or take a bit or two, by five images of other
albums; one in twenty is a legacy hash.
"""

# ruff: noqa: S608 - every value in this SQL is the bench's own

from __future__ import annotations

VOCABULARY = (
    "acme atelier noir blanc velvet silk linen denim tailoring couture archive minimal "
    "romantic utility oversized sheer leather knit floral tartan sequin draped pleated "
    "studio maison house garden city night coast desert winter summer spring autumn "
    "crème écru café naïve rosé soirée québec zürich señor façade"
).split()
CITIES = [
    "Paris", "Milan", "London", "New York", "Copenhagen", "Tokyo", "Seoul", "São Paulo",
    "Berlin", "Stockholm", "Lagos", "Zürich",
]  # fmt: skip
SEASONS = [("FW", "Fall/Winter"), ("SS", "Spring/Summer"), ("RS", "Resort"), ("PF", "Pre-Fall")]
TYPES = ["ready-to-wear", "couture", "menswear", "resort", "pre-fall"]


def _array(values) -> str:
    return "ARRAY[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


def _word(expression: str) -> str:
    return f"(words)[1 + (({expression}) % {len(VOCABULARY)})]"


def statements(*, runways: int, runway_images: int, street_images: int) -> list[str]:
    brands = max(runways // 25, 1)
    snaps = max(runways // 5, 1)
    words = f"(SELECT {_array(VOCABULARY)} AS words) w"
    cities = _array(CITIES)
    codes = _array([code for code, _ in SEASONS])
    names = _array([name for _, name in SEASONS])
    types = _array(TYPES)
    # A hash group of five images of (nearly always) different albums: ids that differ by
    # a multiple of `spread`; the group member's number flips its low bits.
    spread = max((runways * runway_images + snaps * street_images) // 5, 1)
    phash = f"(('x' || md5((id % {spread})::text))::bit(64)::bigint # (id / {spread}))"
    algorithm = "CASE WHEN id % 20 = 7 THEN 'legacy' ELSE 'phash-draft128-v1' END"
    return [
        f"""
        INSERT INTO brands (id, name, slug, is_featured, created_at, updated_at)
        SELECT n, initcap({_word("n")}) || ' ' || initcap({_word("n / 7 + 3")}) || ' ' || n,
               'brand-' || n, n % 20 = 0, now(), now()
        FROM generate_series(1, {brands}) n, {words}
        """,
        f"""
        INSERT INTO brand_aliases (brand_id, alias)
        SELECT n, upper({_word("n + 11")}) || ' studio ' || n
        FROM generate_series(4, {brands}, 4) n, {words}
        """,
        # Runway n: brand n % brands, its k-th show (k = n / brands), so the entity key
        # (brand, season code, collection type) is unique.
        f"""
        INSERT INTO brand_runways (id, brand_id, season_code, season, year, collection_type,
            title, description, image_count, status, reviewer, reject_reason,
            published_at, content_checksum, version, source, source_url, created_at,
            updated_at)
        SELECT n, 1 + n % {brands},
               ({codes})[1 + k % 4] || lpad(((2000 + k / 4 + n % 20) % 100)::text, 2, '0'),
               ({names})[1 + k % 4] || ' ' || (2000 + k / 4 + n % 20),
               2000 + k / 4 + n % 20,
               ({types})[1 + (n / 7) % 5],
               initcap({_word("n * 7")}) || ' ' || {_word("n / 3")},
               'A ' || {_word("n * 13 + 5")} || ' collection in ' || {_word("n / 11")}
                   || ' and ' || {_word("n * 3 + 1")} || '.',
               {runway_images},
               CASE n % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'rejected' ELSE 'published' END,
               '', '', now() - n * interval '1 minute', '', 1, '', '', now(), now()
        FROM (SELECT n, n / {brands} AS k FROM generate_series(1, {runways}) n) r, {words}
        """,
        f"""
        INSERT INTO brand_runway_images (id, runway_id, storage_key, sha1, width, height,
            byte_size, mime_type, original_url, sort_order, look_index, phash,
            phash_algorithm, is_duplicate, created_at)
        SELECT id, r, 'images/' || r || '/' || k || '.jpg', '', 800, 1200, 100000,
               'image/jpeg', '', k, 1 + k / 2, {phash}, {algorithm}, FALSE, now()
        FROM (
            SELECT (r - 1) * {runway_images} + k + 1 AS id, r, k
            FROM generate_series(1, {runways}) r, generate_series(0, {runway_images - 1}) k
        ) i
        """,
        f"""
        INSERT INTO street_snaps (id, city, year, month, title, title_key, description,
            image_count, status, reviewer, reject_reason, published_at, content_checksum,
            version, source, source_url, created_at, updated_at)
        SELECT n, ({cities})[1 + n % {len(CITIES)}], 2015 + n % 12, 1 + (n / 12) % 12,
               initcap({_word("n * 5")}) || ' ' || {_word("n / 5")} || ' ' || n,
               lower(initcap({_word("n * 5")}) || ' ' || {_word("n / 5")} || ' ' || n),
               'Seen ' || {_word("n * 17 + 2")} || ' near the ' || {_word("n / 13")} || '.',
               {street_images},
               CASE n % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'rejected' ELSE 'published' END,
               '', '', now() - n * interval '3 minutes', '', 1, '', '', now(), now()
        FROM generate_series(1, {snaps}) n, {words}
        """,
        f"""
        INSERT INTO street_snap_images (id, street_snap_id, storage_key, sha1, width, height,
            byte_size, mime_type, original_url, sort_order, is_detail, parent_id, phash,
            phash_algorithm, is_duplicate, created_at)
        SELECT id, s, 'street/' || s || '/' || k || '.jpg', '', 800, 1200, 100000,
               'image/jpeg', '', k, k % 3 <> 0,
               CASE WHEN k % 3 <> 0 THEN id - k % 3 END, {phash}, {algorithm}, FALSE, now()
        FROM (
            SELECT {runways * runway_images} + (s - 1) * {street_images} + k + 1 AS id, s, k
            FROM generate_series(1, {snaps}) s, generate_series(0, {street_images - 1}) k
        ) i
        """,
        # Published records with their bytes in the public store (publicapi's V7 views).
        f"UPDATE brand_runways SET cover_id = (id - 1) * {runway_images} + 1, "
        "bytes_public = (status = 'published')",
        f"UPDATE street_snaps SET cover_id = {runways * runway_images} + (id - 1) * "
        f"{street_images} + 1, bytes_public = (status = 'published')",
        *(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
            for table in (
                "brands",
                "brand_runways",
                "brand_runway_images",
                "street_snaps",
                "street_snap_images",
            )
        ),
    ]
