"""Fixtures of the admin's tests: two editors, and a brand-filtered pending queue."""

import pytest

from tests.factories import BrandFactory
from tests.review.admin.support import client_for
from tests.review.support import make_runway


@pytest.fixture
def anna():
    return client_for("anna")


@pytest.fixture
def bob():
    return client_for("bob")


@pytest.fixture
def acme_queue():
    """Three pending Acme shows (oldest first) with another brand's between them."""
    acme, other = BrandFactory(name="Acme"), BrandFactory(name="Other")
    shows = []
    for brand in (acme, other, acme, other, acme):
        shows.append(make_runway(images=2, brand=brand))
    return acme, [show for show in shows if show.brand == acme]
