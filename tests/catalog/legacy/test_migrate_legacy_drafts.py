"""`manage.py migrate_legacy_drafts` against a real legacy PostgreSQL database: the dry run, the
real run (both ways of inserting), reruns, failures that roll back, usage errors."""

from __future__ import annotations

import json
from io import StringIO

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from catalog.keys import fold_title
from catalog.legacy import inserters, services, writer
from catalog.legacy.audit import DATABASE_CHECKS
from catalog.legacy.report import NOTHING_TO_IMPORT
from catalog.legacy.rows import (
    PENDING,
    RUNWAY_DRAFTS,
    RUNWAYS,
    STREET_DRAFTS,
    STREETS,
)
from catalog.legacy.services import legacy_archive_migrate
from catalog.legacy.source import PostgresLegacySource
from catalog.models import (
    Brand,
    LegacyIdMap,
    Runway,
    RunwayImage,
    StreetSnap,
    StreetSnapImage,
)
from publicapi.models import PublicBrand, PublicRunway, PublicStreetSnap, PublicStreetSnapImage
from tests.catalog.legacy import scenario
from tests.catalog.legacy.archive import ALL_TABLES, at
from tests.catalog.legacy.support import catalog_counts, migrate
from tests.factories import BrandFactory, RunwayFactory, StreetSnapFactory

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def table_row(output: str, section: str, kind: str, status: str) -> list[int]:
    """The numbers of one line of a report table."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(section))
    label = f"  {kind:<8}{status}"
    line = next(line for line in lines[start:] if line.startswith(label))
    return [int(cell.replace(",", "")) for cell in line[len(label) :].split()[:5]]


def new_id(table: str, legacy_id: int) -> int | None:
    return LegacyIdMap.objects.get(legacy_table=table, legacy_id=legacy_id).new_id


def mapped(table: str, legacy_id: int) -> LegacyIdMap:
    return LegacyIdMap.objects.get(legacy_table=table, legacy_id=legacy_id)


@pytest.fixture(params=["copy", "bulk_create"])
def inserter(request, monkeypatch):
    """Both ways of inserting must write the same catalog."""
    if request.param == "bulk_create":
        monkeypatch.setattr(writer, "default_inserter", inserters.OrmInserter)
    return request.param


@pytest.fixture
def imported(legacy, inserter):
    s = scenario.build(legacy)
    s.before = catalog_counts()
    s.code, s.out, s.err = migrate(legacy.conninfo)
    assert s.code == 0, s.out + s.err
    return s


class TestDryRun:
    def test_writes_nothing_and_prints_the_plan(self, legacy):
        s = scenario.build(legacy)
        before, legacy_before = catalog_counts(), legacy.snapshot()

        code, out, err = migrate(legacy.conninfo, "--dry-run")

        assert code == 0, out + err
        assert catalog_counts() == before
        assert legacy.snapshot() == legacy_before
        assert "dry run: nothing written" in out
        for (kind, status), (rows, imported, superseded, skipped) in [
            *scenario.EXPECTED_RECORDS.items()
        ]:
            assert table_row(out, "records", kind, status) == [
                rows,
                0,
                imported,
                superseded,
                skipped,
            ]
        for (kind, status), (rows, imported, superseded, skipped) in [
            *scenario.EXPECTED_IMAGES.items()
        ]:
            assert table_row(out, "images", kind, status) == [
                rows,
                0,
                imported,
                superseded,
                skipped,
            ]
        assert f"brand_runway_drafts #{s.d2} (pending)  runway beta SS26" in out
        assert "skipped: 3" in out  # R4, the Paris draft, the orphan image
        # The table's skipped column, reconciled with the lists on screen.
        assert "  skipped records: 4 = 2 listed as skipped + 2 approved drafts matched" in out
        assert "  skipped images: 4 = 1 listed as skipped + 3 images of skipped records" in out
        assert "approved drafts matched to their published counterpart: 2" in out
        assert (
            f"brand_runway_drafts #{s.d1} (approved)  runway acme FW24 ready-to-wear:"
            f" promoted as legacy brand_runways #{s.r1}" in out
        )
        # Which checks ran, and which only the real run makes (they read the written rows).
        checks = out[out.index("\nchecks") :]
        assert "checks on the plan (a dry run makes these):" in checks
        assert "  ok      every approved draft has a published counterpart" in checks
        assert (
            "not run by a dry run (they read the written rows: the real run makes them inside"
            " its transaction, before it commits):" in checks
        )
        for name in DATABASE_CHECKS:
            assert f"  -       {name}" in checks
        assert "dry run: nothing written; the plan checks passed." in out
        assert "details imported as main images: 3" in out
        assert "dup_of cleared: 2" in out
        assert "plan: images" in err  # progress

    def test_the_same_plan_as_the_real_run(self, legacy):
        scenario.build(legacy)
        _, dry, _ = migrate(legacy.conninfo, "--dry-run")
        _, real, _ = migrate(legacy.conninfo)

        def lists(output: str) -> str:
            return output[output.index("image references") : output.index("\nchecks")]

        assert lists(dry) == lists(real)


class TestRealRun:
    def test_every_legacy_row_is_accounted_for(self, legacy, imported):
        s = imported
        for (kind, status), (rows, new, superseded, skipped) in scenario.EXPECTED_RECORDS.items():
            assert table_row(s.out, "records", kind, status) == [rows, 0, new, superseded, skipped]
        for (kind, status), (rows, new, superseded, skipped) in scenario.EXPECTED_IMAGES.items():
            assert table_row(s.out, "images", kind, status) == [rows, 0, new, superseded, skipped]
        with psycopg.connect(legacy.conninfo) as conn:
            for table in ALL_TABLES:
                (rows,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608
                assert LegacyIdMap.objects.filter(legacy_table=table).count() == rows, table
        after = catalog_counts()
        assert after["brand_runways"] - s.before["brand_runways"] == 3 + 1 + 2 + 1 + 1 + 1
        assert after["street_snaps"] - s.before["street_snaps"] == 2 + 1 + 1 + 1
        assert after["brand_runway_images"] == 7 + 1 + 1
        assert after["street_snap_images"] == 8 + 1
        assert "FAILED" not in s.out
        assert "done: " in s.out
        for name in DATABASE_CHECKS:
            assert f"  ok      {name}" in s.out
        assert "not run" not in s.out

    def test_brands_are_matched_by_slug_and_keep_their_featured_flag(self, imported):
        s = imported
        acme = Brand.objects.get(slug="acme")
        assert (acme.name, acme.is_featured, acme.created_at) == ("Acme", True, at(1))
        assert not Brand.objects.get(slug="beta").is_featured
        s.gamma.refresh_from_db()
        assert not s.gamma.is_featured  # an existing brand is matched, never rewritten
        assert mapped("brands", s.gamma_legacy).outcome == "matched"
        assert new_id("brands", s.acme_old) == acme.pk

    def test_published_rows_become_published_records(self, imported):
        s = imported
        r1 = Runway.objects.get(pk=new_id(RUNWAYS.name, s.r1))
        assert (r1.status, r1.deleted_at, r1.published_at) == ("published", None, at(10))
        assert (r1.brand.slug, r1.season_code, r1.collection_type) == (
            "acme",
            "FW24",
            "ready-to-wear",
        )
        assert (r1.title, r1.season, r1.source) == ("Acme Fall 2024", "Fall/Winter 2024", "vogue")
        assert (r1.created_at, r1.updated_at) == (at(10), at(11))
        assert r1.ingest_job_id is None
        r2 = Runway.objects.get(pk=new_id(RUNWAYS.name, s.r2))
        assert r2.deleted_at is not None  # soft-deleted in the old archive

    def test_drafts_keep_status_reviewer_reason_and_job_id_in_the_map(self, imported):
        s = imported
        d5 = Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, s.d5))
        assert (d5.status, d5.reviewer, d5.reject_reason) == ("rejected", "ben", "not a show")
        assert (d5.reviewed_at, d5.deleted_at, d5.ingest_job_id) == (at(27), None, None)
        assert mapped(RUNWAY_DRAFTS.name, s.d5).legacy_job_id == 88
        d6 = Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, s.d6))
        assert (d6.status, d6.deleted_at is not None) == ("pending", True)

    def test_the_oldest_draft_of_a_key_wins_and_the_others_are_superseded(self, imported):
        s = imported
        d3 = Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, s.d3))
        d2 = Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, s.d2))
        assert (d3.status, d3.deleted_at) == ("pending", None)
        assert (d2.status, d2.deleted_at is not None) == ("pending", True)
        assert mapped(RUNWAY_DRAFTS.name, s.d2).outcome == "superseded"
        assert mapped(RUNWAY_DRAFTS.name, s.d2).legacy_job_id == 77

    def test_a_draft_of_a_published_key_is_superseded_with_its_status_and_images(self, imported):
        s = imported
        d4 = Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, s.d4))
        assert (d4.status, d4.reviewer, d4.reject_reason) == ("rejected", "anna", "blurry")
        assert d4.deleted_at is not None
        assert list(d4.images.values_list("pk", flat=True)) == [
            new_id(RUNWAY_DRAFTS.image_table, s.d4_a)
        ]
        r3 = mapped(RUNWAYS.name, s.r3)
        assert r3.outcome == "superseded"
        assert Runway.objects.get(pk=r3.new_id).deleted_at is not None
        s.crawled_runway.refresh_from_db()
        assert s.crawled_runway.deleted_at is None  # what was there first stays

    def test_a_taken_source_key_skips_the_row_and_its_images(self, imported):
        s = imported
        r4 = mapped(RUNWAYS.name, s.r4)
        assert (r4.outcome, r4.new_id) == ("skipped", new_id(RUNWAYS.name, s.r1))
        assert mapped(RUNWAYS.image_table, s.r4_a).outcome == "skipped"
        assert new_id(RUNWAYS.image_table, s.r4_a) is None
        sd2 = mapped(STREET_DRAFTS.name, s.sd2)
        assert (sd2.outcome, sd2.new_id) == ("skipped", s.crawled_street.pk)

    def test_approved_drafts_map_to_their_published_counterpart(self, imported):
        s = imported
        d1 = mapped(RUNWAY_DRAFTS.name, s.d1)
        assert (d1.outcome, d1.new_id, d1.legacy_job_id) == (
            "skipped",
            new_id(RUNWAYS.name, s.r1),
            70,
        )
        assert new_id(STREET_DRAFTS.name, s.sd3) == new_id(STREETS.name, s.s1)
        assert mapped(RUNWAY_DRAFTS.image_table, s.d1_a).outcome == "skipped"

    def test_street_titles_fold_for_the_key_and_are_stored_as_given(self, imported):
        s = imported
        s1 = StreetSnap.objects.get(pk=new_id(STREETS.name, s.s1))
        assert (s1.title, s1.title_key) == ("Street Style  CPH", "Street Style CPH")
        s2 = StreetSnap.objects.get(pk=new_id(STREETS.name, s.s2))
        assert (s2.title_key, s2.deleted_at is not None) == ("Street Style CPH", True)
        s3 = StreetSnap.objects.get(pk=new_id(STREETS.name, s.s3))
        assert (s3.title, s3.title_key, s3.year, s3.month) == ("", "", 0, 0)
        assert mapped(STREET_DRAFTS.name, s.sd1).outcome == "superseded"
        assert all(snap.title_key == fold_title(snap.title) for snap in StreetSnap.objects.all())

    def test_images_keep_their_fields_and_storage_keys(self, legacy, imported):
        s = imported
        a = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, s.r1_a))
        b = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, s.r1_b))
        assert (a.phash, a.phash_algorithm) == (None, "")  # 0 meant "not computed"
        assert (b.phash, b.phash_algorithm, b.look_index) == (-42, "legacy", 1)
        assert (b.width, b.height, b.sort_order, b.is_duplicate) == (800, 1200, 1, True)
        (url,) = legacy.conn.execute(
            "SELECT url FROM brand_runway_images WHERE id = %s", [s.r1_b]
        ).fetchone()
        assert b.storage_key == url
        deleted = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, s.r1_d))
        assert deleted.deleted_at is not None

    def test_parent_and_dup_of_are_remapped_and_unmappable_ones_downgrade_or_clear(self, imported):
        s = imported
        image = {
            name: StreetSnapImage.objects.get(pk=new_id(STREETS.image_table, getattr(s, name)))
            for name in ("s1_m1", "s1_d1", "s1_d2", "s1_d3", "s1_m2", "s1_d4", "s1_d5", "s1_m3")
        }
        assert (image["s1_d1"].is_detail, image["s1_d1"].parent_id) == (True, image["s1_m1"].pk)
        assert (image["s1_d5"].is_detail, image["s1_d5"].parent_id) == (True, image["s1_m3"].pk)
        for downgraded in ("s1_d2", "s1_d3", "s1_d4"):
            assert (image[downgraded].is_detail, image[downgraded].parent_id) == (False, None)
        assert image["s1_m2"].deleted_at is not None
        r1_a = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, s.r1_a))
        r1_b = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, s.r1_b))
        r1_c = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, s.r1_c))
        # A dup_of pointing forward (to a later album) and one pointing back both remap.
        assert r1_a.dup_of_id == new_id(RUNWAYS.image_table, s.r5_a)
        assert r1_b.dup_of_id == r1_a.pk
        assert (r1_c.dup_of_id, r1_c.is_duplicate) == (None, True)
        sd4_a = StreetSnapImage.objects.get(pk=new_id(STREET_DRAFTS.image_table, s.sd4_a))
        assert (sd4_a.dup_of_id, sd4_a.is_duplicate) == (None, True)  # its target was skipped
        orphan = mapped(STREET_DRAFTS.image_table, s.orphan)
        assert (orphan.outcome, orphan.new_id) == ("skipped", None)

    def test_covers_and_image_counts(self, imported):
        s = imported
        r1 = Runway.objects.get(pk=new_id(RUNWAYS.name, s.r1))
        assert r1.cover_id == new_id(RUNWAYS.image_table, s.r1_b)  # by key
        assert r1.image_count == 3  # the deleted image does not count
        r2 = Runway.objects.get(pk=new_id(RUNWAYS.name, s.r2))
        assert r2.cover_id == new_id(RUNWAYS.image_table, s.r2_b)  # lowest sort_order
        s1 = StreetSnap.objects.get(pk=new_id(STREETS.name, s.s1))
        assert (s1.cover_id, s1.image_count) == (new_id(STREETS.image_table, s.s1_m1), 7)
        s3 = StreetSnap.objects.get(pk=new_id(STREETS.name, s.s3))
        assert (s3.cover_id, s3.image_count) == (None, 0)

    def test_the_public_api_shows_exactly_the_published_live_rows(self, imported):
        s = imported
        assert set(PublicRunway.objects.values_list("id", flat=True)) == {
            s.crawled_runway.pk,  # published before the import, and kept
            new_id(RUNWAYS.name, s.r1),
            new_id(RUNWAYS.name, s.r5),
        }
        assert set(PublicStreetSnap.objects.values_list("id", flat=True)) == {
            new_id(STREETS.name, s.s1),
            new_id(STREETS.name, s.s3),
        }
        assert set(PublicBrand.objects.values_list("slug", flat=True)) == {"acme", "beta", "gamma"}
        details = PublicStreetSnapImage.objects.filter(is_detail=True)
        assert set(details.values_list("id", flat=True)) == {
            new_id(STREETS.image_table, s.s1_d1),
            new_id(STREETS.image_table, s.s1_d5),
        }

    def test_a_second_run_imports_nothing_and_says_so(self, legacy, imported):
        after = catalog_counts()

        code, out, _ = migrate(legacy.conninfo)

        assert code == 0
        assert NOTHING_TO_IMPORT in out
        assert catalog_counts() == after
        rows, earlier, new, superseded, skipped = table_row(out, "records", "runway", "published")
        assert (rows, earlier, new, superseded, skipped) == (5, 5, 0, 0, 0)

    def test_rows_added_to_the_legacy_archive_later_are_imported_by_the_next_run(
        self, legacy, imported
    ):
        s = imported
        late = legacy.runway(s.acme, "SS31")
        late_image = legacy.image(RUNWAYS, late, dup_of=s.r1_a)
        late_draft = legacy.runway_draft(s.acme, "SS31", PENDING)

        code, out, err = migrate(legacy.conninfo)

        assert code == 0, out + err
        assert table_row(out, "records", "runway", "published") == [6, 5, 1, 0, 0]
        assert mapped(RUNWAY_DRAFTS.name, late_draft).outcome == "superseded"
        image = RunwayImage.objects.get(pk=new_id(RUNWAYS.image_table, late_image))
        assert image.dup_of_id == new_id(RUNWAYS.image_table, s.r1_a)
        assert Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, late_draft)).status == PENDING
        assert "earlier runs" in out


class TestNormalForms:
    """Key and source values from the legacy database are compared and stored in the normal
    form ingest looks keys up in (catalog.keys)."""

    def test_spellings_are_stored_normalised_and_collide_with_the_catalog(self, legacy, inserter):
        acme_id = BrandFactory(slug="acme", name="Acme").pk
        crawled = RunwayFactory(
            brand_id=acme_id, season_code="FW24", collection_type="ready-to-wear", published=True
        )
        deleted = RunwayFactory(
            source="vogue", source_url="https://example.com/gone", deleted_at=timezone.now()
        )
        acme = legacy.brand("acme")
        shadow = legacy.runway(acme, "fw24", collection_type="Ready to Wear")
        gone = legacy.runway(acme, "SS25", source="Vogue", source_url="https://example.com/gone")
        kept = legacy.runway_draft(
            acme, "pf 25", PENDING, collection_type="Pre-Fall", source="VOGUE", source_url="u"
        )
        snap = legacy.street(" New  York ", 2024, 9, "Look", source="Vogue", source_url="v")

        code, out, err = migrate(legacy.conninfo)

        assert code == 0, out + err
        assert mapped(RUNWAYS.name, shadow).outcome == "superseded"
        assert f"entity key is held by existing runway #{crawled.pk} (published)" in out
        assert (mapped(RUNWAYS.name, gone).outcome, new_id(RUNWAYS.name, gone)) == (
            "skipped",
            deleted.pk,
        )
        runway = Runway.objects.get(pk=new_id(RUNWAY_DRAFTS.name, kept))
        assert (runway.season_code, runway.collection_type, runway.source) == (
            "PF25",
            "pre-fall",
            "vogue",
        )
        street = StreetSnap.objects.get(pk=new_id(STREETS.name, snap))
        assert (street.city, street.source) == ("New York", "vogue")
        assert (
            "values stored in their normal form (as ingest looks keys up): city 1,"
            " collection_type 2, season_code 2, source 2" in out
        )

    def test_a_runway_without_a_season_code_stops_the_run(self, legacy):
        acme = legacy.brand("acme")
        legacy.runway(acme, "FW24")
        blank = legacy.runway(acme, "")

        code, out, _ = migrate(legacy.conninfo)

        assert code == 1
        assert f"brand_runways #{blank} (published)" in out
        assert "season_code '' has no normal form (Letters and digits, e.g. FW24.)" in out
        assert Runway.objects.count() == 0


class TestFailures:
    def test_an_approved_draft_without_counterpart_stops_the_run_and_writes_nothing(self, legacy):
        scenario.build(legacy)
        lost = legacy.street_draft("Nowhere", 2020, 1, "Lost", "approved")
        before = catalog_counts()

        code, out, err = migrate(legacy.conninfo)

        assert code == 1
        assert catalog_counts() == before
        assert "unmatched approved drafts (the run stops): 1" in out
        assert f"street_snap_drafts #{lost} (approved)" in out
        assert "every approved draft has a published counterpart" in err
        assert "not run (they read the written rows, and the run stopped before writing):" in out

    def test_a_failed_database_check_rolls_everything_back(self, legacy, monkeypatch):
        scenario.build(legacy)
        before = catalog_counts()
        record = writer._Writer._record

        def miscount(self, rp):  # a writer bug: one image_count off by one
            row = record(self, rp)
            if rp.row.table is RUNWAYS and rp.row.id == 1:
                row["image_count"] += 1
            return row

        monkeypatch.setattr(writer._Writer, "_record", miscount)

        code, out, _ = migrate(legacy.conninfo)

        assert code == 1
        assert catalog_counts() == before
        assert "FAILED  covers are live images of their album; image_count" in out

    def test_a_refused_write_is_reported_the_same_way_by_copy_and_bulk_create(
        self, legacy, inserter, monkeypatch
    ):
        # A unique violation the plan did not foresee (here: the plan is made blind to the
        # catalog's source keys). COPY goes through psycopg's own cursor, bulk_create through
        # Django's: both must end as "the catalog database refused the import", exit 1.
        StreetSnapFactory(source="vogue", source_url="https://example.com/taken")
        legacy.street(
            "Oslo", 2024, 8, "Look", source="vogue", source_url="https://example.com/taken"
        )
        read_catalog_state = services.read_catalog_state

        def blind_to_source_keys():
            state = read_catalog_state()
            state.source_keys = {kind: {} for kind in state.source_keys}
            return state

        monkeypatch.setattr(services, "read_catalog_state", blind_to_source_keys)
        before = catalog_counts()

        code, out, err = migrate(legacy.conninfo)

        assert code == 1, out + err
        assert catalog_counts() == before
        assert "FAILED: the catalog database refused the import, nothing written" in out
        assert "street_source_key" in out
        assert "reading the legacy database failed" not in err

    def test_copy_updates_raise_django_errors_too(self):
        snap = StreetSnapFactory()

        with pytest.raises(IntegrityError, match="street_month_range"), transaction.atomic():
            inserters.CopyInserter().set_column(StreetSnap, "month", [(snap.pk, 13)])

    def test_a_published_show_held_by_an_unpublished_catalog_record_stops_the_run(self, legacy):
        # A crawl of the show arrived before the import and is still pending (or was
        # rejected): importing the legacy published row superseded would take the show off the
        # public site. The operator decides which copy is the show, then runs again.
        acme = BrandFactory(slug="acme")
        pending = RunwayFactory(brand=acme, season_code="FW24", collection_type="ready-to-wear")
        rejected = StreetSnapFactory(
            city="Oslo", year=2024, month=8, title="Look", status="rejected"
        )
        legacy_acme = legacy.brand("acme")
        runway = legacy.runway(legacy_acme, "FW24")
        street = legacy.street("Oslo", 2024, 8, " Look ")
        draft = legacy.runway_draft(legacy_acme, "FW24", PENDING)
        before = catalog_counts()

        dry_code, dry, _ = migrate(legacy.conninfo, "--dry-run")
        code, out, err = migrate(legacy.conninfo)

        for output in (dry, out):
            assert "published rows held back by an unpublished catalog record" in output
            assert (
                f"brand_runways #{runway} (published)  runway acme FW24 ready-to-wear:"
                f" entity key is held by existing runway #{pending.pk} (pending)" in output
            )
            assert (
                f"street_snaps #{street} (published)  street Oslo 2024-08 'Look':"
                f" entity key is held by existing street #{rejected.pk} (rejected)" in output
            )
            assert (
                "FAILED  no legacy published row is held back by an unpublished catalog record:"
                f" 2: brand_runways #{runway}, street_snaps #{street}" in output
            )
        # A draft of the show is superseded by the crawl, as before.
        assert (
            f"brand_runway_drafts #{draft} (pending)  runway acme FW24 ready-to-wear:"
            f" entity key is held by existing runway #{pending.pk} (pending)" in dry
        )
        assert (dry_code, code) == (1, 1)
        assert "dry run: nothing written" not in dry
        assert "no legacy published row is held back" in err
        assert catalog_counts() == before

    def test_a_row_the_catalog_cannot_hold_stops_the_run(self, legacy):
        acme = legacy.brand("acme")
        legacy.runway(acme, "FW24")
        bad = legacy.street("Paris", 2024, 14, "Month fourteen")

        code, out, _ = migrate(legacy.conninfo)

        assert code == 1
        assert f"street_snaps #{bad} (published)" in out
        assert "month 14 is outside 0..12" in out
        assert Runway.objects.count() == 0


class TestUsage:
    def test_without_a_legacy_url_it_exits_2(self, monkeypatch):
        monkeypatch.delenv("LEGACY_DATABASE_URL", raising=False)

        with pytest.raises(CommandError) as error:
            call_command("migrate_legacy_drafts", stdout=StringIO())

        assert error.value.returncode == 2

    def test_it_reads_legacy_database_url_when_the_flag_is_absent(self, legacy, monkeypatch):
        monkeypatch.setenv("LEGACY_DATABASE_URL", legacy.conninfo)
        out = StringIO()

        call_command("migrate_legacy_drafts", "--dry-run", stdout=out, stderr=StringIO())

        assert NOTHING_TO_IMPORT in out.getvalue()  # an empty legacy archive

    def test_an_unreachable_database_exits_2(self):
        code, _, err = migrate("postgres://nobody@127.0.0.1:1/none")

        assert code == 2
        assert "cannot connect to the legacy database" in err

    def test_a_database_without_the_legacy_schema_exits_2(self):
        settings = connection.settings_dict
        target = psycopg.conninfo.make_conninfo(
            dbname=settings["NAME"], host=settings["HOST"], user=settings["USER"]
        )

        code, _, err = migrate(target)

        assert code == 2
        assert "not the legacy archive schema; missing: table brand_runway_drafts" in err

    def test_the_report_file_has_every_list_in_full(self, legacy, tmp_path):
        scenario.build(legacy)
        path = tmp_path / "report.json"

        code, out, _ = migrate(
            legacy.conninfo, "--dry-run", "--list-limit", "1", "--report-file", str(path)
        )

        assert code == 0
        assert "... and 2 more (--report-file writes them all)" in out
        report = json.loads(path.read_text())
        assert len(report["lists"]["downgraded"]) == 3
        assert len(report["lists"]["approved_matched"]) == 2
        assert report["written"] is False


def test_the_import_holds_off_other_writers_until_it_commits(legacy):
    """While the import writes, an ingest job's insert into the record tables waits."""
    scenario.build(legacy)
    settings = connection.settings_dict
    other = psycopg.connect(
        psycopg.conninfo.make_conninfo(
            dbname=settings["NAME"],
            host=settings["HOST"],
            port=settings["PORT"] or "",
            user=settings["USER"],
        ),
        autocommit=True,
    )
    other.execute("SET lock_timeout = '200ms'")
    refused = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage.startswith("write") and not refused:
            with pytest.raises(psycopg.errors.LockNotAvailable):
                other.execute("INSERT INTO street_snaps SELECT * FROM street_snaps WHERE false")
            refused.append(stage)

    with PostgresLegacySource(legacy.conninfo) as source:
        result = legacy_archive_migrate(source=source, dry_run=False, progress=progress)

    other.close()
    assert result.written and refused
