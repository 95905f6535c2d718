"""catalog.selectors: resolving the brand a crawler names."""

import pytest

from catalog import selectors
from tests.factories import BrandAliasFactory, BrandFactory

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
