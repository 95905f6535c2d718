"""Near-duplicate flags: a photograph and its re-encoded, resized copy are flagged (across
albums and within one), different photographs are not, and the lookup goes through the band
indexes instead of scanning the image table."""

import random
import uuid

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from catalog import selectors
from catalog.models import LEGACY_PHASH_ALGORITHM, NotDuplicate, RunwayImage, StreetSnapImage
from ingest import pipeline
from ingest.hashing import (
    PHASH_ALGORITHM,
    band_probes,
    bands,
    hamming,
    to_signed64,
    to_unsigned64,
)
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory, RunwayFactory
from tests.ingest.support import jpeg, photo, runway_album, street_album
from tests.support import rollback_each_example

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


def test_a_pair_an_editor_said_is_not_a_duplicate_is_not_flagged_again(image_server):
    # Given a copy flagged against its original, which an editor said is not a duplicate
    original = image_server.add("/orig.jpg", jpeg("astronaut", quality=92))
    copy = image_server.add("/copy.jpg", jpeg("astronaut", quality=70, size=300))
    run_album(runway_album([original]))
    run_album(runway_album([copy], season_code="SS25"))
    flagged = RunwayImage.objects.get(original_url=copy)
    low, high = sorted((flagged.sha1, flagged.dup_of.sha1))
    NotDuplicate.objects.create(sha1_low=low, sha1_high=high)
    # (the first copy gone, so the original is the only picture it could repeat)
    RunwayImage.objects.filter(pk=flagged.pk).update(deleted_at="2026-01-01T00:00:00Z")

    # When the same copy comes again in a third album
    job = run_album(runway_album([copy], season_code="RS25"))

    # Then it is not flagged against the original
    third = RunwayImage.objects.get(runway__season_code="RS25")
    assert (third.is_duplicate, third.dup_of) == (False, None)
    assert job.report["counts"]["duplicates"] == 0


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
    # one numbering: the issue is images[1], and it names the image it repeats as images[0]
    [issue] = job.report["issues"]
    assert issue["index"] == 1
    assert issue["reason"].startswith("near-duplicate of images[0] of this album")


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


@pytest.mark.parametrize("algorithm", [LEGACY_PHASH_ALGORITHM, "phash-draft64-v0"])
def test_an_image_of_another_hash_algorithm_is_not_compared(image_server, algorithm):
    original = image_server.add("/orig.jpg", jpeg("astronaut", quality=92))
    run_album(runway_album([original]))
    RunwayImage.objects.update(phash_algorithm=algorithm)

    run_album(runway_album([original], season_code="SS25"))

    assert not RunwayImage.objects.filter(is_duplicate=True).exists()


def test_images_of_deleted_images_or_records_are_not_candidates():
    runway = RunwayFactory()
    phash = to_signed64(0x0123456789ABCDEF)
    ours = {"phash": phash, "phash_algorithm": PHASH_ALGORITHM}
    live = RunwayImage.objects.create(runway=runway, storage_key="k/1", **ours)
    RunwayImage.objects.create(
        runway=runway, storage_key="k/2", deleted_at=runway.created_at, **ours
    )
    gone = RunwayFactory(deleted_at=runway.created_at)
    RunwayImage.objects.create(runway=gone, storage_key="k/3", **ours)

    candidates = selectors.image_near_duplicate_candidates(
        image_model=RunwayImage,
        probes=band_probes(0x0123456789ABCDEF, 7),
        phash_algorithm=PHASH_ALGORITHM,
    )

    assert candidates == [(live.pk, phash)]


def test_hashes_of_another_algorithm_are_left_out_by_the_query():
    # Given the same hash stored by us, by the legacy import and by some other algorithm.
    runway = RunwayFactory()
    phash = to_signed64(0x0123456789ABCDEF)
    ours = RunwayImage.objects.create(
        runway=runway, storage_key="k/1", phash=phash, phash_algorithm=PHASH_ALGORITHM
    )
    for algorithm in (LEGACY_PHASH_ALGORITHM, "phash-draft64-v0"):
        RunwayImage.objects.create(
            runway=runway, storage_key=f"k/{algorithm}", phash=phash, phash_algorithm=algorithm
        )

    # When the lookup runs for our algorithm.
    with CaptureQueriesContext(connection) as captured:
        candidates = selectors.image_near_duplicate_candidates(
            image_model=RunwayImage,
            probes=band_probes(0x0123456789ABCDEF, 7),
            phash_algorithm=PHASH_ALGORITHM,
        )

    # Then only ours come back, filtered by a query: legacy hashes are not even in the band
    # indexes the candidates come from, and another algorithm's are left out where the
    # candidates' rows are read (the rows never reach the caller).
    assert candidates == [(ours.pk, phash)]
    (bands,) = [q["sql"] for q in captured.captured_queries if "phash_band0" in q["sql"]]
    assert "'legacy'" in bands
    (rows,) = [q["sql"] for q in captured.captured_queries if "phash_band0" not in q["sql"]]
    assert f"\"phash_algorithm\" = '{PHASH_ALGORITHM}'" in rows


