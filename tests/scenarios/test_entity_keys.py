"""One show, one record, whoever wrote its key: an editor's edit or the legacy import stores a
key in the form the next crawl looks it up in, so the crawl finds the record instead of
creating a second one (and a deleted article stays deleted). Across catalog, review, ingest;
the images are never downloaded (every job here ends at the lookup). Portable."""

import uuid

import pytest
from django.urls import reverse
from django.utils import timezone

from catalog.legacy.rows import RUNWAY_DRAFTS, RUNWAYS
from catalog.legacy.services import legacy_archive_migrate
from catalog.models import Runway
from ingest import pipeline
from ingest.models import IngestJob
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.catalog.legacy.archive import archive, record
from tests.factories import BrandFactory, RunwayFactory
from tests.review.support import form_data

pytestmark = pytest.mark.django_db

UNREACHABLE = "https://images.invalid/1.jpg"  # never fetched: the job skips before downloading


def crawl(**album) -> IngestJob:
    """A crawler's runway album for Acme FW24 ready-to-wear, run through the worker pipeline."""
    body = {
        "kind": "runway",
        "source": "vogue",
        "source_url": f"https://example.com/shows/{uuid.uuid4().hex[:8]}",
        "brand": "Acme",
        "season_code": "FW24",
        "collection_type": "ready-to-wear",
        "year": 2024,
        "images": [{"url": UNREACHABLE}],
    } | album
    job = ingest_job_accept(webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(body))
    pipeline.run_job(job.pk, final_attempt=True)
    job.refresh_from_db()
    return job


def test_a_crawl_finds_the_show_an_editor_saved_as_fw24(admin_client):
    acme = BrandFactory(slug="acme", name="Acme")
    runway = RunwayFactory(brand=acme, season_code="SS25", published=True)
    change = reverse("admin:catalog_runway_change", args=[runway.pk])
    page = admin_client.get(change)
    admin_client.post(change, form_data(page, "runway_form", season_code="fw24"))

    job = crawl()

    assert (job.status, job.reason, job.record_id) == ("skipped", "exists_published", runway.pk)
    assert Runway.objects.count() == 1


def test_a_crawl_finds_the_show_the_legacy_archive_held_as_fw24_ready_to_wear():
    legacy = archive(
        record(RUNWAYS, 1, season_code="fw24", collection_type="Ready to Wear"),
        record(RUNWAY_DRAFTS, 2, "pending", season_code="Fw 24", collection_type="READY-TO-WEAR"),
    )
    assert legacy_archive_migrate(source=legacy, dry_run=False).written
    published = Runway.objects.live().get()

    job = crawl(season_code="fw24", collection_type="Ready to Wear")

    assert (job.status, job.reason, job.record_id) == ("skipped", "exists_published", published.pk)
    assert Runway.objects.live().count() == 1


def test_a_legacy_row_deleted_as_Vogue_keeps_its_article_from_coming_back():
    url = "https://example.com/shows/acme-fw24"
    legacy = archive(
        record(RUNWAYS, 1, source="Vogue", source_url=url, deleted=True),
    )
    assert legacy_archive_migrate(source=legacy, dry_run=False).written
    deleted = Runway.objects.get()
    assert deleted.deleted_at is not None and deleted.deleted_at <= timezone.now()

    job = crawl(source="vogue", source_url=url)

    assert (job.status, job.reason, job.record_id) == ("skipped", "deleted", deleted.pk)
    assert Runway.objects.count() == 1
