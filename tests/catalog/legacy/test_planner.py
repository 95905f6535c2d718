"""The planner on in-memory archives: every rule of docs/legacy-import.md, and the plan's
invariants for random archives. Pure (no database): runs on the SQLite pass too."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.keys import (
    fold_title,
    normalize_brand_slug,
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
    normalize_source,
    normalize_source_url,
)
from catalog.legacy.plan import (
    CREATED,
    EARLIER,
    IMPORTED,
    INSERTED,
    MATCHED,
    SKIPPED,
    SUPERSEDED,
    CatalogRef,
    CatalogState,
    LegacyRef,
)
from catalog.legacy.planner import build_plan, choose_cover, decide_images
from catalog.legacy.report import skipped_breakdown
from catalog.legacy.rows import (
    APPROVED,
    ORPHAN,
    PENDING,
    PUBLISHED,
    REJECTED,
    RUNWAY,
    RUNWAY_DRAFTS,
    RUNWAYS,
    STREET,
    STREET_DRAFTS,
    STREETS,
    TABLE_BY_IMAGE_TABLE,
    TABLE_BY_NAME,
    TABLES,
    LegacyImage,
    LegacyRecord,
    LegacyTable,
)
from tests.catalog.legacy.archive import MemoryArchive, archive, at, brand, image, record
from tests.catalog.legacy.strategies import archives


def outcome(plan, table: LegacyTable, id: int) -> str:
    return plan.records[(table.name, id)].outcome


class TestRecordOrder:
    def test_a_published_row_wins_over_a_draft_of_the_same_key(self):
        plan = build_plan(
            archive(record(RUNWAY_DRAFTS, 1, PENDING, created_at=at(0)), record(RUNWAYS, 9)),
            CatalogState(),
        )

        assert outcome(plan, RUNWAYS, 9) == IMPORTED
        assert outcome(plan, RUNWAY_DRAFTS, 1) == SUPERSEDED
        assert plan.records[(RUNWAY_DRAFTS.name, 1)].deleted
        assert plan.records[(RUNWAY_DRAFTS.name, 1)].holder == LegacyRef(RUNWAYS.name, 9)

    def test_the_oldest_draft_wins_by_created_at_then_id(self):
        plan = build_plan(
            archive(
                record(STREET_DRAFTS, 1, PENDING, created_at=at(5)),
                record(STREET_DRAFTS, 2, REJECTED, created_at=at(3)),
                record(STREET_DRAFTS, 3, PENDING, created_at=at(3)),
            ),
            CatalogState(),
        )

        assert [outcome(plan, STREET_DRAFTS, i) for i in (1, 2, 3)] == [
            SUPERSEDED,
            IMPORTED,
            SUPERSEDED,
        ]

    def test_superseded_rows_keep_their_status(self):
        plan = build_plan(
            archive(record(RUNWAYS, 1), record(RUNWAY_DRAFTS, 2, REJECTED)), CatalogState()
        )

        assert plan.expected[(RUNWAY_DRAFTS.name, SUPERSEDED, REJECTED, True)] == 1

    def test_street_titles_are_folded_for_the_key_and_null_is_empty(self):
        plan = build_plan(
            archive(
                record(STREETS, 1, title="Street  Style\tCPH"),
                record(STREETS, 2, title="Street Style CPH"),
                record(STREETS, 3, title=None, year=0, month=0),
                record(STREET_DRAFTS, 4, PENDING, title="", year=0, month=0),
                record(STREETS, 5, title="street style cph"),  # case is kept: another album
            ),
            CatalogState(),
        )

        assert [outcome(plan, STREETS, i) for i in (1, 2, 3, 5)] == [
            IMPORTED,
            SUPERSEDED,
            IMPORTED,
            IMPORTED,
        ]
        assert outcome(plan, STREET_DRAFTS, 4) == SUPERSEDED

    def test_a_soft_deleted_row_holds_no_entity_key_and_never_costs_a_live_row_its_source(self):
        shared = {"source": "vogue", "source_url": "https://example.com/a"}
        plan = build_plan(
            archive(
                record(RUNWAYS, 1, deleted=True, **shared),
                record(RUNWAYS, 2, **shared),
                record(RUNWAYS, 3, deleted=True, season_code="FW24"),
            ),
            CatalogState(),
        )

        assert outcome(plan, RUNWAYS, 2) == IMPORTED
        assert outcome(plan, RUNWAYS, 1) == SKIPPED
        assert outcome(plan, RUNWAYS, 3) == IMPORTED
        assert plan.records[(RUNWAYS.name, 3)].deleted

    def test_a_taken_source_key_skips_the_row_even_when_its_entity_key_is_taken_too(self):
        shared = {"source": "vogue", "source_url": "https://example.com/a"}
        plan = build_plan(
            archive(record(RUNWAYS, 1, **shared), record(RUNWAY_DRAFTS, 2, PENDING, **shared)),
            CatalogState(),
        )

        assert outcome(plan, RUNWAY_DRAFTS, 2) == SKIPPED
        assert [e.id for e in plan.skipped] == [2]
        assert plan.superseded == []

    def test_an_empty_source_url_is_no_source_key(self):
        plan = build_plan(
            archive(
                record(RUNWAYS, 1, source="vogue"),
                record(RUNWAYS, 2, source="vogue", season_code="SS25"),
            ),
            CatalogState(),
        )

        assert outcome(plan, RUNWAYS, 2) == IMPORTED


class TestCatalogAlreadyHolding:
    def test_a_live_catalog_record_supersedes_a_legacy_row_of_its_key(self):
        catalog = CatalogState(brands_by_slug={"acme": 7})
        catalog.live_keys[RUNWAY][(7, "FW24", "ready-to-wear")] = CatalogRef(RUNWAY, 70, PUBLISHED)

        plan = build_plan(archive(record(RUNWAYS, 1), record(RUNWAY_DRAFTS, 2, PENDING)), catalog)

        assert outcome(plan, RUNWAYS, 1) == outcome(plan, RUNWAY_DRAFTS, 2) == SUPERSEDED
        assert plan.records[(RUNWAYS.name, 1)].holder == CatalogRef(RUNWAY, 70, PUBLISHED)
        assert [e.reason for e in plan.superseded] == [
            "entity key is held by existing runway #70 (published)"
        ] * 2
        assert not plan.blocked

    @pytest.mark.parametrize("status", [PENDING, REJECTED])
    @pytest.mark.parametrize(
        ("table", "key"),
        [(RUNWAYS, (7, "FW24", "ready-to-wear")), (STREETS, ("Paris", 2024, 8, ""))],
    )
    def test_a_published_row_whose_key_an_unpublished_catalog_record_holds_stops_the_run(
        self, table, key, status
    ):
        # Superseding it would import the published show soft-deleted: it would silently
        # leave the public site, behind a crawl nobody approved.
        catalog = CatalogState(brands_by_slug={"acme": 7})
        catalog.live_keys[table.kind][key] = CatalogRef(table.kind, 70, status)
        drafts = RUNWAY_DRAFTS if table is RUNWAYS else STREET_DRAFTS

        plan = build_plan(
            archive(
                record(table, 1),
                record(table, 2, deleted=True),
                record(drafts, 3, PENDING),
            ),
            catalog,
        )

        [held] = plan.held_by_unpublished
        assert (held.table, held.id, held.status) == (table.name, 1, PUBLISHED)
        assert f"existing {table.kind} #70 ({status})" in held.reason
        assert (outcome(plan, table, 1), plan.records[(table.name, 1)].holder) == (SKIPPED, None)
        # A soft-deleted published row holds no key, and drafts are superseded as before.
        assert outcome(plan, table, 2) == IMPORTED
        assert outcome(plan, drafts, 3) == SUPERSEDED
        assert plan.blocked
        [check] = [c for c in plan.checks if not c.ok]
        assert check.name == "no legacy published row is held back by an unpublished catalog record"
        assert check.detail == f"1: {table.name} #1"
        assert all(t.balanced for t in plan.tallies.values())

    def test_a_catalog_record_is_named_with_its_status(self):
        assert str(CatalogRef(RUNWAY, 11, PENDING)) == "existing runway #11 (pending)"
        assert str(CatalogRef(STREET, 5, PUBLISHED, deleted=True)) == (
            "existing street #5 (published, deleted)"
        )

    def test_a_catalog_source_key_skips_the_legacy_row_even_when_deleted(self):
        catalog = CatalogState()
        catalog.source_keys[STREET][("vogue", "u")] = CatalogRef(STREET, 5)

        plan = build_plan(archive(record(STREETS, 1, source="vogue", source_url="u")), catalog)

        assert outcome(plan, STREETS, 1) == SKIPPED

    def test_brands_are_matched_by_slug_and_created_once(self):
        legacy = archive()
        legacy.brand_rows += [brand(3, "gamma", deleted=True), brand(4, "gamma")]
        plan = build_plan(legacy, CatalogState(brands_by_slug={"beta": 9}))

        by_id = {bp.row.id: bp for bp in plan.brands}
        assert (by_id[1].outcome, by_id[1].key) == (CREATED, ("new", "acme"))
        assert (by_id[2].outcome, by_id[2].key) == (MATCHED, 9)
        # The live row names the new brand; its deleted duplicate is matched to it.
        assert (by_id[4].outcome, by_id[3].outcome) == (CREATED, MATCHED)


class TestBrandSlugs:
    """Ingest finds a brand by the lower-cased slug (catalog.selectors.brand_resolve): legacy
    slugs match catalog brands in any case, and new brands are stored lower-cased."""

    def test_a_legacy_slug_matches_a_catalog_brand_in_any_case(self):
        legacy = archive(record(RUNWAYS, 1))
        legacy.brand_rows = [brand(1, "ACME")]

        plan = build_plan(legacy, CatalogState(brands_by_slug={"acme": 9}))

        [bp] = plan.brands
        assert (bp.outcome, bp.key) == (MATCHED, 9)
        assert plan.records[(RUNWAYS.name, 1)].brand == 9

    def test_a_new_brand_is_stored_with_its_slug_lower_cased(self):
        legacy = archive(record(RUNWAYS, 1))
        legacy.brand_rows = [brand(1, "Maison.Étoile")]

        plan = build_plan(legacy, CatalogState())

        [bp] = plan.brands
        assert (bp.outcome, bp.key, bp.row.slug) == (
            CREATED,
            ("new", "maison.étoile"),
            "maison.étoile",
        )
        assert plan.normalised == {"slug": 1}
        assert plan.superseded == [] and not plan.blocked

    def test_legacy_slugs_that_differ_only_in_case_stop_the_run(self):
        legacy = archive()
        legacy.brand_rows = [brand(1, "acme"), brand(2, "beta"), brand(3, "ACME", deleted=True)]

        plan = build_plan(legacy, CatalogState())

        assert [(e.table, e.id, e.subject) for e in plan.brand_conflicts] == [
            ("brands", 1, "brand 'acme'"),
            ("brands", 3, "brand 'ACME'"),
        ]
        assert "the slugs of brands #1 'acme', #3 'ACME' are one slug once lower-cased" in (
            plan.brand_conflicts[0].reason
        )
        [check] = [c for c in plan.checks if not c.ok]
        assert check.name == "brand slugs fit the catalog once lower-cased"
        assert check.detail == "2: brands #1, brands #3"

    def test_the_same_slug_twice_is_one_brand_as_before(self):
        legacy = archive()
        legacy.brand_rows = [brand(1, "acme", deleted=True), brand(2, "acme")]

        plan = build_plan(legacy, CatalogState())

        assert {bp.row.id: bp.outcome for bp in plan.brands} == {2: CREATED, 1: MATCHED}
        assert not plan.blocked

    def test_a_slug_too_long_once_lower_cased_stops_the_run(self):
        legacy = archive()
        legacy.brand_rows = [brand(1, "İ" * 100)]

        plan = build_plan(legacy, CatalogState())

        [conflict] = plan.brand_conflicts
        assert "longer than 128 characters once lower-cased" in conflict.reason
        assert plan.blocked


class TestNormalForms:
    """Keys compare, and rows are stored, in the catalog's normal form (catalog.keys)."""

    def test_a_fw24_ready_to_wear_row_is_superseded_by_a_catalog_FW24_ready_to_wear_record(self):
        catalog = CatalogState(brands_by_slug={"acme": 7})
        catalog.live_keys[RUNWAY][(7, "FW24", "ready-to-wear")] = CatalogRef(RUNWAY, 70, PUBLISHED)

        plan = build_plan(
            archive(record(RUNWAYS, 1, season_code="fw24", collection_type="Ready to Wear")),
            catalog,
        )

        rp = plan.records[(RUNWAYS.name, 1)]
        assert (rp.outcome, rp.holder, rp.deleted) == (
            SUPERSEDED,
            CatalogRef(RUNWAY, 70, PUBLISHED),
            True,
        )

    def test_a_legacy_Vogue_row_is_skipped_for_a_catalog_vogue_record_of_its_url(self):
        catalog = CatalogState()
        # Deleted in the catalog: deleting is terminal for the article, whatever the case.
        catalog.source_keys[RUNWAY][("vogue", "https://example.com/a")] = CatalogRef(RUNWAY, 5)

        plan = build_plan(
            archive(record(RUNWAYS, 1, source="Vogue", source_url=" https://example.com/a ")),
            catalog,
        )

        rp = plan.records[(RUNWAYS.name, 1)]
        assert (rp.outcome, rp.holder) == (SKIPPED, CatalogRef(RUNWAY, 5))

    def test_legacy_rows_spelling_one_key_differently_collide(self):
        plan = build_plan(
            archive(
                record(RUNWAYS, 1, season_code="FW24", collection_type="ready-to-wear"),
                record(
                    RUNWAY_DRAFTS, 2, PENDING, season_code="fw 24", collection_type="Ready to Wear"
                ),
                record(
                    RUNWAY_DRAFTS, 3, PENDING, season_code="SS25", source="VOGUE", source_url="u"
                ),
                record(
                    RUNWAY_DRAFTS, 4, PENDING, season_code="PF25", source="vogue", source_url="u"
                ),
                record(STREETS, 5, city="Paris", title="Look"),
                record(STREETS, 6, city=" Paris ", title="Look"),
            ),
            CatalogState(),
        )

        assert [outcome(plan, RUNWAY_DRAFTS, i) for i in (2, 3, 4)] == [
            SUPERSEDED,
            IMPORTED,
            SKIPPED,
        ]
        assert outcome(plan, STREETS, 6) == SUPERSEDED

    def test_legacy_rows_spelling_a_city_composed_and_decomposed_collide(self):
        plan = build_plan(
            archive(
                record(STREETS, 1, city="S\u00e3o Paulo", title="Look"),
                record(STREETS, 2, city="Sa\u0303o Paulo", title="Look"),
            ),
            CatalogState(),
        )

        assert outcome(plan, STREETS, 2) == SUPERSEDED
        assert plan.records[(STREETS.name, 2)].row.city == "S\u00e3o Paulo"

    def test_an_approved_draft_matches_its_published_row_in_another_spelling(self):
        plan = build_plan(
            archive(
                record(RUNWAYS, 1, season_code="FW24", collection_type="ready-to-wear"),
                record(
                    RUNWAY_DRAFTS, 2, APPROVED, season_code="fw24", collection_type="Ready To Wear"
                ),
            ),
            CatalogState(),
        )

        assert plan.records[(RUNWAY_DRAFTS.name, 2)].holder == LegacyRef(RUNWAYS.name, 1)
        assert not plan.blocked

    def test_the_row_to_store_holds_the_normal_forms_and_the_report_counts_them(self):
        plan = build_plan(
            archive(
                record(
                    RUNWAYS,
                    1,
                    season_code="fw-24",
                    collection_type="Ready to Wear",
                    source="Vogue",
                    source_url="https://example.com/A ",
                    title="Acme  Show",
                ),
                record(STREETS, 2, city="  New   York ", source="vogue", source_url="v"),
            ),
            CatalogState(),
        )

        runway = plan.records[(RUNWAYS.name, 1)]
        street = plan.records[(STREETS.name, 2)]
        values = ("season_code", "collection_type", "source", "source_url", "title")
        assert tuple(getattr(runway.row, name) for name in values) == (
            "FW24",
            "ready-to-wear",
            "vogue",
            "https://example.com/A",
            "Acme  Show",  # titles are stored as given
        )
        assert street.row.city == "New York"
        assert set(runway.normalised) == {"season_code", "collection_type", "source", "source_url"}
        assert street.normalised == ("city",)
        assert plan.normalised == {
            "season_code": 1,
            "collection_type": 1,
            "source": 1,
            "source_url": 1,
            "city": 1,
        }

    @pytest.mark.parametrize(
        ("values", "reason"),
        [
            ({"season_code": ""}, "season_code '' has no normal form (Letters and digits"),
            ({"season_code": "FW/24"}, "season_code 'FW/24' has no normal form"),
            ({"collection_type": " "}, "collection_type ' ' has no normal form"),
            ({"collection_type": "ﬀ" * 17}, "longer than 32 characters once normalised"),
        ],
    )
    def test_a_runway_key_part_without_a_normal_form_stops_the_run(self, values, reason):
        plan = build_plan(archive(record(RUNWAYS, 1, **values), record(RUNWAYS, 2)), CatalogState())

        [invalid] = plan.invalid
        assert (invalid.id, outcome(plan, RUNWAYS, 1)) == (1, SKIPPED)
        assert reason in invalid.reason
        assert plan.blocked

    def test_a_street_with_no_city_is_imported_as_an_unknown_city(self):
        # Like year and month 0 and a NULL title: the legacy archive's "unknown", kept.
        plan = build_plan(archive(record(STREETS, 1, city="  ")), CatalogState())

        assert outcome(plan, STREETS, 1) == IMPORTED
        assert plan.records[(STREETS.name, 1)].row.city == ""
        assert not plan.blocked


