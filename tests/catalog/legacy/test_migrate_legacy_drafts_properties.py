"""Property: for every generated legacy archive (and whatever the catalog already holds), a run
either stops on a failed check (exit 1, nothing written), or passes every check and accounts for
every legacy row exactly once per kind and status, supersedes a published row only by a
published record, leaves no dangling parent, dup_of or cover behind, and a rerun is a no-op."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from catalog.legacy.report import NOTHING_TO_IMPORT
from catalog.legacy.rows import BRANDS, ORPHAN, TABLES
from catalog.models import LegacyIdMap, Runway, RunwayImage, StreetSnap, StreetSnapImage
from tests.catalog.legacy.archive import MemoryArchive
from tests.catalog.legacy.strategies import archives
from tests.catalog.legacy.support import catalog_counts, migrate
from tests.factories import BrandFactory, RunwayFactory, StreetSnapFactory
from tests.support import rollback_each_example

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

# The status of a record a crawler wrote before the import, per kind (None: no record).
RECORD_STATUSES = st.sampled_from([None, "pending", "rejected", "published"])
existing_catalogs = st.fixed_dictionaries(
    {"runway": RECORD_STATUSES, "street": RECORD_STATUSES, "taken_source": st.booleans()}
)


def _status(status: str) -> dict:
    # A published record as review leaves it (published_at set), the others as crawled.
    return {"published": True} if status == "published" else {"status": status}


def fill_catalog(existing: dict) -> None:
    """Rows a crawler wrote before the import, with keys the generated archives also use."""
    if existing["runway"]:
        acme = BrandFactory(slug="acme")
        RunwayFactory(
            brand=acme, season_code="FW24", collection_type="couture", **_status(existing["runway"])
        )
    if existing["street"]:
        StreetSnapFactory(
            city="Oslo", year=2024, month=8, title="Look Book", **_status(existing["street"])
        )
    if existing["taken_source"]:
        StreetSnapFactory(
            source="vogue", source_url="https://example.com/2", deleted_at="2024-01-01T00:00Z"
        )


def legacy_status(archive: MemoryArchive) -> dict[tuple[str, int], str]:
    """(legacy table, id) -> the status its row is counted under."""
    status = {(BRANDS, b.id): "" for b in archive.brand_rows}
    for table in TABLES:
        records = {r.id: r.status for r in archive.record_rows.get(table.name, [])}
        status |= {(table.name, i): s for i, s in records.items()}
        for image in archive.image_rows.get(table.image_table, []):
            status[(table.image_table, image.id)] = records.get(image.record_id, ORPHAN)
    return status


def assert_no_dangling_references() -> None:
    for image in StreetSnapImage.objects.filter(parent__isnull=False).select_related("parent"):
        parent = image.parent
        assert parent.street_snap_id == image.street_snap_id
        assert not parent.is_detail and parent.parent_id is None
        assert image.deleted_at is not None or parent.deleted_at is None
    for model in (RunwayImage, StreetSnapImage):
        dup_ids = set(
            model.objects.filter(dup_of__isnull=False).values_list("dup_of_id", flat=True)
        )
        assert dup_ids <= set(model.objects.values_list("pk", flat=True))
    for model, image_model, fk in (
        (Runway, RunwayImage, "runway"),
        (StreetSnap, StreetSnapImage, "street_snap"),
    ):
        for record in model.objects.all():
            live = image_model.objects.filter(**{fk: record}, deleted_at__isnull=True)
            assert record.image_count == live.count()
            assert record.cover_id is None or live.filter(pk=record.cover_id).exists()


def assert_published_rows_superseded_only_by_published_records() -> None:
    """A superseded legacy published row stands behind a live published record of its key, so
    the show is still on the public site."""
    for model, table, key in (
        (Runway, "brand_runways", ["brand_id", "season_code", "collection_type"]),
        (StreetSnap, "street_snaps", ["city", "year", "month", "title_key"]),
    ):
        superseded = LegacyIdMap.objects.filter(legacy_table=table, outcome="superseded")
        for row in model.objects.filter(pk__in=superseded.values("new_id")):
            holder = model.objects.live().get(**{field: getattr(row, field) for field in key})
            assert holder.status == "published", (row.pk, holder.pk, holder.status)


def check(legacy, archive: MemoryArchive, existing: dict) -> None:
    legacy.reset()
    legacy.load(archive)
    with rollback_each_example():
        fill_catalog(existing)
        before = catalog_counts()

        code, out, err = migrate(legacy.conninfo)

        # Either every check passes, or the run stops on a failed check and writes nothing.
        if code != 0:
            event("stopped: nothing written")
            if "FAILED  no legacy published row is held back" in out:
                event("stopped: a published row held back by an unpublished catalog record")
            assert code == 1, out + err
            assert "\n  FAILED  " in out and "nothing written" in out
            assert catalog_counts() == before
            return
        event("imported")
        assert "FAILED" not in out and "done: " in out
        # Every legacy row is in the id map exactly once, under its kind and status.
        status = legacy_status(archive)
        mapped = Counter(
            (table, status[(table, legacy_id)])
            for table, legacy_id in LegacyIdMap.objects.values_list("legacy_table", "legacy_id")
        )
        assert mapped == Counter(
            status[key] and (key[0], status[key]) or (key[0], "") for key in status
        )
        # Imported and superseded rows are catalog rows; nothing else was added.
        inserted = LegacyIdMap.objects.filter(outcome__in=["imported", "superseded"])
        after = catalog_counts()
        for model, tables in (
            (Runway, ["brand_runways", "brand_runway_drafts"]),
            (StreetSnap, ["street_snaps", "street_snap_drafts"]),
            (RunwayImage, ["brand_runway_images", "brand_runway_draft_images"]),
            (StreetSnapImage, ["street_snap_images", "street_snap_draft_images"]),
        ):
            ids = set(inserted.filter(legacy_table__in=tables).values_list("new_id", flat=True))
            table = model._meta.db_table
            assert after[table] - before[table] == len(ids)
            assert model.objects.filter(pk__in=ids).count() == len(ids)
        assert_no_dangling_references()
        assert_published_rows_superseded_only_by_published_records()

        code, out, _ = migrate(legacy.conninfo)

        assert code == 0 and NOTHING_TO_IMPORT in out
        assert catalog_counts() == after


@settings(max_examples=25)
@given(archive=archives(), existing=existing_catalogs)
def test_every_archive_is_conserved_without_dangling_references(legacy, archive, existing):
    check(legacy, archive, existing)


@pytest.mark.slow
@settings(max_examples=150)
@given(archive=archives(max_records=8, max_images=24, invalid=True), existing=existing_catalogs)
def test_every_archive_is_conserved_without_dangling_references_thoroughly(
    legacy, archive, existing
):
    check(legacy, archive, existing)
