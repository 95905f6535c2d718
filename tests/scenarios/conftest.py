"""Fixtures of the scenarios: whole paths through the system (a crawler's album over HTTP to a
worker process, an editor in a real browser, a key written by one app and read by another)."""

import pytest

from tests.ingest.support import ingest_test_settings


@pytest.fixture
def ingest_settings(settings):
    """The settings the ingest tests run under (tests.ingest.support.ingest_test_settings)."""
    ingest_test_settings(settings)
    return settings
