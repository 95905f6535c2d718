"""Helpers shared by tests."""

from contextlib import contextmanager

from django.db import transaction


@contextmanager
def rollback_each_example():
    """Run one hypothesis example in a savepoint and roll it back, so examples never see each
    other's rows even though they share the test's transaction."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)
