"""Every model the project owns has a factory in tests.factories, and each factory makes a
row the database accepts (constraints included)."""

import inspect

import factory
import pytest
from django.apps import apps

from tests import factories

OWN_APPS = ("catalog", "ingest", "review")

FACTORIES = [
    member
    for _, member in inspect.getmembers(factories, inspect.isclass)
    if issubclass(member, factory.django.DjangoModelFactory)
    and member is not factory.django.DjangoModelFactory
]


def test_every_model_the_project_owns_has_a_factory():
    models = {
        model
        for label in OWN_APPS
        for model in apps.get_app_config(label).get_models()
        if model._meta.managed
    }

    covered = {f._meta.model for f in FACTORIES}

    assert models - covered == set()


@pytest.mark.django_db
@pytest.mark.parametrize("model_factory", FACTORIES, ids=lambda f: f.__name__)
def test_each_factory_makes_two_rows_the_database_accepts(model_factory):
    first, second = model_factory(), model_factory()

    model = model_factory._meta.model
    assert first.pk != second.pk
    assert model.objects.filter(pk__in=[first.pk, second.pk]).count() == 2


@pytest.mark.django_db
def test_an_album_factory_makes_its_images_in_order_with_the_first_as_cover():
    runway = factories.RunwayFactory(images=3, images__shots=2, images__duplicate=True)

    images = list(runway.images.order_by("sort_order"))
    runway.refresh_from_db()
    assert [(i.sort_order, i.look_index) for i in images] == [(0, 1), (1, 1), (2, 2)]
    assert (runway.cover, runway.image_count) == (images[0], 3)
    assert (images[2].is_duplicate, images[2].dup_of) == (True, images[0])


@pytest.mark.django_db
def test_a_street_album_factory_lays_out_mains_and_details():
    snap = factories.StreetSnapFactory(images="MdMdd", images__cover=2, published=True)

    images = list(snap.images.order_by("sort_order"))
    snap.refresh_from_db()
    assert [i.parent for i in images] == [None, images[0], None, images[2], images[2]]
    assert [i.is_detail for i in images] == [False, True, False, True, True]
    assert (snap.cover, snap.image_count, snap.status) == (images[2], 5, "published")
    details = factories.StreetSnapFactory(images=3, images__details=True)
    assert [i.is_detail for i in details.images.order_by("sort_order")] == [False, True, False]


@pytest.mark.django_db
def test_album_images_take_fields_per_image_and_store_photographs():
    from django.core.files.storage import default_storage

    runway = factories.RunwayFactory(
        images=[{"width": 300}, {"photo": b"own bytes"}], images__photos=True
    )

    first, second = runway.images.order_by("sort_order")
    assert first.width == 300
    assert default_storage.open(first.storage_key).read() == factories.photo_bytes("astronaut")
    assert default_storage.open(second.storage_key).read() == b"own bytes"
    assert second.byte_size == len(b"own bytes")
    assert factories.RunwayFactory(images=0).cover is None


@pytest.mark.django_db
def test_a_preview_link_factory_makes_a_link_its_token_opens():
    from review.services import preview_link_open

    link = factories.PreviewLinkFactory(token="for-le-monde")

    assert preview_link_open(token="for-le-monde") == link
    assert preview_link_open(token="for-another") is None
