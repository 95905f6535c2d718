"""The whole import (plan, write, database checks, commit or roll back) fed from an in-memory
legacy archive, so it runs on the SQLite pass too: there the writer uses bulk_create."""

from collections import Counter

import pytest
from django.utils import timezone
from hypothesis import given, settings

from catalog import selectors
from catalog.legacy import state as catalog_state
from catalog.legacy import writer
from catalog.legacy.plan import INSERTED, LegacyRef
from catalog.legacy.rows import APPROVED, PENDING, RUNWAY_DRAFTS, RUNWAYS, STREET_DRAFTS, STREETS
from catalog.legacy.services import legacy_archive_migrate
from catalog.models import Brand, LegacyIdMap, Runway, StreetSnap, StreetSnapImage
from tests.catalog.legacy.archive import archive, brand, image, record
from tests.catalog.legacy.strategies import archives
from tests.factories import BrandFactory, RunwayFactory, StreetSnapFactory
from tests.support import rollback_each_example

pytestmark = pytest.mark.django_db


def test_a_run_writes_the_plan_and_a_rerun_writes_nothing():
    legacy = archive(
        record(STREETS, 1, title="A  B", cover="images/2.jpg"),
        record(STREET_DRAFTS, 2, PENDING, title="A B"),
        record(STREET_DRAFTS, 3, APPROVED, title="A B"),
        record(RUNWAYS, 4),
        images=[
            (STREETS, image(1, 1)),
            (STREETS, image(2, 1, is_detail=True, parent_id=1)),
            (STREETS, image(3, 1, is_detail=True, parent_id=404, dup_of=1)),
        ],
    )

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert result.ok and result.written, result.failures
    snap = StreetSnap.objects.get(deleted_at__isnull=True)
    assert (snap.title, snap.title_key, snap.image_count) == ("A  B", "A B", 3)
    main, detail, downgraded = snap.images.order_by("sort_order")
    assert snap.cover_id == detail.pk
    assert (detail.parent_id, downgraded.parent_id, downgraded.dup_of_id) == (
        main.pk,
        None,
        main.pk,
    )
    assert StreetSnap.objects.filter(deleted_at__isnull=False, status="pending").count() == 1
    assert Runway.objects.get().brand.slug == "acme"

    again = legacy_archive_migrate(source=legacy, dry_run=False)

    assert again.ok and again.nothing_to_do and not again.written
    assert StreetSnap.objects.count() == 2


def test_a_failed_check_rolls_the_whole_run_back(monkeypatch):
    legacy = archive(record(STREETS, 1), images=[(STREETS, image(1, 1)), (STREETS, image(2, 1))])
    flush = writer._Writer._flush_images

    def lose_an_image(self, table, batch):  # a writer bug: the last image of a batch is lost
        flush(self, table, batch[:-1])

    monkeypatch.setattr(writer._Writer, "_flush_images", lose_an_image)

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.ok and not result.written
    assert any("images: legacy rows" in failure for failure in result.failures)
    assert StreetSnap.objects.count() == StreetSnapImage.objects.count() == 0
    assert LegacyIdMap.objects.count() == 0


@settings(max_examples=25)
@given(legacy=archives())
def test_every_written_plan_passes_its_database_checks(legacy):
    with rollback_each_example():
        result = legacy_archive_migrate(source=legacy, dry_run=False)

        assert result.written == (not result.plan.blocked), result.failures
        assert result.ok == result.written
        if result.written:
            inserted = LegacyIdMap.objects.filter(outcome__in=INSERTED)
            assert inserted.count() == sum(
                t.imported + t.superseded for t in result.plan.tallies.values()
            )
            per_table: Counter = Counter()
            for (table, _), n in legacy.counts().items():
                per_table[table] += n
            mapped = Counter(LegacyIdMap.objects.values_list("legacy_table", flat=True))
            assert mapped == per_table


@pytest.mark.parametrize(
    "corrupt, failed_check",
    [
        ({"is_detail": True, "parent_id": "detail"}, "no detail of a detail"),
        ({"dup_of_id": 10**9}, "no dangling parent or dup_of"),
        ({"deleted_at": "2024-01-01T00:00Z"}, "image_count = live images"),
    ],
)
def test_the_database_checks_catch_what_a_writer_bug_would_leave(
    monkeypatch, corrupt, failed_check
):
    legacy = archive(
        record(STREETS, 1),
        images=[
            (STREETS, image(1, 1)),
            (STREETS, image(2, 1, is_detail=True, parent_id=1)),
            (STREETS, image(3, 1)),
        ],
    )
    set_covers = writer._Writer.set_covers

    def buggy_set_covers(self):  # then corrupts image 3 the way a writer bug would
        set_covers(self)
        ids = self.image_ids[STREETS.image_table]
        values = {k: ids[2] if v == "detail" else v for k, v in corrupt.items()}
        StreetSnapImage.objects.filter(pk=ids[3]).update(**values)

    monkeypatch.setattr(writer._Writer, "set_covers", buggy_set_covers)

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.written
    assert [f for f in result.failures if failed_check in f], result.failures
    assert StreetSnapImage.objects.count() == 0


