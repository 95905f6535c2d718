"""catalog migration 0015_keys_nfc: key columns stored before every key took NFC are put in NFC,
and where two rows then share a key, neither is lost: the second keeps its stored spelling and
the migration names both. Runs the migration's function over rows written the old way."""

import importlib
import unicodedata

import pytest
from django.apps import apps
from django.utils import timezone

from catalog.models import Brand, BrandAlias, Runway, StreetSnap
from tests.factories import BrandAliasFactory, BrandFactory, RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db

migration = importlib.import_module("catalog.migrations.0015_keys_nfc")

COMPOSED = "S\u00e3o Paulo"
DECOMPOSED = unicodedata.normalize("NFD", COMPOSED)
# The angstrom sign: NFC replaces it with "Å", which "A" and a combining ring also compose to.
ANGSTROM_SIGN, RING_ABOVE = "\u212bngstr\u00f6m", "A\u030angstr\u00f6m"


def street(city: str, title: str = "Look", **fields) -> StreetSnap:
    """A street snap with its key stored as given (written before keys took NFC: save() would
    fold the title_key)."""
    snap = StreetSnapFactory(city="placeholder", year=2024, month=9, **fields)
    StreetSnap.objects.filter(pk=snap.pk).update(city=city, title=title, title_key=title)
    return snap


def migrate(capsys) -> list[str]:
    migration.normalise_keys(apps, None)
    return [line for line in capsys.readouterr().out.splitlines() if line]


def test_keys_stored_decomposed_are_put_in_nfc(capsys):
    snap = street(DECOMPOSED, title=f"{DECOMPOSED} Look", source_url=f"https://x.test/{DECOMPOSED}")
    runway = RunwayFactory(source="vogue", source_url=f"https://x.test/{RING_ABOVE}")
    brand = BrandFactory(slug=unicodedata.normalize("NFD", "café"))
    alias = BrandAliasFactory(brand=brand)
    BrandAlias.objects.filter(pk=alias.pk).update(alias=unicodedata.normalize("NFD", "Café X"))

    out = migrate(capsys)

    snap.refresh_from_db()
    assert (snap.city, snap.title_key) == (COMPOSED, f"{COMPOSED} Look")
    assert snap.source_url == f"https://x.test/{COMPOSED}"
    assert snap.title == f"{DECOMPOSED} Look"  # display text keeps its spelling
    assert Runway.objects.get(pk=runway.pk).source_url == "https://x.test/\u00c5ngstr\u00f6m"
    assert Brand.objects.get(pk=brand.pk).slug == "caf\u00e9"
    assert BrandAlias.objects.get(pk=alias.pk).alias == "Caf\u00e9 X"
    assert out == [
        "catalog.0015_keys_nfc: put key values in NFC: brand_aliases.alias 1, "
        "brand_runways.source_url 1, brands.slug 1, street_snaps.city 1, "
        "street_snaps.source_url 1, street_snaps.title_key 1."
    ]


def test_rows_already_in_nfc_are_left_alone_and_nothing_is_said(capsys):
    snap = street(COMPOSED, source_url="https://x.test/a")
    before = StreetSnap.objects.filter(pk=snap.pk).values().get()

    assert migrate(capsys) == []
    assert StreetSnap.objects.filter(pk=snap.pk).values().get() == before


def test_a_decomposed_album_beside_its_composed_twin_keeps_its_spelling_and_is_named(capsys):
    # Given the two pending albums of the report: one month, one title, "São Paulo" two ways.
    composed = street(COMPOSED)
    decomposed = street(DECOMPOSED)

    out = migrate(capsys)

    # Then neither is lost: both stay live, the composed one holds the key, and the output
    # names the pair.
    assert StreetSnap.objects.live().count() == 2
    assert StreetSnap.objects.get(pk=composed.pk).city == COMPOSED
    assert StreetSnap.objects.get(pk=decomposed.pk).city == DECOMPOSED
    assert (
        f"catalog.0015_keys_nfc: street_snaps #{decomposed.pk} keeps city 'Sa\\u0303o Paulo', "
        f"title_key 'Look' as stored: street_snaps #{composed.pk} holds that key in NFC."
    ) in out
    assert out[-1].startswith("catalog.0015_keys_nfc: 1 row(s) kept a key as stored")


def test_of_two_spellings_to_normalise_the_earlier_row_takes_the_key():
    earlier = street(ANGSTROM_SIGN)
    later = street(RING_ABOVE)

    migration.normalise_keys(apps, None)

    assert StreetSnap.objects.get(pk=earlier.pk).city == "\u00c5ngstr\u00f6m"
    assert StreetSnap.objects.get(pk=later.pk).city == RING_ABOVE


def test_a_kept_entity_key_does_not_keep_the_rows_source_key_from_nfc(capsys):
    street(COMPOSED)
    twin = street(DECOMPOSED, source="vogue", source_url=f"https://x.test/{DECOMPOSED}")

    migrate(capsys)

    twin.refresh_from_db()
    assert (twin.city, twin.source_url) == (DECOMPOSED, f"https://x.test/{COMPOSED}")


def test_a_deleted_rows_entity_key_is_normalised_beside_a_live_holder(capsys):
    street(COMPOSED)
    deleted = street(DECOMPOSED, deleted_at=timezone.now())

    out = migrate(capsys)

    assert StreetSnap.objects.get(pk=deleted.pk).city == COMPOSED
    assert not any("keeps" in line for line in out)


def test_a_deleted_row_still_holds_its_source_key(capsys):
    # Deleting is terminal for an article: the constraint counts deleted rows, and so does
    # the migration.
    url = f"https://x.test/{COMPOSED}"
    gone = RunwayFactory(source="vogue", source_url=url, deleted_at=timezone.now())
    live = RunwayFactory(source="vogue")
    Runway.objects.filter(pk=live.pk).update(source_url=unicodedata.normalize("NFD", url))

    out = migrate(capsys)

    assert Runway.objects.get(pk=live.pk).source_url == unicodedata.normalize("NFD", url)
    assert any(f"brand_runways #{live.pk} keeps source" in line for line in out)
    assert any(f"brand_runways #{gone.pk} holds" in line for line in out)


def test_two_brand_slugs_that_become_one_keep_both_brands(capsys):
    composed = BrandFactory(slug="caf\u00e9")
    decomposed = BrandFactory(slug="cafe\u0301")

    out = migrate(capsys)

    assert Brand.objects.get(pk=composed.pk).slug == "caf\u00e9"
    assert Brand.objects.get(pk=decomposed.pk).slug == "cafe\u0301"
    assert any(f"brands #{decomposed.pk} keeps slug" in line for line in out)
