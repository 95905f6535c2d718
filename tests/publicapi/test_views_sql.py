"""The public_* views: exactly the published, live rows and the live images of those rows,
through explicit public columns that match the unmanaged models. Portable (PostgreSQL and
SQLite)."""

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import RunPython, RunSQL
from django.utils import timezone
from hypothesis import settings as machine_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from catalog.models import Runway, RunwayImage, StreetSnap, StreetSnapImage
from publicapi.models import (
    PublicBrand,
    PublicRunway,
    PublicRunwayImage,
    PublicStreetSnap,
    PublicStreetSnapImage,
)
from publicapi.sql import BY_MIGRATION, views_for
from tests.factories import (
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)
from tests.support import rollback_each_example

pytestmark = pytest.mark.django_db

PUBLIC_MODELS = [
    PublicBrand,
    PublicRunway,
    PublicRunwayImage,
    PublicStreetSnap,
    PublicStreetSnapImage,
]
PRIVATE_COLUMNS = {
    "reviewer",
    "reviewed_at",
    "reject_reason",
    "ingest_job_id",
    "content_checksum",
    "status",
    "deleted_at",
    "source",
    "source_url",
    "version",
    "sha1",
    "original_url",
    "is_duplicate",
    "dup_of_id",
    "phash",
}


def view_columns(view: str) -> list[str]:
    with connection.cursor() as cursor:
        return [c.name for c in connection.introspection.get_table_description(cursor, view)]


# Columns a view offers only to filter on, which no model field (and so no serializer) reads.
FILTER_ONLY_COLUMNS = {
    "public_brand_runways": ["search"],
    "public_street_snaps": ["search"],
}


@pytest.mark.parametrize("model", PUBLIC_MODELS, ids=lambda m: m._meta.db_table)
def test_each_view_has_exactly_its_models_columns(model):
    table = model._meta.db_table
    model_columns = sorted(
        [field.column for field in model._meta.concrete_fields] + FILTER_ONLY_COLUMNS.get(table, [])
    )

    assert sorted(view_columns(table)) == model_columns


def test_the_search_and_hash_views_have_only_their_columns():
    assert view_columns("public_brand_names") == ["brand_id", "name", "search"]
    assert view_columns("public_image_hashes") == [
        "kind",
        "id",
        "record_id",
        "phash",
        "phash_algorithm",
        *(f"phash_band{n}" for n in range(4)),
    ]


@pytest.mark.parametrize("model", PUBLIC_MODELS, ids=lambda m: m._meta.db_table)
def test_no_view_exposes_review_job_or_checksum_columns(model):
    assert not PRIVATE_COLUMNS & set(view_columns(model._meta.db_table))


def test_every_view_migration_names_its_views_for_restoring():
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    own = {name for app, name in loader.disk_migrations if app == "publicapi"}
    with_sql = {
        name
        for name in own
        if any(
            isinstance(op, RunSQL | RunPython)
            for op in loader.disk_migrations["publicapi", name].operations
        )
    }
    (newest,) = loader.graph.leaf_nodes("publicapi")

    assert set(BY_MIGRATION) == with_sql
    assert views_for(own) is BY_MIGRATION[newest[1]]
    assert views_for(set()) == []


def test_the_views_are_views_and_the_models_unmanaged():
    with connection.cursor() as cursor:
        tables = {t.name: t.type for t in connection.introspection.get_table_list(cursor)}

    for model in PUBLIC_MODELS:
        assert model._meta.managed is False
        assert tables[model._meta.db_table] == "v"