class TestApprovedDrafts:
    def test_an_approved_draft_with_a_published_counterpart_is_skipped_in_its_favour(self):
        plan = build_plan(
            archive(
                record(STREETS, 1, title="A  B"), record(STREET_DRAFTS, 2, APPROVED, title="A B")
            ),
            CatalogState(),
        )

        draft = plan.records[(STREET_DRAFTS.name, 2)]
        assert (draft.outcome, draft.holder) == (SKIPPED, LegacyRef(STREETS.name, 1))
        assert not plan.blocked

    def test_a_published_catalog_record_is_a_counterpart_too(self):
        catalog = CatalogState()
        catalog.live_keys[STREET][("Paris", 2024, 8, "")] = CatalogRef(STREET, 3, PUBLISHED)

        plan = build_plan(archive(record(STREET_DRAFTS, 1, APPROVED)), catalog)

        assert plan.records[(STREET_DRAFTS.name, 1)].holder == CatalogRef(STREET, 3, PUBLISHED)

    def test_an_approved_draft_without_a_counterpart_stops_the_run(self):
        catalog = CatalogState()
        catalog.live_keys[STREET][("Paris", 2024, 8, "")] = CatalogRef(STREET, 3, PENDING)

        plan = build_plan(archive(record(STREET_DRAFTS, 1, APPROVED)), catalog)

        assert [e.id for e in plan.unmatched_approved] == [1]
        assert plan.blocked

    def test_a_published_row_of_its_key_that_is_skipped_is_no_counterpart(self):
        # beta FW24 is skipped (acme FW24 holds its source key): the approved draft of beta
        # FW24 must not be accounted for by the acme show that stands for the skipped row.
        plan = build_plan(
            archive(
                record(RUNWAYS, 1, brand_id=1, source="vogue", source_url="u"),
                record(RUNWAYS, 2, brand_id=2, source="vogue", source_url="u"),
                record(RUNWAY_DRAFTS, 3, APPROVED, brand_id=2),
            ),
            CatalogState(),
        )

        assert outcome(plan, RUNWAYS, 2) == SKIPPED
        assert [(e.id, e.subject) for e in plan.unmatched_approved] == [
            (3, "runway beta FW24 ready-to-wear")
        ]
        assert plan.records[(RUNWAY_DRAFTS.name, 3)].holder is None
        assert plan.blocked

    def test_a_deleted_published_row_of_its_key_is_its_counterpart(self):
        # The draft was promoted, then an editor took the show down: the show is imported
        # soft-deleted, and it accounts for the draft.
        plan = build_plan(
            archive(record(STREETS, 1, deleted=True), record(STREET_DRAFTS, 2, APPROVED)),
            CatalogState(),
        )

        assert plan.records[(STREET_DRAFTS.name, 2)].holder == LegacyRef(STREETS.name, 1)
        assert not plan.unmatched_approved
        assert not plan.blocked

    def test_a_live_draft_holding_the_key_is_no_counterpart(self):
        # The published row is deleted, so the pending draft of the show holds the key: the
        # deleted published row is still the counterpart, never the pending draft.
        plan = build_plan(
            archive(
                record(STREETS, 1, deleted=True),
                record(STREET_DRAFTS, 2, PENDING),
                record(STREET_DRAFTS, 3, APPROVED),
            ),
            CatalogState(),
        )

        assert plan.records[(STREET_DRAFTS.name, 3)].holder == LegacyRef(STREETS.name, 1)
        assert not plan.unmatched_approved

    def test_a_draft_holding_the_key_with_no_published_row_leaves_it_unmatched(self):
        plan = build_plan(
            archive(record(STREET_DRAFTS, 2, PENDING), record(STREET_DRAFTS, 3, APPROVED)),
            CatalogState(),
        )

        [unmatched] = plan.unmatched_approved
        assert unmatched.id == 3
        assert "held by legacy street_snap_drafts #2 (pending)" in unmatched.reason

    def test_the_counterpart_is_the_record_that_holds_the_key_after_the_run(self):
        # The legacy published row is superseded by a published catalog record: that record
        # is the show the approved draft was promoted to.
        catalog = CatalogState(brands_by_slug={"acme": 7})
        catalog.live_keys[RUNWAY][(7, "FW24", "ready-to-wear")] = CatalogRef(RUNWAY, 70, PUBLISHED)

        plan = build_plan(archive(record(RUNWAYS, 1), record(RUNWAY_DRAFTS, 2, APPROVED)), catalog)

        assert outcome(plan, RUNWAYS, 1) == SUPERSEDED
        assert plan.records[(RUNWAY_DRAFTS.name, 2)].holder == CatalogRef(RUNWAY, 70, PUBLISHED)
        assert not plan.blocked


