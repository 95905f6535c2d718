"""The OpenAPI schema: it generates without a warning and is valid OpenAPI 3, and the public
endpoints keep to it (schemathesis, against the WSGI app in-process, with published data in
the database)."""

import re

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import override_settings
from django.utils import timezone
from hypothesis import strategies as st

from catalog.models import StreetSnap, StreetSnapImage
from tests.factories import (
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)


@pytest.mark.django_db
def test_the_schema_generates_without_warnings_and_is_valid_openapi(tmp_path):
    out = tmp_path / "schema.yaml"

    # --validate checks the result against the OpenAPI 3 specification.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))

    text = out.read_text()
    for path in [
        "/api/v1/runways/:",
        "/api/v1/runways/{id}/:",
        "/api/v1/street-snaps/:",
        "/api/v1/street-snaps/{id}/:",
        "/api/v1/brands/:",
        "/api/v1/brands/{slug}/:",
        "/api/v1/index/:",
        "/api/v1/runways/facets/:",
        "/api/v1/street-snaps/facets/:",
        "/api/v1/runway-images/{id}/similar/:",
        "/api/v1/street-snap-images/{id}/similar/:",
    ]:
        assert path in text


def published_archive() -> dict[str, list]:
    """A little of everything the pages show: looks, details, orphans, covers, deleted and
    unpublished rows next to published ones."""
    now = timezone.now()
    acme = BrandFactory(name="Acme", slug="acme", is_featured=True)
    runways = []
    # One hash for every image: each public image has similar images to show.
    hashed = {"phash": 0x0F0F_0F0F_0F0F_0F0F, "phash_algorithm": "phash-draft128-v1"}
    for n in range(3):
        runway = RunwayFactory(
            brand=acme if n < 2 else BrandFactory(),
            published=True,
            images=[{"look_index": look, **hashed} for look in [1, 1, 2, 3]],
        )
        runways.append(runway)
    RunwayImageFactory(runway=runways[0], deleted_at=now)
    RunwayFactory(brand=acme)  # pending

    snaps = []
    for _ in range(2):
        snap = StreetSnapFactory(published=True)
        main = StreetSnapImageFactory(street_snap=snap, **hashed)
        StreetSnapImageFactory.create_batch(2, street_snap=snap, parent=main)
        gone = StreetSnapImageFactory(street_snap=snap, deleted_at=now)
        StreetSnapImageFactory(street_snap=snap, parent=gone)  # shown as a main
        StreetSnap.objects.filter(pk=snap.pk).update(
            cover=main, image_count=StreetSnapImage.objects.filter(street_snap=snap).count() - 1
        )
        snaps.append(snap)
    StreetSnapFactory(status="rejected")
    images = [i.pk for r in runways for i in r.images.all()] + [
        i.pk for s in snaps for i in s.images.all()
    ]
    return {
        # Record ids and image ids alike: schemathesis tries each in every {id}.
        "id": [r.pk for r in runways] + [s.pk for s in snaps] + images,
        "slug": ["acme", runways[2].brand.slug],
    }


# The project's WSGI application, built here so its middleware runs without production's
# HTTPS redirect (config.wsgi's instance was built with it). schemathesis calls it in-process.
# (schemathesis.pytest.from_fixture would build the schema inside a fixture, but its lazy
# loader does not work with pytest 9; loading at import needs no database.)
with override_settings(SECURE_SSL_REDIRECT=False):
    application = get_wsgi_application()
schema = schemathesis.openapi.from_wsgi("/api/schema/", application).include(
    path_regex=r"^/api/v1/", method="GET"
)
# What the published_archive fixture created, for the hook below.
existing: dict[str, list] = {}


def valid(name: str, value) -> bool:
    # Only a value the schema allows is swapped for a real one: a negative case (an id of
    # "abc", -1) must stay negative.
    if name == "id":
        return isinstance(value, int) and value >= 1
    return isinstance(value, str) and re.fullmatch(r"[-a-zA-Z0-9_]+", value) is not None


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    # Most generated ids name nothing (404); often name a published record or brand instead,
    # so detail bodies are checked against the schema too.
    real = [
        {**path_parameters, name: value}
        for name, generated in (path_parameters or {}).items()
        if valid(name, generated)
        for value in existing.get(name, [])
    ]
    return st.sampled_from([path_parameters, *real]) if real else st.just(path_parameters)


@pytest.fixture
def archive_for_schemathesis(db):
    existing.update(published_archive())
    # Django's test client does the same: the handler must not close the test's connection
    # (and with it the transaction holding the data) at the end of each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
    existing.clear()


@pytest.mark.slow  # about half a minute: hundreds of requests per operation
@schema.parametrize()
def test_public_endpoints_keep_to_their_schema(case, archive_for_schemathesis):
    # All of schemathesis's checks: no server error, documented status codes, content types
    # and headers, bodies that validate against the response schema, and so on.
    case.call_and_validate()