def test_a_runway_is_public_only_while_published_and_live():
    runway = RunwayFactory()
    image = RunwayImageFactory(runway=runway)
    assert not PublicRunway.objects.exists()

    Runway.objects.filter(pk=runway.pk).update(status="published", published_at=timezone.now())
    # Published, but its bytes are not public yet (catalog.visibility): not shown.
    assert not PublicRunway.objects.exists()
    Runway.objects.filter(pk=runway.pk).update(bytes_public=True)
    assert list(PublicRunway.objects.values_list("id", flat=True)) == [runway.pk]
    assert list(PublicRunwayImage.objects.values_list("id", flat=True)) == [image.pk]

    Runway.objects.filter(pk=runway.pk).update(status="rejected")
    assert not PublicRunway.objects.exists()
    assert not PublicRunwayImage.objects.exists()


def test_a_pending_runway_does_not_make_its_brand_public():
    brand = BrandFactory()
    RunwayFactory(brand=brand)
    assert not PublicBrand.objects.exists()

    RunwayFactory(brand=brand, published=True)
    public = PublicBrand.objects.get()
    assert (public.pk, public.slug, public.runway_count) == (brand.pk, brand.slug, 1)


def test_a_detail_of_a_deleted_parent_is_shown_as_a_main_image():
    snap = StreetSnapFactory(published=True)
    main = StreetSnapImageFactory(street_snap=snap)
    detail = StreetSnapImageFactory(street_snap=snap, parent=main)
    assert PublicStreetSnapImage.objects.get(pk=detail.pk).parent_id == main.pk

    StreetSnapImage.objects.filter(pk=main.pk).update(deleted_at=timezone.now())

    shown = PublicStreetSnapImage.objects.get()
    assert (shown.pk, shown.is_detail, shown.parent_id) == (detail.pk, False, None)


def test_a_cover_from_another_album_or_deleted_is_not_shown():
    runway = RunwayFactory(published=True)
    own = RunwayImageFactory(runway=runway)
    foreign = RunwayImageFactory()

    Runway.objects.filter(pk=runway.pk).update(cover=foreign)
    assert PublicRunway.objects.get().cover_id is None

    Runway.objects.filter(pk=runway.pk).update(cover=own)
    assert PublicRunway.objects.get().cover_id == own.pk

    RunwayImage.objects.filter(pk=own.pk).update(deleted_at=timezone.now())
    assert PublicRunway.objects.get().cover_id is None