class TestInvalidRows:
    def test_values_the_catalog_cannot_hold_stop_the_run(self):
        plan = build_plan(
            archive(
                record(STREETS, 1, month=13),
                record(RUNWAYS, 2, brand_id=99),
                record(STREET_DRAFTS, 3, "on hold"),
                record(STREETS, 4, title="fine"),
                images=[(STREETS, image(1, 4, width=-1)), (STREETS, image(2, 1, width=-1))],
            ),
            CatalogState(),
        )

        # Image 2 is not checked: its record is not imported anyway.
        assert {(e.table, e.id) for e in plan.invalid} == {
            (STREETS.name, 1),
            (RUNWAYS.name, 2),
            (STREET_DRAFTS.name, 3),
            (STREETS.image_table, 1),
        }
        assert plan.blocked


class TestImages:
    def album(self, *images: LegacyImage, **values):
        rp = build_plan(archive(record(STREETS, 1, **values)), CatalogState()).records[
            (STREETS.name, 1)
        ]
        return rp, decide_images(STREETS, rp, list(images), {})

    def test_parents_are_kept_only_for_a_live_main_image_of_the_album(self):
        _, decisions = self.album(
            image(1, 1),
            image(2, 1, is_detail=True, parent_id=1),
            image(3, 1, is_detail=True, parent_id=404),
            image(4, 1, is_detail=True, parent_id=2),
            image(5, 1, deleted=True),
            image(6, 1, is_detail=True, parent_id=5),
            image(7, 1, is_detail=True, parent_id=5, deleted=True),
            image(8, 1, is_detail=True),
            image(9, 1, parent_id=1),
            image(10, 1, is_detail=True, parent_id=10),
            image(11, 1, is_detail=True, parent_id=12),  # its parent comes later
            image(12, 1),
        )

        parents = {d.image.id: d.parent for d in decisions}
        assert parents == {
            1: 0,
            2: 1,
            3: 0,
            4: 0,
            5: 0,
            6: 0,
            7: 5,
            8: 0,
            9: 0,
            10: 0,
            11: 12,
            12: 0,
        }
        notes = {d.image.id: d.note for d in decisions if d.note}
        assert notes == {
            3: "parent #404 is not an image of this album",
            4: "parent #2 is itself a detail",
            6: "parent #5 is deleted",
            8: "a detail without a parent",
            9: "a main image with parent #1: the parent is ignored",
            10: "a detail that is its own parent",
        }

    def test_the_cover_is_the_live_image_with_the_key_else_the_first_live_main_image(self):
        rp, decisions = self.album(
            image(1, 1, sort_order=2, url="a"),
            image(2, 1, sort_order=1, url="b", deleted=True),
            image(3, 1, sort_order=3, url="c", is_detail=True, parent_id=1),
            image(4, 1, sort_order=0, url="d", is_detail=True, parent_id=1),
        )

        assert choose_cover(replace(rp.row, cover="c"), decisions) == (3, "by key")
        assert choose_cover(replace(rp.row, cover="b"), decisions) == (1, "first main image")
        assert choose_cover(replace(rp.row, cover="zzz"), []) == (None, "none")

    def test_images_follow_their_record_and_orphans_are_skipped(self):
        plan = build_plan(
            archive(
                record(RUNWAYS, 1),
                record(RUNWAY_DRAFTS, 2, APPROVED),
                images=[
                    (RUNWAYS, image(1, 1)),
                    (RUNWAYS, image(2, 404)),
                    (RUNWAY_DRAFTS, image(1, 2)),
                ],
            ),
            CatalogState(),
        )

        assert plan.tally(RUNWAYS.image_table, PUBLISHED).imported == 1
        assert plan.tally(RUNWAYS.image_table, ORPHAN).skipped == 1
        assert plan.tally(RUNWAY_DRAFTS.image_table, APPROVED).skipped == 1
        assert [(e.table, e.id) for e in plan.skipped] == [(RUNWAYS.image_table, 2)]

    def test_dup_of_is_kept_for_an_imported_image_and_cleared_otherwise(self):
        plan = build_plan(
            archive(
                record(RUNWAYS, 1),
                record(RUNWAYS, 2, source="s", source_url="u"),
                record(RUNWAYS, 3, source="s", source_url="u", season_code="SS25"),
                images=[
                    (RUNWAYS, image(1, 1, dup_of=4)),  # a later image of another album
                    (RUNWAYS, image(2, 1, dup_of=404)),
                    (RUNWAYS, image(3, 1, dup_of=3)),
                    (RUNWAYS, image(4, 2)),
                    (RUNWAYS, image(5, 3)),  # runway 3 is skipped (source key)
                    (RUNWAYS, image(6, 1, dup_of=5)),
                ],
            ),
            CatalogState(),
        )

        assert plan.cleared_dups[RUNWAYS.image_table] == {2, 3, 6}
        assert plan.remaps["dup_of"] == 1
        reasons = {e.id: e.reason for e in plan.dup_cleared}
        assert reasons[2] == "dup_of #404 does not exist"
        assert reasons[6] == "dup_of #5 is an image that is not imported"

    def test_phash_and_counts_follow_live_images(self):
        plan = build_plan(
            archive(
                record(RUNWAYS, 1),
                images=[(RUNWAYS, image(1, 1)), (RUNWAYS, image(2, 1, deleted=True))],
            ),
            CatalogState(),
        )

        assert plan.records[(RUNWAYS.name, 1)].image_count == 1


