"""The catalog's invariants as the database enforces them. Portable: CI runs these on
PostgreSQL and on SQLite."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from catalog.keys import fold_title
from catalog.models import BrandAlias, Runway, StreetSnap, StreetSnapImage
from tests.factories import (
    BrandAliasFactory,
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)

pytestmark = pytest.mark.django_db


class TestSourceKey:
    def test_many_rows_without_source_url_coexist(self):
        RunwayFactory.create_batch(3, source="", source_url="")
        StreetSnapFactory.create_batch(3, source="vogue", source_url="")

        assert Runway.objects.filter(source_url="").count() == 3
        assert StreetSnap.objects.filter(source_url="").count() == 3

    @pytest.mark.parametrize("factory", [RunwayFactory, StreetSnapFactory])
    def test_two_live_rows_cannot_share_a_source_key(self, factory):
        factory(source="vogue", source_url="https://example.com/a")

        with pytest.raises(IntegrityError), transaction.atomic():
            factory(source="vogue", source_url="https://example.com/a")

    @pytest.mark.parametrize("factory", [RunwayFactory, StreetSnapFactory])
    def test_a_deleted_row_keeps_its_source_key(self, factory):
        factory(source="vogue", source_url="https://example.com/a", deleted_at=timezone.now())

        with pytest.raises(IntegrityError), transaction.atomic():
            factory(source="vogue", source_url="https://example.com/a")

    def test_same_url_from_another_source_is_another_article(self):
        RunwayFactory(source="vogue", source_url="https://example.com/a")
        RunwayFactory(source="wwd", source_url="https://example.com/a")

        assert Runway.objects.count() == 2

    def test_the_source_key_is_a_partial_constraint(self):
        constraint = next(c for c in Runway._meta.constraints if c.name == "runway_source_key")

        assert constraint.condition is not None


class TestEntityKey:
    def test_runway_entity_key_is_unique_among_live_rows(self):
        live = RunwayFactory(season_code="FW24", collection_type="couture")

        with pytest.raises(IntegrityError), transaction.atomic():
            RunwayFactory(brand=live.brand, season_code="FW24", collection_type="couture")

    def test_runway_entity_key_allows_other_collection_types(self):
        live = RunwayFactory(season_code="FW24", collection_type="couture")
        RunwayFactory(brand=live.brand, season_code="FW24", collection_type="menswear")
        RunwayFactory(season_code="FW24", collection_type="couture")  # another brand

        assert Runway.objects.count() == 3

    def test_a_soft_deleted_runway_frees_its_entity_key_but_not_its_source_key(self):
        old = RunwayFactory(
            season_code="SS25",
            collection_type="resort",
            source="vogue",
            source_url="https://example.com/old",
        )
        old.deleted_at = timezone.now()
        old.save()

        new = RunwayFactory(brand=old.brand, season_code="SS25", collection_type="resort")
        with pytest.raises(IntegrityError), transaction.atomic():
            RunwayFactory(source="vogue", source_url="https://example.com/old")

        assert new.pk != old.pk

    def test_street_entity_key_is_unique_among_live_rows(self):
        StreetSnapFactory(city="Paris", year=2026, month=3, title="Day One")

        with pytest.raises(IntegrityError), transaction.atomic():
            StreetSnapFactory(city="Paris", year=2026, month=3, title="Day One")

    def test_street_titles_differing_only_in_whitespace_collide(self):
        StreetSnapFactory(city="Paris", year=2026, month=3, title="Street  Style\tDay One ")

        with pytest.raises(IntegrityError), transaction.atomic():
            StreetSnapFactory(city="Paris", year=2026, month=3, title=" Street Style\nDay One")

    def test_street_month_is_part_of_the_key(self):
        StreetSnapFactory(city="Paris", year=2026, month=3, title="Day One")
        StreetSnapFactory(city="Paris", year=2026, month=9, title="Day One")

        assert StreetSnap.objects.count() == 2

    def test_a_soft_deleted_street_snap_frees_its_entity_key(self):
        StreetSnapFactory(city="Milan", year=2025, month=2, title="A", deleted_at=timezone.now())
        StreetSnapFactory(city="Milan", year=2025, month=2, title="A")

        assert StreetSnap.objects.live().count() == 1

    def test_title_key_follows_title_on_partial_saves(self):
        snap = StreetSnapFactory(title="Old")

        snap.title = "  New   title "
        snap.save(update_fields=["title"])
        snap.refresh_from_db()

        assert snap.title_key == "New title"


class TestPeriod:
    """What tells two albums of one title apart on an editor's page."""

    def test_a_runway_is_from_its_season(self):
        assert RunwayFactory(season_code="FW24").period() == "FW24"

    @pytest.mark.parametrize(("month", "period"), [(3, "2026-03"), (11, "2026-11"), (0, "2026")])
    def test_a_street_album_is_from_its_month_or_its_year_when_that_is_unknown(self, month, period):
        assert StreetSnap(year=2026, month=month).period() == period