def test_an_approved_draft_is_never_accounted_for_by_another_show():
    # beta FW24 (published) is skipped: acme FW24 holds its source key. Its approved draft has
    # no published record of its key, so the run stops.
    legacy = archive(
        record(RUNWAYS, 1, brand_id=1, source="vogue", source_url="u"),
        record(RUNWAYS, 2, brand_id=2, source="vogue", source_url="u"),
        record(RUNWAY_DRAFTS, 3, APPROVED, brand_id=2),
    )

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.written
    assert any("every approved draft has a published counterpart" in f for f in result.failures)
    assert Runway.objects.count() == LegacyIdMap.objects.count() == 0


def test_an_approved_draft_of_a_show_taken_down_since_maps_to_the_deleted_show():
    # Promoted, then soft-deleted by an editor: the show is imported soft-deleted, and the
    # draft's content is accounted for by it (the database check included).
    legacy = archive(
        record(RUNWAYS, 1, brand_id=1, deleted=True),
        record(RUNWAY_DRAFTS, 2, APPROVED, brand_id=1),
    )

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert result.written, result.failures
    show = Runway.objects.get()
    assert show.deleted_at is not None and show.status == "published"
    draft = LegacyIdMap.objects.get(legacy_table=RUNWAY_DRAFTS.name, legacy_id=2)
    assert draft.new_id == show.pk


def test_the_database_check_compares_the_counterparts_entity_key(monkeypatch):
    legacy = archive(
        record(RUNWAYS, 1, brand_id=1),
        record(RUNWAYS, 2, brand_id=2),
        record(STREETS, 3, title="A"),
        record(STREETS, 4, title="B"),
        record(RUNWAY_DRAFTS, 5, APPROVED, brand_id=1),
        record(STREET_DRAFTS, 6, APPROVED, title="A"),
    )
    stand_in = writer._Writer._stand_in

    def another_show(self, ref):  # a writer bug: each approved draft mapped to the other show
        swap = {(RUNWAYS.name, 1): 2, (STREETS.name, 3): 4}
        if isinstance(ref, LegacyRef) and (ref.table, ref.id) in swap:
            ref = LegacyRef(ref.table, swap[(ref.table, ref.id)])
        return stand_in(self, ref)

    monkeypatch.setattr(writer._Writer, "_stand_in", another_show)

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.written
    [failure] = [f for f in result.failures if "approved draft" in f]
    assert "brand_runway_drafts: 1 approved drafts" in failure
    assert "street_snap_drafts: 1 approved drafts" in failure
    assert Runway.objects.count() == LegacyIdMap.objects.count() == 0


def test_the_database_check_wants_a_live_published_counterpart(monkeypatch):
    legacy = archive(record(STREETS, 1), record(STREET_DRAFTS, 2, APPROVED))
    set_covers = writer._Writer.set_covers

    def unpublish(self):  # a writer bug: the counterpart is written pending
        set_covers(self)
        StreetSnap.objects.update(status=PENDING)

    monkeypatch.setattr(writer._Writer, "set_covers", unpublish)

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.written
    assert any("street_snap_drafts: 1 approved drafts" in f for f in result.failures)


# --- Keys in normal form (catalog.keys) ------------------------------------------------------


def test_legacy_values_are_stored_in_the_normal_form_ingest_looks_up():
    legacy = archive(
        record(
            RUNWAYS,
            1,
            season_code="fw24",
            collection_type="Ready to Wear",
            source="Vogue",
            source_url=" https://example.com/shows/acme-fw24",
            title="Acme  FW24",
        ),
        record(STREETS, 2, city=" New  York ", source="TheImpression", source_url="u"),
    )

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert result.written, result.failures
    runway = Runway.objects.get()
    assert (runway.season_code, runway.collection_type, runway.source, runway.source_url) == (
        "FW24",
        "ready-to-wear",
        "vogue",
        "https://example.com/shows/acme-fw24",
    )
    assert runway.title == "Acme  FW24"  # titles are stored as given
    # What the next crawl of this show looks up finds it (source key, then entity key).
    assert (
        selectors.record_by_source_key(model=Runway, source="vogue", source_url=runway.source_url)
        == runway
    )
    assert (
        selectors.runway_by_entity_key(
            brand=runway.brand, season_code="FW24", collection_type="ready-to-wear"
        )
        == runway
    )
    snap = StreetSnap.objects.get()
    assert (snap.city, snap.source) == ("New York", "theimpression")


