"""One legacy archive with every case of the import, built in the legacy database, beside a
catalog that already holds a crawled runway and a crawled street album."""

from __future__ import annotations

from types import SimpleNamespace

from catalog.legacy.rows import (
    APPROVED,
    PENDING,
    REJECTED,
    RUNWAY_DRAFTS,
    RUNWAYS,
    STREET_DRAFTS,
    STREETS,
)
from catalog.models import Runway
from tests.catalog.legacy.archive import LegacyDatabase, at, image_key
from tests.factories import BrandFactory, RunwayFactory, StreetSnapFactory

MISSING = 999_999

# Rows per (kind, legacy status): legacy rows, imported, superseded, skipped.
EXPECTED_RECORDS = {
    ("runway", "published"): (5, 3, 1, 1),
    ("runway", "pending"): (3, 2, 1, 0),
    ("runway", "rejected"): (2, 1, 1, 0),
    ("runway", "approved"): (1, 0, 0, 1),
    ("street", "published"): (3, 2, 1, 0),
    ("street", "pending"): (2, 0, 1, 1),
    ("street", "rejected"): (1, 1, 0, 0),
    ("street", "approved"): (1, 0, 0, 1),
}
EXPECTED_IMAGES = {
    ("runway", "published"): (9, 7, 1, 1),
    ("runway", "pending"): (0, 0, 0, 0),
    ("runway", "rejected"): (1, 0, 1, 0),
    ("runway", "approved"): (1, 0, 0, 1),
    ("runway", "no record"): (0, 0, 0, 0),
    ("street", "published"): (8, 8, 0, 0),
    ("street", "pending"): (1, 0, 0, 1),
    ("street", "rejected"): (1, 1, 0, 0),
    ("street", "approved"): (0, 0, 0, 0),
    ("street", "no record"): (1, 0, 0, 1),
}


