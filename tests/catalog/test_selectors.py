"""catalog.selectors: resolving the brand a crawler names; a live record by its entity key."""

import pytest
from django.utils import timezone

from catalog import selectors
from catalog.models import Runway, StreetSnap
from tests.factories import BrandAliasFactory, BrandFactory, RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("sent", ["maison-x", "MAISON-X", "Maison X", "  maison   x ", "MX", "mx"])
def test_a_brand_resolves_by_slug_or_alias(sent):
    brand = BrandFactory(name="Maison X", slug="maison-x")
    BrandAliasFactory(brand=brand, alias="Mx")

    assert selectors.brand_resolve(name=sent) == brand


@pytest.mark.parametrize("sent", ["", "   ", "Maison Y", "maison"])
def test_an_unknown_brand_resolves_to_none(sent):
    BrandFactory(name="Maison X", slug="maison-x")

    assert selectors.brand_resolve(name=sent) is None


def test_the_brand_lookup_is_two_queries_at_most(django_assert_max_num_queries):
    BrandAliasFactory(alias="Known Alias")

    with django_assert_max_num_queries(2):
        assert selectors.brand_resolve(name="known alias") is not None


def test_a_street_album_is_found_by_its_editable_fields_its_title_folded():
    snap = StreetSnapFactory(city="Paris", year=2026, month=3, title="Street  Style Day")
    StreetSnapFactory(city="Paris", year=2026, month=4, title="Street Style Day")

    found = selectors.record_by_entity_key(
        model=StreetSnap,
        values={"city": "Paris", "year": 2026, "month": 3, "title": " Street Style\tDay "},
    )

    assert found == snap


def test_a_deleted_runway_holds_no_entity_key():
    runway = RunwayFactory(season_code="FW24", collection_type="couture")
    key = {name: getattr(runway, name) for name in Runway.entity_key_fields}
    assert selectors.record_by_entity_key(model=Runway, values=key) == runway

    Runway.objects.filter(pk=runway.pk).update(deleted_at=timezone.now())

    assert selectors.record_by_entity_key(model=Runway, values=key) is None