class PublicViewsMachine(RuleBasedStateMachine):
    """Random create / publish / reject / delete / delete-image / set-cover / attach-detail
    sequences; after every step each view holds exactly what the base tables say is public."""

    runways = Bundle("runways")
    snaps = Bundle("snaps")
    runway_images = Bundle("runway_images")
    snap_images = Bundle("snap_images")

    def __init__(self):
        super().__init__()
        self._example = rollback_each_example()
        self._example.__enter__()
        self.brands = BrandFactory.create_batch(3)

    def teardown(self):
        self._example.__exit__(None, None, None)

    # --- writes ---------------------------------------------------------------------------
    # Start from one album of each kind so every rule has something to act on.
    @initialize(target=runway_images, published=st.booleans())
    def first_runway(self, published):
        return RunwayImageFactory(runway=RunwayFactory(brand=self.brands[0], published=published))

    @initialize(target=snap_images, published=st.booleans())
    def first_snap(self, published):
        return StreetSnapImageFactory(street_snap=StreetSnapFactory(published=published))

    @rule(target=runways, brand=st.integers(0, 2), published=st.booleans())
    def create_runway(self, brand, published):
        return RunwayFactory(brand=self.brands[brand], published=published)

    @rule(target=snaps, published=st.booleans())
    def create_snap(self, published):
        return StreetSnapFactory(published=published)

    @rule(target=runway_images, runway=runways)
    def add_runway_image(self, runway):
        return RunwayImageFactory(runway=runway)

    @rule(target=snap_images, snap=snaps)
    def add_snap_image(self, snap):
        return StreetSnapImageFactory(street_snap=snap)

    @rule(target=snap_images, parent=snap_images)
    def add_detail(self, parent):
        parent.refresh_from_db()
        # Deliberately also under a detail or a deleted image: the view must cope.
        return StreetSnapImageFactory(street_snap=parent.street_snap, parent=parent)

    @rule(record=st.one_of(runways, snaps))
    def publish(self, record):
        type(record).objects.filter(pk=record.pk).update(
            status="published", published_at=timezone.now()
        )

    @rule(record=st.one_of(runways, snaps), public=st.booleans())
    def bytes_moved(self, record, public):
        type(record).objects.filter(pk=record.pk).update(bytes_public=public)

    @rule(record=st.one_of(runways, snaps))
    def reject(self, record):
        type(record).objects.filter(pk=record.pk).update(status="rejected")

    @rule(record=st.one_of(runways, snaps))
    def back_to_pending(self, record):
        type(record).objects.filter(pk=record.pk).update(status="pending")

    @rule(record=consumes(runways))
    def delete_runway(self, record):
        Runway.objects.filter(pk=record.pk).update(deleted_at=timezone.now())

    @rule(record=consumes(snaps))
    def delete_snap(self, record):
        StreetSnap.objects.filter(pk=record.pk).update(deleted_at=timezone.now())

    @rule(image=st.one_of(runway_images, snap_images))
    def delete_image(self, image):
        type(image).objects.filter(pk=image.pk).update(deleted_at=timezone.now())

    @rule(runway=runways, image=runway_images)
    def set_runway_cover(self, runway, image):
        Runway.objects.filter(pk=runway.pk).update(cover=image)

    @rule(snap=snaps, image=snap_images)
    def set_snap_cover(self, snap, image):
        StreetSnap.objects.filter(pk=snap.pk).update(cover=image)

    # --- what the views must show ----------------------------------------------------------
    @invariant()
    def runways_match(self):
        public = {
            r.pk: r
            for r in Runway.objects.filter(status="published", deleted_at=None, bytes_public=True)
        }
        assert set(PublicRunway.objects.values_list("id", flat=True)) == set(public)

        live_images = RunwayImage.objects.filter(runway__in=list(public), deleted_at=None)
        assert set(PublicRunwayImage.objects.values_list("id", flat=True)) == set(
            live_images.values_list("id", flat=True)
        )
        own_live = {(i.runway_id, i.pk) for i in live_images}
        for row in PublicRunway.objects.all():
            runway = public[row.pk]
            expected = runway.cover_id if (runway.pk, runway.cover_id) in own_live else None
            assert row.cover_id == expected

    @invariant()
    def brands_match(self):
        counts: dict[int, int] = {}
        for runway in Runway.objects.filter(status="published", deleted_at=None, bytes_public=True):
            counts[runway.brand_id] = counts.get(runway.brand_id, 0) + 1
        assert dict(PublicBrand.objects.values_list("id", "runway_count")) == counts

    @invariant()
    def street_snaps_match(self):
        public = {
            s.pk: s
            for s in StreetSnap.objects.filter(
                status="published", deleted_at=None, bytes_public=True
            )
        }
        assert set(PublicStreetSnap.objects.values_list("id", flat=True)) == set(public)

        live = {
            i.pk: i
            for i in StreetSnapImage.objects.filter(street_snap__in=list(public), deleted_at=None)
        }
        shown = {i.pk: i for i in PublicStreetSnapImage.objects.all()}
        assert set(shown) == set(live)
        for pk, image in shown.items():
            parent = live.get(live[pk].parent_id)
            parent_ok = parent is not None and not parent.is_detail
            assert image.parent_id == (parent.pk if parent_ok else None)
            assert image.is_detail == parent_ok
        for row in PublicStreetSnap.objects.all():
            cover = live.get(public[row.pk].cover_id)
            expected = cover.pk if cover and cover.street_snap_id == row.pk else None
            assert row.cover_id == expected


def test_views_show_exactly_the_public_rows(db):
    run_state_machine_as_test(
        PublicViewsMachine,
        settings=machine_settings(stateful_step_count=25),
    )