class TestReportLists:
    def test_a_main_image_with_a_parent_id_is_not_listed_as_a_downgraded_detail(self):
        plan = build_plan(
            archive(
                record(STREETS, 1),
                images=[
                    (STREETS, image(1, 1)),
                    (STREETS, image(2, 1, parent_id=1)),  # a main image with a stray parent
                    (STREETS, image(3, 1, is_detail=True, parent_id=404)),
                ],
            ),
            CatalogState(),
        )

        assert [(e.id, e.reason) for e in plan.downgraded] == [
            (3, "parent #404 is not an image of this album")
        ]
        assert [(e.id, e.reason) for e in plan.parent_ignored] == [
            (2, "a main image with parent #1: the parent is ignored")
        ]

    def test_the_skipped_column_is_reconciled_with_the_lists(self):
        catalog = CatalogState()
        catalog.source_keys[STREET][("vogue", "u")] = CatalogRef(STREET, 5)
        plan = build_plan(
            archive(
                record(STREETS, 1, source="vogue", source_url="u"),
                record(STREETS, 2, title="B"),
                record(STREET_DRAFTS, 3, APPROVED, title="B"),
                record(STREET_DRAFTS, 4, APPROVED, title="C"),
                images=[(STREETS, image(1, 1)), (STREETS, image(2, 1)), (STREETS, image(3, 9))],
            ),
            catalog,
        )

        assert skipped_breakdown(plan, images=False) == [
            ("listed as skipped", 1),
            ("approved drafts matched", 1),
            ("unmatched approved drafts", 1),
            ("rows that do not fit", 0),
            ("published rows held back", 0),
        ]
        assert skipped_breakdown(plan, images=True) == [
            ("listed as skipped", 1),
            ("images of skipped records", 2),
        ]