@pytest.mark.parametrize("algorithm", [LEGACY_PHASH_ALGORITHM, ""])
def test_legacy_hashes_are_never_looked_up(algorithm):
    with pytest.raises(ValueError, match="never compared"):
        selectors.image_near_duplicate_candidates(
            image_model=StreetSnapImage, probes=band_probes(1, 7), phash_algorithm=algorithm
        )


@given(
    stored=st.lists(st.integers(0, 2**64 - 1), max_size=30),
    query=st.integers(0, 2**64 - 1),
    data=st.data(),
)
def test_the_candidate_query_finds_every_stored_hash_within_the_distance(stored, query, data):
    # Given random hashes plus a few made by flipping up to max_distance bits of the query,
    # stored as the pipeline stores them (a signed bigint; the migration's band columns).
    max_distance = settings.INGEST_DUPLICATE_MAX_DISTANCE
    near = [
        query ^ sum(1 << bit for bit in flips)
        for flips in data.draw(
            st.lists(
                st.lists(st.integers(0, 63), unique=True, max_size=max_distance),
                min_size=3,
                max_size=3,
            )
        )
    ]
    with rollback_each_example():
        runway = RunwayFactory()
        RunwayImage.objects.bulk_create(
            RunwayImage(
                runway=runway,
                storage_key=f"k/{n}",
                phash=to_signed64(unsigned),
                phash_algorithm=PHASH_ALGORITHM,
            )
            for n, unsigned in enumerate(stored + near)
        )
        columns = list(
            RunwayImage.objects.values_list(
                "phash", "phash_band0", "phash_band1", "phash_band2", "phash_band3"
            )
        )

        # When the pipeline's candidate query runs, and the exact distance is checked after.
        candidates = selectors.image_near_duplicate_candidates(
            image_model=RunwayImage,
            probes=band_probes(query, max_distance),
            phash_algorithm=PHASH_ALGORITHM,
        )

    # Then the database's band columns are our bands, and nothing within the distance is missed.
    for phash, *row_bands in columns:
        assert tuple(row_bands) == bands(to_unsigned64(phash))
    found = {
        to_unsigned64(phash) for _, phash in candidates if hamming(phash, query) <= max_distance
    }
    assert found == {h for h in stored + near if hamming(h, query) <= max_distance}
    assert set(near) <= found


def _fill(runway_id: int, rows: int, algorithm: str, offset: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO brand_runway_images
                (runway_id, storage_key, sha1, width, height, byte_size, mime_type,
                 original_url, sort_order, phash, phash_algorithm, is_duplicate, look_index,
                 created_at)
            SELECT %s, 'k/' || g, '', 0, 0, 0, 'image/jpeg', '', g,
                   ('x' || md5(g::text))::bit(64)::bigint, %s, false, 0, now()
            FROM generate_series(%s, %s) AS g
            """,
            [runway_id, algorithm, offset + 1, offset + rows],
        )


@pytest.mark.postgres
def test_the_lookup_uses_the_band_indexes_not_a_scan():
    # Given 30,000 images of ours and 30,000 legacy ones with random hashes, fresh statistics.
    runway = RunwayFactory()
    _fill(runway.pk, 30_000, PHASH_ALGORITHM, offset=0)
    _fill(runway.pk, 30_000, LEGACY_PHASH_ALGORITHM, offset=30_000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE brand_runway_images")
    query = random.Random(7).getrandbits(64)
    probes = band_probes(query, 7)
    legacy_band_matches = (
        RunwayImage.objects.filter(phash_algorithm=LEGACY_PHASH_ALGORITHM)
        .filter(
            Q(phash_band0__in=probes[0])
            | Q(phash_band1__in=probes[1])
            | Q(phash_band2__in=probes[2])
            | Q(phash_band3__in=probes[3])
        )
        .count()
    )

    # When the pipeline's candidate query runs.
    with CaptureQueriesContext(connection) as captured:
        candidates = selectors.image_near_duplicate_candidates(
            image_model=RunwayImage, probes=probes, phash_algorithm=PHASH_ALGORITHM
        )
    sqls = [q["sql"] for q in captured.captured_queries if "phash_band0" in q["sql"]]
    plans = []
    with connection.cursor() as cursor:
        for sql in sqls:
            cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))

    # Then the plan probes the four partial band indexes and never scans the table, and the
    # candidates are a sliver of it (17 probes per band out of 65,536 values).
    assert len(plans) == 1
    for plan in plans:
        for band in range(4):
            assert f"runway_image_band{band}_live" in plan, plan
        assert "Seq Scan on brand_runway_images" not in plan, plan
        # Legacy rows whose bands match exist, but the indexes do not hold them: no row is
        # fetched from the table only to be thrown away.
        assert legacy_band_matches > 0
        assert "Rows Removed by Filter" not in plan, plan
    assert 0 < len(candidates) < 100
