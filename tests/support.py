"""Helpers shared by tests."""

from contextlib import contextmanager

from django.db import transaction

from tests.factories import UserFactory


@contextmanager
def rollback_each_example():
    """Run one hypothesis example in a savepoint and roll it back, so examples never see each
    other's rows even though they share the test's transaction."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def curator():
    """An editor who may curate any album, published ones included (a superuser: tests of
    what curation does, not of who may do it, which build their editors from permissions).
    The curation services (catalog.services) all take the acting editor."""
    return UserFactory(username="curator", is_superuser=True, is_staff=True)