class TestEarlierRuns:
    def test_rows_in_the_id_map_are_accounted_for_and_nothing_is_new(self):
        legacy = archive(
            record(RUNWAYS, 1), images=[(RUNWAYS, image(1, 1)), (RUNWAYS, image(2, 9))]
        )
        catalog = CatalogState(brands_by_slug={"acme": 1, "beta": 2})
        catalog.earlier = {
            "brands": {1: 1, 2: 2},
            RUNWAYS.name: {1: 10},
            RUNWAYS.image_table: {1: 100, 2: None},
        }

        plan = build_plan(legacy, catalog)

        assert plan.new_rows == 0
        assert plan.tally(RUNWAYS.name, PUBLISHED).earlier == 1
        assert plan.tally(RUNWAYS.image_table, ORPHAN).earlier == 1
        assert not plan.blocked

    def test_a_new_image_of_an_earlier_record_is_skipped_and_listed(self):
        legacy = archive(
            record(RUNWAYS, 1), images=[(RUNWAYS, image(1, 1)), (RUNWAYS, image(2, 1))]
        )
        catalog = CatalogState()
        catalog.earlier = {RUNWAYS.name: {1: 10}, RUNWAYS.image_table: {1: 100}}

        plan = build_plan(legacy, catalog)

        assert outcome(plan, RUNWAYS, 1) == EARLIER
        assert [(e.id, e.reason) for e in plan.skipped] == [
            (2, "its record was accounted for by an earlier run")
        ]


