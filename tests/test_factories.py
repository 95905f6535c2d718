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