def test_legacy_brand_slugs_are_matched_and_stored_as_ingest_looks_them_up():
    beta = BrandFactory(slug="beta")
    legacy = archive(record(RUNWAYS, 1, brand_id=1), record(RUNWAYS, 2, brand_id=2))
    legacy.brand_rows = [brand(1, "ACME"), brand(2, "Beta")]

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert result.written, result.failures
    acme = selectors.brand_resolve(name="ACME")
    assert acme is not None and acme.slug == "acme"
    assert Brand.objects.count() == 2
    assert set(Runway.objects.values_list("brand_id", flat=True)) == {acme.pk, beta.pk}


def test_legacy_brand_slugs_that_are_one_slug_once_lower_cased_stop_the_run():
    legacy = archive(record(RUNWAYS, 1, brand_id=1))
    legacy.brand_rows = [brand(1, "acme"), brand(2, "Acme")]

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.written
    assert any("brand slugs fit the catalog once lower-cased" in f for f in result.failures)
    assert Brand.objects.count() == Runway.objects.count() == 0


def test_a_legacy_row_is_superseded_by_a_catalog_record_of_its_key_in_another_spelling():
    acme = BrandFactory(slug="acme")
    crawled = RunwayFactory(
        brand=acme, season_code="FW24", collection_type="ready-to-wear", published=True
    )
    legacy = archive(record(RUNWAYS, 1, season_code="fw24", collection_type="Ready to Wear"))

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert result.written, result.failures
    imported = Runway.objects.exclude(pk=crawled.pk).get()
    assert imported.deleted_at is not None
    assert LegacyIdMap.objects.get(legacy_table=RUNWAYS.name).outcome == "superseded"
    assert [e.reason for e in result.plan.superseded] == [
        f"entity key is held by existing runway #{crawled.pk} (published)"
    ]


def test_a_legacy_source_in_another_case_is_skipped_for_a_deleted_catalog_record():
    # Deleting is terminal for an article: the legacy copy of a deleted crawl stays out.
    deleted = StreetSnapFactory(
        source="vogue", source_url="https://example.com/a", deleted_at=timezone.now()
    )
    legacy = archive(record(STREETS, 1, source="Vogue", source_url="https://example.com/a"))

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert result.written, result.failures
    assert StreetSnap.objects.get() == deleted
    assert LegacyIdMap.objects.get(legacy_table=STREETS.name).new_id == deleted.pk


def test_catalog_keys_are_read_in_normal_form():
    # A row written before every writer normalised (an editor's "fw24", a city with a stray
    # space) still holds its key against the legacy rows.
    old = RunwayFactory(season_code="fw24", collection_type="Ready to Wear")
    snap = StreetSnapFactory(city="Oslo ", year=2024, month=8, title="Look  Book")
    gone = RunwayFactory(source="Vogue", source_url="u", deleted_at=timezone.now())

    state = catalog_state.read_catalog_state()

    assert state.live_keys["runway"][(old.brand_id, "FW24", "ready-to-wear")].id == old.pk
    assert state.live_keys["street"][("Oslo", 2024, 8, "Look Book")].id == snap.pk
    assert state.source_keys["runway"][("vogue", "u")].id == gone.pk


def test_an_unnormalisable_season_code_stops_the_run_and_writes_nothing():
    legacy = archive(record(RUNWAYS, 1), record(RUNWAYS, 2, season_code=""))

    result = legacy_archive_migrate(source=legacy, dry_run=False)

    assert not result.written
    assert any("every row fits the catalog" in failure for failure in result.failures)
    assert Runway.objects.count() == LegacyIdMap.objects.count() == 0


def test_published_rows_show_once_their_bytes_are_public(public_copies):
    # The legacy objects are already in the (private) store, under their own keys.
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from catalog.models import MediaChange
    from catalog.visibility import media_changes_process
    from publicapi.models import PublicRunway

    legacy = archive(
        record(RUNWAYS, 1),
        record(RUNWAY_DRAFTS, 2, PENDING),
        images=[(RUNWAYS, image(1, 1)), (RUNWAY_DRAFTS, image(2, 2))],
    )
    result = legacy_archive_migrate(source=legacy, dry_run=False)
    assert result.ok and result.written, result.failures
    published = Runway.objects.get(status="published")
    for key in published.images.values_list("storage_key", flat=True):
        default_storage.save(key, ContentFile(b"\xff\xd8legacy"))

    # A change per published record, written with them; hidden until the job moves its bytes.
    assert list(MediaChange.objects.values_list("record_id", flat=True)) == [published.pk]
    assert not PublicRunway.objects.exists()
    media_changes_process()
    assert list(PublicRunway.objects.values_list("id", flat=True)) == [published.pk]
    assert (public_copies / published.images.get().storage_key).exists()