# --- Properties -----------------------------------------------------------------------------


@st.composite
def catalogs(draw: st.DrawFn) -> CatalogState:
    """What a catalog may already hold: a brand, a live record per kind, taken source keys."""
    catalog = CatalogState()
    if draw(st.booleans()):
        catalog.brands_by_slug["acme"] = 1
        if draw(st.booleans()):
            status = draw(st.sampled_from([PENDING, PUBLISHED]))
            catalog.live_keys[RUNWAY][(1, "FW24", "ready-to-wear")] = CatalogRef(RUNWAY, 1, status)
    if draw(st.booleans()):
        status = draw(st.sampled_from([PENDING, PUBLISHED, REJECTED]))
        catalog.live_keys[STREET][("Paris", 0, 8, "Look Book")] = CatalogRef(STREET, 1, status)
    if draw(st.booleans()):
        catalog.source_keys[STREET][("vogue", "https://example.com/1")] = CatalogRef(STREET, 2)
    return catalog


def _key(row: LegacyRecord, plan) -> tuple:
    if row.kind == STREET:
        return (row.city, row.year, row.month, fold_title(row.title))
    return (plan.records[(row.table.name, row.id)].brand, row.season_code, row.collection_type)


@given(archive=archives(invalid=True), catalog=catalogs())
def test_every_plan_accounts_for_every_row_and_references_only_imported_images(archive, catalog):
    plan = build_plan(archive, catalog)

    # Conservation, per table and status: legacy rows = imported + superseded + skipped.
    assert all(t.balanced for t in plan.tallies.values()), plan.tallies
    legacy = Counter({k: v for k, v in archive.counts().items() if k[0] != "brands"})
    assert Counter({k: t.accounted for k, t in plan.tallies.items() if t.accounted}) == legacy
    assert plan.problems == []
    # Blocked exactly when something cannot be imported as it is.
    assert plan.blocked == bool(
        plan.unmatched_approved or plan.invalid or plan.held_by_unpublished or plan.brand_conflicts
    )
    # New brands are stored lower-cased, the form ingest looks them up in; legacy slugs that
    # would become one slug stop the run.
    created = [bp.row.slug for bp in plan.brands if bp.outcome == CREATED]
    assert all(normalize_brand_slug(slug) == slug for slug in created)
    assert len(created) == len(set(created))
    spellings: dict[str, set[str]] = {}
    for b in archive.brand_rows:
        spellings.setdefault(normalize_brand_slug(b.slug), set()).add(b.slug)
    assert bool(plan.brand_conflicts) == any(len(s) > 1 for s in spellings.values())
    # An approved draft is accounted for by the published record of its own key: the live
    # one, else a published row of the key imported soft-deleted.
    placed = {
        (rp.row.kind, rp.key): rp.ref
        for rp in plan.records.values()
        if rp.outcome == IMPORTED and not rp.deleted
    }
    taken_down: dict[tuple, LegacyRef] = {}
    for rp in sorted(plan.records.values(), key=lambda rp: (rp.row.table.drafts, rp.row.id)):
        if rp.outcome == IMPORTED and rp.deleted and rp.row.status == PUBLISHED:
            taken_down.setdefault((rp.row.kind, rp.key), rp.ref)
    for rp in plan.records.values():
        if rp.approved and rp.holder is not None:
            holder = rp.holder
            if isinstance(holder, CatalogRef):
                assert catalog.live_keys[holder.kind][rp.key] == holder
                assert holder.status == PUBLISHED
                assert (rp.row.kind, rp.key) not in placed
            else:
                key = (rp.row.kind, rp.key)
                live = placed.get(key)
                if live is not None and plan.records[(live.table, live.id)].row.status == PUBLISHED:
                    assert holder == live
                else:
                    assert holder == taken_down[key]
                assert plan.records[(holder.table, holder.id)].row.status == PUBLISHED
    # The skipped column adds up from the lists (and the images of skipped records).
    for images, tables in ((False, set(TABLE_BY_NAME)), (True, set(TABLE_BY_IMAGE_TABLE))):
        skipped = sum(t.skipped for (table, _), t in plan.tallies.items() if table in tables)
        assert sum(n for _, n in skipped_breakdown(plan, images=images)) == skipped
    # Only legacy details are listed as downgraded; main images with a parent id on their own.
    by_id = {
        (t.image_table, i.id): i for t in TABLES for i in archive.image_rows.get(t.image_table, [])
    }
    assert all(by_id[(e.table, e.id)].is_detail for e in plan.downgraded)
    assert not any(by_id[(e.table, e.id)].is_detail for e in plan.parent_ignored)
    # A published row is superseded only by a published record (a legacy published row, or a
    # published catalog record): never silently taken off the site.
    for rp in plan.records.values():
        if rp.outcome == SUPERSEDED and rp.row.status == PUBLISHED:
            holder = rp.holder
            if isinstance(holder, CatalogRef):
                assert holder.status == PUBLISHED
            else:
                assert plan.records[(holder.table, holder.id)].row.status == PUBLISHED

    for kind in (RUNWAY, STREET):
        inserted = plan.inserts[kind]
        # The catalog's constraints hold for what the plan inserts, with what is there already.
        live = [_key(rp.row, plan) for rp in inserted if not rp.deleted]
        assert len(live) == len(set(live))
        assert not set(live) & set(catalog.live_keys[kind])
        sources = [(rp.row.source, rp.row.source_url) for rp in inserted if rp.row.source_url]
        assert len(sources) == len(set(sources))
        assert not set(sources) & set(catalog.source_keys[kind])
        # What is stored is in normal form: the form ingest looks keys up in.
        for rp in inserted:
            assert normalize_source(rp.row.source) == rp.row.source
            assert normalize_source_url(rp.row.source_url) == rp.row.source_url
            if kind == RUNWAY:
                assert normalize_season_code(rp.row.season_code) == rp.row.season_code
                assert normalize_collection_type(rp.row.collection_type) == rp.row.collection_type
            else:
                assert normalize_city(rp.row.city) == rp.row.city
        # A superseded row is inserted soft-deleted; a legacy soft-deleted row stays deleted.
        assert all(rp.deleted for rp in inserted if rp.outcome == SUPERSEDED or rp.row.deleted)

    for table in TABLES:
        groups = [
            (plan.records.get((table.name, record_id)), images)
            for record_id, images in MemoryArchive.image_groups(archive, table)
        ]
        inserted_ids = {
            d.image.id
            for rp, images in groups
            for d in decide_images(table, rp, images, {})
            if d.inserted
        }
        for rp, images in groups:
            decisions = decide_images(table, rp, images, {})
            by_id = {d.image.id: d for d in decisions}
            for d in decisions:
                assert d.inserted == (rp is not None and rp.outcome in INSERTED)
                if d.parent:
                    parent = by_id[d.parent]
                    assert parent.inserted and not parent.parent and not parent.image.is_detail
                    assert d.image.deleted or not parent.image.deleted
                dup = d.image.dup_of
                if d.inserted and dup and d.image.id not in plan.cleared_dups[table.image_table]:
                    assert dup in inserted_ids and dup != d.image.id
            if rp is not None and rp.outcome in INSERTED:
                live = [d for d in decisions if not d.image.deleted]
                assert rp.image_count == len(live)
                assert rp.cover is None or rp.cover in {d.image.id for d in live}
