"""Fixtures for ingest: the ingest settings, a crawler on the test client. The helpers are in
tests/ingest/support.py; the local image server, the throwaway rq queue and the S3 server
(moto) are shared fixtures (tests/conftest.py)."""

import pytest

from tests.ingest.support import Crawler, ingest_test_settings


@pytest.fixture(autouse=True)
def _ingest_settings(settings):
    ingest_test_settings(settings)


@pytest.fixture
def crawler(client) -> Crawler:
    return Crawler(client)