def build(legacy: LegacyDatabase) -> SimpleNamespace:
    """Returns the legacy ids (and the catalog rows) the tests talk about."""
    s = SimpleNamespace()

    # The catalog before the import: a brand, a crawled runway an editor published, and a
    # crawled street album waiting for review.
    s.gamma = BrandFactory(slug="gamma", name="Gamma", is_featured=False)
    s.crawled_runway = RunwayFactory(
        published=True,
        brand=s.gamma,
        season_code="FW23",
        collection_type="ready-to-wear",
        source="vogue",
        source_url="https://example.com/gamma-fw23",
    )
    s.crawled_street = StreetSnapFactory(
        city="Paris",
        year=2025,
        month=3,
        title="Crawled",
        source="theimpression",
        source_url="https://example.com/paris",
    )

    s.acme = legacy.brand("acme", is_featured=1, created_at=at(1), updated_at=at(2))
    s.beta = legacy.brand("beta")
    s.gamma_legacy = legacy.brand("gamma", is_featured=1)
    s.acme_old = legacy.brand("acme", name="ACME (old)", is_deleted=1)

    # --- published runways ---
    s.r1 = legacy.runway(
        s.acme,
        "FW24",
        title="Acme Fall 2024",
        season="Fall/Winter 2024",
        source="vogue",
        source_url="https://example.com/acme-fw24",
        created_at=at(10),
        updated_at=at(11),
    )
    s.r1_a = legacy.image(RUNWAYS, s.r1, sort_order=0, look_index=1, phash=0)
    s.r1_b = legacy.image(
        RUNWAYS, s.r1, sort_order=1, look_index=1, phash=-42, is_duplicate=1, dup_of=s.r1_a
    )
    s.r1_c = legacy.image(RUNWAYS, s.r1, sort_order=2, look_index=2, is_duplicate=1, dup_of=MISSING)
    s.r1_d = legacy.image(RUNWAYS, s.r1, sort_order=3, look_index=3, is_deleted=1)
    legacy.update(RUNWAYS.name, s.r1, cover=image_key("r1-cover"))
    legacy.update(RUNWAYS.image_table, s.r1_b, url=image_key("r1-cover"))
    # Deleted, and its cover key is none of its images: the first main image by sort order.
    s.r2 = legacy.runway(
        s.acme, "SS25", collection_type="couture", is_deleted=1, cover="images/nowhere.jpg"
    )
    s.r2_a = legacy.image(RUNWAYS, s.r2, sort_order=5)
    s.r2_b = legacy.image(RUNWAYS, s.r2, sort_order=1)
    # The crawled (published) runway holds this key already: superseded, with its image.
    s.r3 = legacy.runway(s.gamma_legacy, "FW23")
    s.r3_a = legacy.image(RUNWAYS, s.r3)
    # Shares R1's source_url: skipped, with its image.
    s.r4 = legacy.runway(s.beta, "FW24", source="vogue", source_url="https://example.com/acme-fw24")
    s.r4_a = legacy.image(RUNWAYS, s.r4)
    s.r5 = legacy.runway(s.beta, "PF25", collection_type="pre-fall")
    s.r5_a = legacy.image(RUNWAYS, s.r5)
    # R1's first image is a near-duplicate of R5's, which is inserted after it.
    legacy.update(RUNWAYS.image_table, s.r1_a, dup_of=s.r5_a, is_duplicate=1)

    # --- runway drafts ---
    s.d1 = legacy.runway_draft(s.acme, "FW24", APPROVED, job_id=70, created_at=at(20))
    s.d1_a = legacy.image(RUNWAY_DRAFTS, s.d1)
    # Two pending drafts of one show: the older one (higher id) wins.
    s.d2 = legacy.runway_draft(s.beta, "SS26", PENDING, job_id=77, created_at=at(32))
    s.d3 = legacy.runway_draft(s.beta, "SS26", PENDING, job_id=78, created_at=at(31))
    # A rejected draft of an already published show: superseded, still rejected.
    s.d4 = legacy.runway_draft(
        s.acme, "FW24", REJECTED, reviewer="anna", reject_reason="blurry", created_at=at(25)
    )
    s.d4_a = legacy.image(RUNWAY_DRAFTS, s.d4)
    s.d5 = legacy.runway_draft(
        s.beta,
        "AW27",
        REJECTED,
        job_id=88,
        reviewer="ben",
        reject_reason="not a show",
        created_at=at(26),
        updated_at=at(27),
    )
    s.d6 = legacy.runway_draft(s.acme, "FW30", PENDING, is_deleted=1, created_at=at(28))

    # --- published street albums ---
    s.s1 = legacy.street("Copenhagen", 2024, 8, "Street Style  CPH", created_at=at(12))
    s.s1_m1 = legacy.image(STREETS, s.s1, sort_order=0)
    s.s1_d1 = legacy.image(STREETS, s.s1, sort_order=1, is_detail=1, parent_image_id=s.s1_m1)
    s.s1_d2 = legacy.image(STREETS, s.s1, sort_order=2, is_detail=1, parent_image_id=MISSING)
    s.s1_d3 = legacy.image(STREETS, s.s1, sort_order=3, is_detail=1, parent_image_id=s.s1_d1)
    s.s1_m2 = legacy.image(STREETS, s.s1, sort_order=4, is_deleted=1)
    s.s1_d4 = legacy.image(STREETS, s.s1, sort_order=5, is_detail=1, parent_image_id=s.s1_m2)
    # A detail whose parent has a higher id.
    s.s1_d5 = legacy.image(STREETS, s.s1, sort_order=6, is_detail=1)
    s.s1_m3 = legacy.image(STREETS, s.s1, sort_order=7)
    legacy.update(STREETS.image_table, s.s1_d5, parent_image_id=s.s1_m3)
    # The same album with other whitespace in its title: superseded.
    s.s2 = legacy.street("Copenhagen", 2024, 8, "Street Style CPH")
    s.s3 = legacy.street("Unknown", 0, 0, None)

    # --- street drafts ---
    s.sd1 = legacy.street_draft("Unknown", 0, 0, "", PENDING)  # NULL and '' are one title
    s.sd2 = legacy.street_draft(
        "Paris",
        2025,
        3,
        "Paris looks",
        PENDING,
        source="theimpression",
        source_url="https://example.com/paris",
    )
    s.sd2_a = legacy.image(STREET_DRAFTS, s.sd2)
    s.sd3 = legacy.street_draft("Copenhagen", 2024, 8, "Street\tStyle CPH", APPROVED)
    s.sd4 = legacy.street_draft("Milan", 2025, 2, "Milan", REJECTED, reviewer="anna")
    s.sd4_a = legacy.image(STREET_DRAFTS, s.sd4, is_duplicate=1, dup_of=s.sd2_a)
    s.orphan = legacy.image(STREET_DRAFTS, MISSING)

    assert Runway.objects.count() == 1
    return s
