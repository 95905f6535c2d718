"""Near-duplicate flags: a photograph and its re-encoded, resized copy are flagged (across
albums and within one), different photographs are not, and the lookup goes through the band
indexes instead of scanning the image table."""

import random
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import selectors
from catalog.models import RunwayImage, StreetSnapImage
from ingest import pipeline
from ingest.hashing import PHASH_ALGORITHM, band_probes, hamming, to_signed64
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory, RunwayFactory
from tests.ingest.conftest import jpeg, photo, runway_album, street_album

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _brand():
    BrandFactory(name="Acme", slug="acme")


def run_album(album: dict):
    job = ingest_job_accept(webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(album))
    pipeline.run_job(job.pk, final_attempt=True)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    return job


def test_a_re_encoded_resized_copy_in_another_album_is_flagged(image_server):
    original = image_server.add("/orig.jpg", jpeg("astronaut", quality=92))
    copy = image_server.add("/copy.jpg", jpeg("astronaut", quality=70, size=300))
    run_album(runway_album([original]))

    job = run_album(runway_album([copy], season_code="SS25"))

    first = RunwayImage.objects.get(original_url=original)
    second = RunwayImage.objects.get(original_url=copy)
    assert first.sha1 != second.sha1
    assert hamming(first.phash, second.phash) <= 7
    assert (second.is_duplicate, second.dup_of) == (True, first)
    assert not first.is_duplicate
    assert job.report["counts"]["duplicates"] == 1
    assert f"near-duplicate of runway image {first.pk}" in job.report["issues"][0]["reason"]


def test_a_copy_later_in_the_same_album_is_flagged_against_the_earlier_image(image_server):
    original = image_server.add("/orig.jpg", jpeg("coffee", quality=92))
    copy = image_server.add("/copy.jpg", jpeg("coffee", quality=75, size=320))

    job = run_album(street_album([original, copy]))

    first, second = StreetSnapImage.objects.order_by("sort_order")
    assert (first.is_duplicate, second.is_duplicate) == (False, True)
    assert second.dup_of == first
    assert job.report["counts"] == {
        "received": 2,
        "stored": 2,
        "refused": 0,
        "repeated": 0,
        "duplicates": 1,
    }


def test_a_slightly_cropped_copy_is_flagged(image_server):
    image = photo("chelsea")
    w, h = image.size
    cropped = image.crop((w // 50, h // 50, w - w // 50, h - h // 50))
    urls = [
        image_server.add("/orig.jpg", jpeg("chelsea")),
        image_server.add("/crop.jpg", jpeg(cropped, quality=80)),
    ]

    run_album(runway_album(urls))

    assert RunwayImage.objects.get(original_url=urls[1]).is_duplicate


def test_different_photographs_are_not_flagged(image_server):
    names = ["astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "camera"]
    urls = [image_server.add(f"/{name}.jpg", jpeg(name, size=400)) for name in names]

    job = run_album(runway_album(urls))

    assert not RunwayImage.objects.filter(is_duplicate=True).exists()
    assert job.report["counts"]["duplicates"] == 0


def test_an_image_of_another_hash_algorithm_is_not_compared(image_server):
    original = image_server.add("/orig.jpg", jpeg("astronaut", quality=92))
    run_album(runway_album([original]))
    RunwayImage.objects.update(phash_algorithm="legacy-unknown")

    run_album(runway_album([original], season_code="SS25"))

    assert not RunwayImage.objects.filter(is_duplicate=True).exists()


def test_images_of_deleted_images_or_records_are_not_candidates():
    runway = RunwayFactory()
    phash = to_signed64(0x0123456789ABCDEF)
    live = RunwayImage.objects.create(runway=runway, storage_key="k/1", phash=phash)
    RunwayImage.objects.create(
        runway=runway, storage_key="k/2", phash=phash, deleted_at=runway.created_at
    )
    gone = RunwayFactory(deleted_at=runway.created_at)
    RunwayImage.objects.create(runway=gone, storage_key="k/3", phash=phash)

    candidates = selectors.image_near_duplicate_candidates(
        image_model=RunwayImage, probes=band_probes(0x0123456789ABCDEF, 7)
    )

    assert [c[0] for c in candidates] == [live.pk]


@pytest.mark.postgres
def test_the_lookup_uses_the_band_indexes_not_a_scan():
    # Given a table of 30,000 images with random hashes, and fresh planner statistics.
    runway = RunwayFactory()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO brand_runway_images
                (runway_id, storage_key, sha1, width, height, byte_size, mime_type,
                 original_url, sort_order, phash, phash_algorithm, is_duplicate, look_index,
                 created_at)
            SELECT %s, 'k/' || g, '', 0, 0, 0, 'image/jpeg', '', g,
                   ('x' || md5(g::text))::bit(64)::bigint, %s, false, 0, now()
            FROM generate_series(1, 30000) AS g
            """,
            [runway.pk, PHASH_ALGORITHM],
        )
        cursor.execute("ANALYZE brand_runway_images")
    query = random.Random(7).getrandbits(64)

    # When the pipeline's candidate query runs.
    with CaptureQueriesContext(connection) as captured:
        candidates = selectors.image_near_duplicate_candidates(
            image_model=RunwayImage, probes=band_probes(query, 7)
        )
    sqls = [q["sql"] for q in captured.captured_queries if "phash_band0" in q["sql"]]
    plans = []
    with connection.cursor() as cursor:
        for sql in sqls:
            cursor.execute("EXPLAIN " + sql)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))

    # Then the plan probes the four partial band indexes and never scans the table, and the
    # candidates are a sliver of it (17 probes per band out of 65,536 values).
    assert len(plans) == 1
    for plan in plans:
        for band in range(4):
            assert f"runway_image_band{band}_live" in plan, plan
        assert "Seq Scan on brand_runway_images" not in plan, plan
    assert len(candidates) < 100
    exact = [c for c in candidates if hamming(c[1], query) <= 7]
    assert len(exact) <= len(candidates)
