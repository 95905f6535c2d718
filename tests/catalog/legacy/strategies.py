"""Hypothesis strategies for random legacy archives.

Small value pools on purpose: with two brand slugs, two seasons, two cities and a handful of
titles and source URLs, entity keys and source keys collide often, drafts pile up on published
keys, parents and dup_of point at images that are missing, skipped, deleted or details
themselves. Key and source values come in several spellings of one normal form ("fw24", "FW24";
"Vogue", "vogue"; "Acme", "acme"), so collisions are often between spellings; with `invalid`,
some have none.
"""

from __future__ import annotations

from hypothesis import strategies as st

from catalog.legacy.rows import (
    APPROVED,
    PENDING,
    PUBLISHED,
    REJECTED,
    RUNWAY,
    TABLES,
    LegacyBrand,
    LegacyImage,
    LegacyRecord,
)
from tests.catalog.legacy.archive import MemoryArchive, at, image_key

# One spelling of acme per archive (the catalog's brand is "acme": matched whatever the case);
# with `invalid`, both, which stops the run (two legacy brands, one catalog slug).
ACME = ["acme", "Acme"]
SEASONS = ["FW24", "fw24", "Fw-24", "SS25"]
INVALID_SEASONS = ["", "FW/24"]
COLLECTION_TYPES = ["ready-to-wear", "Ready to Wear", "couture", "Couture "]
CITIES = ["Paris", " paris", "Oslo", "Oslo  "]
STREET_TITLES = [None, "", "Look", " Look ", "Look  Book", "Look Book", "look book"]
RUNWAY_TITLES = ["", "Show", "Show  2"]
SOURCE_KEYS = [
    ("", ""),
    ("vogue", ""),
    ("vogue", "https://example.com/1"),
    ("vogue", "https://example.com/2"),
    ("Vogue", "https://example.com/2"),
    ("VOGUE ", "https://example.com/1 "),
    ("wwd", "https://example.com/1"),
]
TIMES = [at(0), at(1), at(2)]
URLS = [image_key(f"pool-{n}") for n in range(4)]
PHASHES = [0, 1, -5, 2**63 - 1, -(2**63)]
MISSING = 9_999  # an id no generated row has


@st.composite
def archives(
    draw: st.DrawFn, max_records: int = 4, max_images: int = 8, invalid: bool = False
) -> MemoryArchive:
    """A legacy archive. With `invalid`, some rows hold values the catalog cannot store."""
    archive = MemoryArchive()
    # Half the archives that may hold invalid values do; the others exercise the write.
    invalid = invalid and draw(st.booleans())
    slugs = [*ACME, "beta"] if invalid else [draw(st.sampled_from(ACME)), "beta"]
    for brand_id in range(1, draw(st.integers(1, 3)) + 1):
        archive.brand_rows.append(
            LegacyBrand(
                id=brand_id,
                name=f"Brand {brand_id}",
                slug=draw(st.sampled_from(slugs)),
                is_featured=draw(st.booleans()),
                deleted=draw(st.booleans()),
                created_at=TIMES[0],
                updated_at=TIMES[0],
            )
        )
    brand_ids = [b.id for b in archive.brand_rows]
    for table in TABLES:
        records = []
        for record_id in range(1, draw(st.integers(0, max_records)) + 1):
            statuses = [PENDING, PENDING, REJECTED, APPROVED] if table.drafts else [PUBLISHED]
            if invalid and table.drafts:
                statuses.append("on hold")
            source, source_url = draw(st.sampled_from(SOURCE_KEYS))
            status = draw(st.sampled_from(statuses))
            values = {
                "table": table,
                "id": record_id,
                "status": status,
                "description": "",
                "year": draw(st.sampled_from([0, 2024, -1] if invalid else [0, 2024])),
                "cover": draw(st.sampled_from(["", *URLS])),
                "source": source,
                "source_url": source_url,
                "deleted": draw(st.booleans()),
                "created_at": draw(st.sampled_from(TIMES)),
                "updated_at": TIMES[-1],
            }
            if table.drafts:
                values |= {
                    "job_id": draw(st.integers(0, 3)),
                    "reviewer": "anna" if status == REJECTED else "",
                    "reject_reason": "blurry" if status == REJECTED else "",
                }
            if table.kind == RUNWAY:
                brands = brand_ids + [MISSING] if invalid else brand_ids
                values |= {
                    "title": draw(st.sampled_from(RUNWAY_TITLES)),
                    "brand_id": draw(st.sampled_from(brands)),
                    "season": "",
                    "season_code": draw(
                        st.sampled_from(SEASONS + INVALID_SEASONS if invalid else SEASONS)
                    ),
                    "collection_type": draw(st.sampled_from(COLLECTION_TYPES)),
                }
            else:
                values |= {
                    "title": draw(st.sampled_from(STREET_TITLES)),
                    "city": draw(st.sampled_from(CITIES)),
                    "month": draw(st.sampled_from([0, 8, 13] if invalid else [0, 8])),
                }
            published = archive.record_rows.get(TABLES[TABLES.index(table) - 1].name, [])
            if status == APPROVED and published and draw(st.integers(0, 4)):
                # Most approved drafts were promoted: a published row carries their key.
                promoted = draw(st.sampled_from(published))
                keys = ["brand_id", "season_code", "collection_type", "city", "year", "month"]
                values |= {k: getattr(promoted, k) for k in keys if k in values}
                if table.kind != RUNWAY:
                    values["title"] = promoted.title
            records.append(LegacyRecord(**values))
        archive.record_rows[table.name] = records
        record_ids = [r.id for r in records] + [MISSING]
        count = draw(st.integers(0, max_images))
        image_ids = list(range(1, count + 1))
        references = st.sampled_from([0, MISSING, *image_ids])
        images = []
        for image_id in image_ids:
            values = {
                "id": image_id,
                "record_id": draw(st.sampled_from(record_ids)),
                "url": draw(st.sampled_from(URLS)),
                "sort_order": draw(st.integers(0, 3)),
                "width": draw(st.sampled_from([800, -1] if invalid else [800, 0])),
                "height": 1200,
                "phash": draw(st.sampled_from(PHASHES)),
                "is_duplicate": draw(st.booleans()),
                "dup_of": draw(references),
                "deleted": draw(st.booleans()),
                "created_at": TIMES[0],
            }
            if table.kind == RUNWAY:
                values["look_index"] = draw(st.integers(0, 2))
            else:
                values |= {"is_detail": draw(st.booleans()), "parent_id": draw(references)}
            images.append(LegacyImage(**values))
        archive.image_rows[table.image_table] = images
    return archive