class TestStatus:
    def test_a_new_record_is_pending(self):
        runway = RunwayFactory()
        snap = StreetSnapFactory()

        assert runway.status == Runway.Status.PENDING
        assert snap.status == StreetSnap.Status.PENDING

    def test_the_database_default_is_pending_too(self):
        # A row written by raw SQL that forgets the status stays invisible (fail closed).
        brand = BrandFactory()
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO brand_runways (brand_id, season_code, season, year,"
                " collection_type, title, description, image_count, reviewer, reject_reason,"
                " content_checksum, version, created_at, updated_at)"
                " VALUES (%s, 'FW99', '', 2099, 'couture', '', '', 0, '', '', '', 1, %s, %s)",
                [brand.pk, timezone.now(), timezone.now()],
            )

        raw = Runway.objects.get(season_code="FW99")
        assert raw.status == "pending"
        assert raw.source == "" and raw.source_url == ""

    @pytest.mark.parametrize("factory", [RunwayFactory, StreetSnapFactory])
    def test_the_database_refuses_an_unknown_status(self, factory):
        record = factory()

        with pytest.raises(IntegrityError), transaction.atomic():
            type(record).objects.filter(pk=record.pk).update(status="approved")

    def test_the_database_refuses_month_13(self):
        with pytest.raises(IntegrityError), transaction.atomic():
            StreetSnapFactory(month=13)

    @pytest.mark.parametrize(
        ("factory", "fields", "message"),
        [
            (StreetSnapFactory, {"month": 13}, "The month is a number from 1 to 12"),
            (StreetSnapFactory, {"status": "approved"}, "pending, published or rejected"),
            (RunwayFactory, {"status": "approved"}, "pending, published or rejected"),
        ],
    )
    def test_model_validation_says_in_words_what_a_check_refuses(self, factory, fields, message):
        record = factory.build(**fields)

        with pytest.raises(ValidationError) as refused:
            record.validate_constraints()

        assert message in str(refused.value)
        assert "Constraint" not in str(refused.value)


class TestStreetDetail:
    def test_a_detail_needs_a_parent(self):
        snap = StreetSnapFactory()

        with pytest.raises(IntegrityError), transaction.atomic():
            StreetSnapImageFactory(street_snap=snap, is_detail=True, parent=None)

    def test_a_main_image_has_no_parent(self):
        main = StreetSnapImageFactory()

        with pytest.raises(IntegrityError), transaction.atomic():
            StreetSnapImageFactory(street_snap=main.street_snap, parent=main, is_detail=False)

    def test_a_detail_with_its_parent_is_accepted(self):
        main = StreetSnapImageFactory()
        detail = StreetSnapImageFactory(street_snap=main.street_snap, parent=main)

        assert detail.is_detail
        assert list(main.details.all()) == [detail]
        assert StreetSnapImage.objects.filter(is_detail=True).count() == 1


class TestBrandAlias:
    def test_aliases_are_unique_whatever_their_case(self):
        BrandAliasFactory(alias="Acne Studios")

        with pytest.raises(IntegrityError), transaction.atomic():
            BrandAliasFactory(alias="ACNE STUDIOS")

    def test_a_brand_has_several_aliases(self):
        brand = BrandFactory()
        BrandAliasFactory(brand=brand, alias="Acne")
        BrandAliasFactory(brand=brand, alias="Acne Studios")

        assert BrandAlias.objects.filter(brand=brand).count() == 2


class TestPhashBands:
    @pytest.mark.parametrize(
        "unsigned",
        [0, 1, 0xFFFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0x0123_4567_89AB_CDEF],
    )
    def test_bands_are_the_four_16_bit_slices_of_the_unsigned_hash(self, unsigned):
        signed = unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned

        image = RunwayImageFactory(phash=signed)
        image.refresh_from_db()

        expected = [(unsigned >> shift) & 0xFFFF for shift in (48, 32, 16, 0)]
        got = [image.phash_band0, image.phash_band1, image.phash_band2, image.phash_band3]
        assert got == expected

    def test_no_hash_no_bands(self):
        image = RunwayImageFactory(phash=None)
        image.refresh_from_db()

        assert image.phash_band0 is None and image.phash_band3 is None


@given(st.text())
def test_fold_title_is_idempotent_and_has_no_runs_of_whitespace(title):
    folded = fold_title(title)

    assert fold_title(folded) == folded
    assert folded == folded.strip()
    assert "  " not in folded
    assert fold_title(None) == ""
