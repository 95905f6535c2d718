"""The worker pipeline, one job at a time: every dedup outcome, brand resolution, the one
transaction, retries of transient errors, and the fence against superseded executions."""

import threading
import time
import unicodedata
import uuid

import pytest
from django.core.files.storage import default_storage
from django.db import OperationalError
from django.utils import timezone
from rq.timeouts import JobTimeoutException, UnixSignalDeathPenalty

from catalog.models import Runway, RunwayImage, StoredObject, StreetSnap, StreetSnapImage
from ingest import downloads, kinds, pipeline, planning, writing
from ingest.errors import JobRetry
from ingest.hashing import PHASH_ALGORITHM
from ingest.models import IngestJob
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import (
    BrandAliasFactory,
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
)
from tests.ingest.support import jpeg, runway_album, street_album

pytestmark = pytest.mark.django_db


def submit(album: dict) -> IngestJob:
    return ingest_job_accept(webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(album))


def run(job: IngestJob, *, final_attempt: bool = True) -> IngestJob:
    pipeline.run_job(job.pk, final_attempt=final_attempt)
    job.refresh_from_db()
    return job


@pytest.fixture
def acme():
    return BrandFactory(name="Acme", slug="acme")


@pytest.fixture
def photos(image_server):
    """Three different photographs on the local server."""
    return [
        image_server.add("/a/1.jpg", jpeg("astronaut", size=320)),
        image_server.add("/a/2.jpg", jpeg("coffee", size=320)),
        image_server.add("/a/3.jpg", jpeg("chelsea", size=320)),
    ]


# --- New records ---------------------------------------------------------------------------


def test_a_new_runway_is_written_pending_with_its_images(acme, photos):
    job = submit(runway_album(photos))

    job = run(job)

    assert job.status == "succeeded", job.error
    assert job.attempts == 1
    runway = Runway.objects.get()
    assert job.runway == runway
    assert runway.status == "pending"
    assert runway.brand == acme
    assert (runway.season_code, runway.collection_type) == ("FW24", "ready-to-wear")
    assert runway.ingest_job_id == job.pk
    assert runway.content_checksum == job.payload_checksum
    assert runway.version == 1
    images = list(runway.images.order_by("sort_order"))
    assert [i.original_url for i in images] == photos
    assert [i.look_index for i in images] == [1, 2, 3]
    assert runway.image_count == 3
    assert runway.cover == images[0]
    for image in images:
        assert image.storage_key == f"images/{image.sha1[:2]}/{image.sha1}.jpg"
        assert default_storage.exists(image.storage_key)
        assert image.mime_type == "image/jpeg"
        assert (image.width, image.height) != (0, 0)
        assert image.phash is not None
        assert image.phash_algorithm == PHASH_ALGORITHM
        assert image.byte_size == default_storage.size(image.storage_key)
        assert not image.is_duplicate
    # Recorded as ingest's own objects (by the download threads, on the job's connection).
    stored = StoredObject.objects.filter(preexisting=False)
    assert set(stored.values_list("key", flat=True)) == {i.storage_key for i in images}
    assert job.report["counts"] == {
        "received": 3,
        "stored": 3,
        "refused": 0,
        "repeated": 0,
        "duplicates": 0,
    }


def test_a_new_street_snap_keeps_its_details_under_their_main(photos):
    album = street_album(photos)
    album["images"][1].update(is_detail=True, parent=0)

    job = run(submit(album))

    assert job.status == "succeeded", job.error
    snap = StreetSnap.objects.get()
    main, detail, other = snap.images.order_by("sort_order")
    assert (detail.is_detail, detail.parent) == (True, main)
    assert (main.is_detail, other.is_detail) == (False, False)
    assert snap.cover == main
    assert snap.image_count == 3
    assert job.street_snap == snap


def test_a_detail_listed_before_its_main_is_attached(photos):
    album = street_album(photos)
    album["images"][0].update(is_detail=True, parent=2)

    job = run(submit(album))

    snap = StreetSnap.objects.get()
    first, second, third = snap.images.order_by("sort_order")
    assert job.status == "succeeded"
    assert first.parent == third
    assert snap.cover == second  # the first *main* image


def test_a_detail_whose_parent_was_refused_is_stored_as_a_main_image(photos, image_server):
    album = street_album([image_server.url("/missing.jpg"), photos[0]])
    album["images"][1].update(is_detail=True, parent=0)

    job = run(submit(album))

    image = StreetSnapImage.objects.get()
    assert (image.is_detail, image.parent) == (False, None)
    assert job.status == "succeeded"
    assert any("stored as a main image" in issue["reason"] for issue in job.report["issues"])


def test_the_same_bytes_twice_are_stored_once(acme, image_server):
    bytes_ = jpeg("rocket", size=300)
    urls = [image_server.add("/r/1.jpg", bytes_), image_server.add("/r/1-copy.jpg", bytes_)]

    job = run(submit(runway_album(urls)))

    assert RunwayImage.objects.count() == 1
    assert job.report["counts"] == {
        "received": 2,
        "stored": 1,
        "refused": 0,
        "repeated": 1,
        "duplicates": 0,
    }
    # named as the album's JSON names it: the issue's index is 1, the image it repeats images[0]
    issue = job.report["issues"][0]
    assert issue["index"] == 1
    assert issue["reason"] == "same bytes as images[0]; stored once"


def test_one_url_listed_twice_is_downloaded_once(acme, image_server):
    url = image_server.add("/r/1.jpg", jpeg("rocket", size=300))

    job = run(submit(runway_album([url, url])))

    assert image_server.hits["/r/1.jpg"] == 1
    assert job.report["counts"]["repeated"] == 1


# --- Existing records: the four outcomes ------------------------------------------------------


def test_a_pending_record_with_the_source_key_skips_without_downloading(acme, photos, image_server):
    album = runway_album(photos)
    existing = RunwayFactory(source="vogue", source_url=album["source_url"])

    job = run(submit(album))

    assert (job.status, job.reason) == ("skipped", "exists_pending")
    assert job.record_id == existing.pk
    assert sum(image_server.hits.values()) == 0
    assert Runway.objects.count() == 1
    assert job.report["counts"]["received"] == 0
    assert job.report["album_images"] == 3


def test_a_published_record_skips(acme, photos):
    album = runway_album(photos)
    RunwayFactory(published=True, source="vogue", source_url=album["source_url"])

    job = run(submit(album))

    assert (job.status, job.reason) == ("skipped", "exists_published")


def test_a_live_record_with_the_entity_key_skips_whatever_its_source(acme, photos):
    RunwayFactory(brand=acme, season_code="FW24", collection_type="ready-to-wear", source="wwd")

    job = run(submit(runway_album(photos)))

    assert (job.status, job.reason) == ("skipped", "exists_pending")


def test_a_street_snap_matches_its_entity_key_with_the_title_folded(photos):
    existing = StreetSnapFactory(
        city="Copenhagen", year=2026, month=8, title="Street  Style Copenhagen"
    )

    job = run(submit(street_album(photos, title="Street Style\tCopenhagen")))

    assert (job.status, job.reason, job.record_id) == ("skipped", "exists_pending", existing.pk)


@pytest.mark.parametrize(
    ("first", "second"),
    [("NFD", "NFC"), ("NFC", "NFD")],
    ids=["decomposed-first", "composed-first"],
)
def test_a_street_album_spelt_composed_and_decomposed_is_one_record(photos, first, second):
    # "São Paulo" with a precomposed "ã", and with an "a" and a combining tilde.
    def album(form: str) -> dict:
        return street_album(
            photos,
            city=unicodedata.normalize(form, "São Paulo"),
            title=unicodedata.normalize(form, "São Paulo Street Style"),
        )

    created = run(submit(album(first)))
    again = run(submit(album(second)))

    assert created.status == "succeeded"
    assert (again.status, again.reason) == ("skipped", "exists_pending")
    assert again.record_id == created.record_id
    snap = StreetSnap.objects.get()
    assert (snap.city, snap.title_key) == ("S\u00e3o Paulo", "S\u00e3o Paulo Street Style")


def test_a_source_url_spelt_composed_and_decomposed_is_one_source_key(photos):
    url = "https://example.com/street/s\u00e3o-paulo"
    created = run(submit(street_album(photos, source_url=unicodedata.normalize("NFD", url))))

    again = run(submit(street_album(photos, source_url=url, city="Lisbon")))

    assert (again.status, again.reason) == ("skipped", "exists_pending")
    assert again.record_id == created.record_id
    assert StreetSnap.objects.get().source_url == url


def test_a_deleted_record_with_the_source_key_skips(acme, photos):
    album = runway_album(photos)
    RunwayFactory(source="vogue", source_url=album["source_url"], deleted_at=timezone.now())

    job = run(submit(album))

    assert (job.status, job.reason) == ("skipped", "deleted")
    assert Runway.objects.count() == 1


def test_a_deleted_record_frees_its_entity_key_for_another_article(acme, photos):
    RunwayFactory(
        brand=acme,
        season_code="FW24",
        collection_type="ready-to-wear",
        deleted_at=timezone.now(),
    )

    job = run(submit(runway_album(photos)))

    assert job.status == "succeeded"
    assert Runway.objects.live().count() == 1


def test_a_rejected_record_with_the_same_checksum_skips(acme, photos):
    album = runway_album(photos)
    job = submit(album)
    RunwayFactory(
        brand=acme,
        status="rejected",
        reject_reason="blurry",
        source="vogue",
        source_url=album["source_url"],
        content_checksum=job.payload_checksum,
    )

    job = run(job)

    assert (job.status, job.reason) == ("skipped", "rejected_unchanged")
    assert Runway.objects.get().status == "rejected"


def test_a_rejected_record_with_new_content_is_reopened_in_place(acme, photos, image_server):
    album = runway_album(photos[:2])
    rejected = RunwayFactory(
        brand=acme,
        season_code="FW24",
        collection_type="ready-to-wear",
        status="rejected",
        reviewer="ed",
        reviewed_at=timezone.now(),
        reject_reason="wrong show",
        source="vogue",
        source_url=album["source_url"],
        content_checksum="0" * 64,
        title="Old title",
    )
    old_images = [
        RunwayImage.objects.create(runway=rejected, storage_key=f"old/{n}.jpg", sort_order=n)
        for n in range(3)
    ]
    Runway.objects.filter(pk=rejected.pk).update(cover=old_images[0], image_count=3, version=4)

    job = run(submit(album))

    assert job.status == "succeeded", job.error
    reopened = Runway.objects.get()
    assert reopened.pk == rejected.pk
    assert job.runway_id == rejected.pk
    assert reopened.status == "pending"
    assert (reopened.reviewer, reopened.reviewed_at, reopened.reject_reason) == ("", None, "")
    assert reopened.title == album["title"]
    assert reopened.version == 5
    assert reopened.content_checksum == job.payload_checksum
    assert reopened.ingest_job_id == job.pk
    for old in old_images:
        old.refresh_from_db()
        assert old.deleted_at is not None
    live = list(reopened.images.live().order_by("sort_order"))
    assert [i.original_url for i in live] == photos[:2]
    assert reopened.image_count == 2
    assert reopened.cover == live[0]


def test_a_rejected_record_found_by_entity_key_is_reopened_with_the_new_articles_source(
    acme, photos
):
    # Another site's article about the same show: the same row goes back to review, and its
    # source fields name the article whose content it now holds.
    rejected = RunwayFactory(
        brand=acme,
        season_code="FW24",
        collection_type="ready-to-wear",
        status="rejected",
        reject_reason="wrong show",
        source="wwd",
        source_url="https://wwd.example/acme-fw24",
    )
    album = runway_album(photos[:1], source="vogue")

    job = run(submit(album))

    assert (job.status, job.runway_id) == ("succeeded", rejected.pk), job.error
    reopened = Runway.objects.get()
    assert reopened.status == "pending"
    assert (reopened.source, reopened.source_url) == ("vogue", album["source_url"])


def test_a_record_found_by_its_entity_key_is_looked_up_once(acme, django_assert_num_queries):
    # Given a rejected runway another article created: the album finds it by its entity key.
    rejected = RunwayFactory(
        brand=acme,
        season_code="FW24",
        collection_type="ready-to-wear",
        status="rejected",
        source="wwd",
        source_url="https://wwd.example/acme-fw24",
    )
    album = album_validate(runway_album(["https://example.com/a/1.jpg"], source="vogue"))

    # When the job decides: the source key, the brand, the entity key, and no second look for
    # another holder of the key the record holds itself.
    with django_assert_num_queries(3):
        plan = planning.plan_album(kinds.KINDS["runway"], album, "0" * 64)

    assert plan == planning.Plan(record=rejected, brand=acme)


def test_a_reopened_record_does_not_flag_its_own_old_images(acme, photos):
    album = runway_album(photos[:1])
    first = run(submit(album))
    Runway.objects.update(status="rejected", reject_reason="try again")

    second = run(submit(runway_album(photos[:1] + photos[1:2], source_url=album["source_url"])))

    assert first.status == second.status == "succeeded"
    assert second.report["counts"]["duplicates"] == 0
    assert not RunwayImage.objects.live().filter(is_duplicate=True).exists()


def test_a_rejected_street_snap_is_reopened_too(photos):
    album = street_album(photos[:1])
    rejected = StreetSnapFactory(
        city="Copenhagen",
        year=2026,
        month=8,
        title="Street Style Copenhagen",
        status="rejected",
        reject_reason="dupe",
    )

    job = run(submit(album))

    assert job.status == "succeeded"
    assert job.street_snap_id == rejected.pk
    assert StreetSnap.objects.get().status == "pending"


def test_a_rejected_runway_recrawled_with_a_key_another_record_holds_is_skipped_as_taken(
    acme, photos, image_server
):
    # Given rejected runway A (this article, SS25) and published runway B (FW24).
    album = runway_album(photos, season_code="FW24")
    rejected = RunwayFactory(
        brand=acme,
        season_code="SS25",
        status="rejected",
        reject_reason="wrong season",
        source="vogue",
        source_url=album["source_url"],
        content_checksum="0" * 64,
    )
    old_image = RunwayImageFactory(runway=rejected)
    holder = RunwayFactory(brand=acme, season_code="FW24", published=True)

    # When the article is crawled again with its season corrected to FW24.
    job = run(submit(album), final_attempt=False)

    # Then the job says which record holds that key, downloads nothing and changes nothing.
    assert (job.status, job.reason) == ("skipped", "entity_key_taken")
    assert job.record_id == holder.pk
    assert f"Runway {holder.pk} (published)" in job.error
    assert f"rejected runway {rejected.pk}" in job.error
    assert "FW24" in job.error
    assert job.attempts == 1
    assert sum(image_server.hits.values()) == 0
    rejected.refresh_from_db()
    assert (rejected.status, rejected.season_code, rejected.image_count) == ("rejected", "SS25", 0)
    old_image.refresh_from_db()
    assert old_image.deleted_at is None


def test_a_rejected_street_snap_recrawled_with_a_key_another_record_holds_is_skipped_as_taken(
    photos,
):
    album = street_album(photos, title="Street Style Copenhagen")
    rejected = StreetSnapFactory(
        city="Copenhagen",
        year=2026,
        month=8,
        title="Street Style Copenhague",
        status="rejected",
        source="theimpression",
        source_url=album["source_url"],
    )
    holder = StreetSnapFactory(city="Copenhagen", year=2026, month=8, title=album["title"])

    job = run(submit(album))

    assert (job.status, job.reason, job.record_id) == ("skipped", "entity_key_taken", holder.pk)
    assert f"Street snap {holder.pk} (pending)" in job.error
    assert StreetSnap.objects.get(pk=rejected.pk).status == "rejected"


def test_a_rejected_record_recrawled_with_its_own_key_is_still_reopened(acme, photos):
    album = runway_album(photos[:1], season_code="FW24")
    rejected = RunwayFactory(
        brand=acme,
        season_code="FW24",
        status="rejected",
        source="vogue",
        source_url=album["source_url"],
    )

    job = run(submit(album))

    assert (job.status, job.record_id) == ("succeeded", rejected.pk)


def test_a_key_taken_after_planning_a_reopen_is_a_lost_race_naming_the_taker(
    acme, photos, monkeypatch
):
    # Given rejected runway A (this article, SS25), to be reopened with FW24, which no one
    # else has when the job plans...
    album = runway_album(photos[:1], season_code="FW24")
    rejected = RunwayFactory(
        brand=acme,
        season_code="SS25",
        status="rejected",
        source="vogue",
        source_url=album["source_url"],
    )
    job = submit(album)
    real_plan = planning.plan_album
    plans = []
    taker = []

    def plan_then_lose(kind, album_, checksum):
        if plans:
            # The second look, in the final transaction, still plans the reopen (READ
            # COMMITTED: the other job's insert was not committed yet)...
            return plans[0]
        plans.append(real_plan(kind, album_, checksum))
        # ...and between that look and our write, another job commits runway B with FW24.
        taker.append(RunwayFactory(brand=acme, season_code="FW24", source="wwd"))
        return plans[0]

    monkeypatch.setattr(planning, "plan_album", plan_then_lose)

    job = run(job)

    # Then it is a lost race, and the record named is B, which took the key, not A.
    assert (job.status, job.reason) == ("skipped", "lost_race")
    assert job.record_id == taker[0].pk
    rejected.refresh_from_db()
    assert (rejected.status, rejected.season_code) == ("rejected", "SS25")


# --- Brands ------------------------------------------------------------------------------------


def test_an_unknown_brand_fails_permanently_with_a_clear_error(photos, image_server):
    job = run(submit(runway_album(photos, brand="Nobody Knows")), final_attempt=False)

    assert (job.status, job.reason) == ("failed", "unknown_brand")
    assert "Nobody Knows" in job.error and "alias" in job.error
    assert job.attempts == 1
    assert sum(image_server.hits.values()) == 0
    assert not Runway.objects.exists()


@pytest.mark.parametrize("sent", ["acme", "ACME", "Acme", "acme-studios", "Acme Studios", "ACNE"])
def test_a_brand_resolves_by_slug_or_alias_whatever_the_case(photos, sent):
    brand = BrandFactory(name="Acme Studios", slug="acme-studios")
    BrandAliasFactory(brand=brand, alias="Acme")
    BrandAliasFactory(brand=brand, alias="acne")

    job = run(submit(runway_album(photos[:1], brand=sent)))

    assert job.status == "succeeded", job.error
    assert Runway.objects.get().brand == brand


# --- Failures and retries -------------------------------------------------------------------------


def test_when_every_image_is_refused_the_job_fails_and_writes_no_record(acme, image_server):
    urls = [image_server.url("/missing-1.jpg"), image_server.add("/page.jpg", b"<html></html>")]

    job = run(submit(runway_album(urls)))

    assert (job.status, job.reason) == ("failed", "no_images")
    assert "None of the 2 images" in job.error
    assert not Runway.objects.exists()
    assert job.report["counts"] == {
        "received": 2,
        "stored": 0,
        "refused": 2,
        "repeated": 0,
        "duplicates": 0,
    }


def test_a_transient_image_error_is_retried_inside_the_job(acme, photos, image_server):
    # Given an image that answers 503 once: not the last attempt, rq could retry the job.
    flaky = image_server.add("/flaky.jpg", jpeg("rocket", size=300), failures_first=(503,))
    job = submit(runway_album([*photos[:1], flaky]))

    job = run(job, final_attempt=False)

    # Then the job tried that image again itself and finished on its first attempt; the other
    # image was downloaded once.
    assert job.status == "succeeded", job.error
    assert job.attempts == 1
    assert job.report["counts"]["stored"] == 2
    assert image_server.hits["/flaky.jpg"] == 2
    assert image_server.hits["/a/1.jpg"] == 1


def test_an_image_that_stays_down_is_an_issue_on_the_first_attempt(acme, photos, image_server):
    down = image_server.add("/down.jpg", b"", failures_first=(503,) * 9)

    job = run(submit(runway_album([photos[0], down])), final_attempt=False)

    assert (job.status, job.attempts) == ("succeeded", 1)
    assert job.report["counts"]["refused"] == 1
    assert job.report["issues"] == [{"index": 1, "url": down, "reason": "HTTP 503 (3 tries)"}]
    assert image_server.hits["/down.jpg"] == 3  # INGEST_IMAGE_TRIES
    assert image_server.hits["/a/1.jpg"] == 1


@pytest.fixture
def one_second_deadline(settings):
    """The image deadline (SPEC's 30 s) made 1 s, so a trickle meets it quickly."""
    settings.INGEST_IMAGE_DEADLINE = 1.0
    settings.INGEST_READ_TIMEOUT = 0.8


def test_an_image_past_its_deadline_is_not_tried_again(
    acme, photos, image_server, one_second_deadline
):
    # Given an image served as a trickle that would take far longer than the deadline
    slow = image_server.add("/slow.jpg", jpeg("rocket", size=300), trickle_interval=0.05)

    job = run(submit(runway_album([photos[0], slow])), final_attempt=False)

    # Then it was cut at the deadline once, not tried twice more: 1 s in all, not 3
    assert (job.status, job.attempts) == ("succeeded", 1), job.error
    assert job.report["issues"] == [{"index": 1, "url": slow, "reason": "deadline of 1s exceeded"}]
    assert image_server.hits["/slow.jpg"] == 1


def test_the_tries_of_an_image_share_its_deadline(
    acme, photos, image_server, one_second_deadline, monkeypatch
):
    # Given an image that answers 503 once, then trickles
    deadlines = []
    real_fetch = downloads.fetch

    def fetch(url, *, policy):
        if url.endswith("/flaky.jpg"):
            deadlines.append(policy.total_deadline)
        return real_fetch(url, policy=policy)

    monkeypatch.setattr(downloads, "fetch", fetch)
    flaky = image_server.add(
        "/flaky.jpg", jpeg("rocket", size=300), failures_first=(503,), trickle_interval=0.05
    )

    job = run(submit(runway_album([photos[0], flaky])), final_attempt=False)

    # Then the 503 was tried again, with what the first try left of the second, and the
    # deadline that expired then was not
    reasons = [issue["reason"] for issue in job.report["issues"]]
    assert reasons == ["deadline of 1s exceeded (2 tries)"]
    assert image_server.hits["/flaky.jpg"] == 2
    # (the first had the whole second, the second what was left after it and the 0.05 s pause)
    assert deadlines[0] <= 1.0 and deadlines[1] <= 1.0 - 0.05, deadlines


def test_a_site_that_is_down_sends_the_job_back_for_a_retry(acme, image_server):
    # Not one image came through, all transiently: the whole job is retried later.
    down = [image_server.add(f"/down/{n}.jpg", b"", failures_first=(503,) * 9) for n in range(2)]
    job = submit(runway_album(down))

    with pytest.raises(JobRetry):
        pipeline.run_job(job.pk, final_attempt=False)

    job.refresh_from_db()
    assert job.status == "queued"
    assert "all 2 images failed, 2 transiently" in job.error and "will retry" in job.error
    job = run(job, final_attempt=True)
    assert (job.status, job.reason) == ("failed", "no_images")


def test_a_storage_error_is_retried_then_fails_with_no_record(acme, photos, monkeypatch):
    def broken(**kwargs):
        raise OSError("bucket unavailable")

    monkeypatch.setattr(downloads, "image_store", broken)
    job = submit(runway_album(photos))

    with pytest.raises(JobRetry):
        pipeline.run_job(job.pk, final_attempt=False)
    job.refresh_from_db()
    assert job.status == "queued"
    job = run(job, final_attempt=True)

    assert (job.status, job.reason) == ("failed", "storage_error")
    assert "bucket unavailable" in job.error
    assert job.attempts == 2
    assert not Runway.objects.exists()


def refuse_to_store(data: bytes, monkeypatch, *, times: int) -> None:
    """Storage answers an error for these bytes, ``times`` times, and stores the rest."""
    real_store = downloads.image_store
    failures = []

    def store(**kwargs):
        if kwargs["data"] == data and len(failures) < times:
            failures.append(1)
            raise OSError("503 Slow Down")
        return real_store(**kwargs)

    monkeypatch.setattr(downloads, "image_store", store)


def test_a_job_that_fails_on_storage_keeps_its_report(acme, photos, monkeypatch):
    # Given storage that refuses the second photo on every attempt.
    refuse_to_store(jpeg("coffee", size=320), monkeypatch, times=99)
    job = submit(runway_album(photos))

    job = run(job, final_attempt=True)

    # Then the failed job reports what it received, stored and refused before the failure.
    assert (job.status, job.reason) == ("failed", "storage_error")
    assert job.report["counts"] == {
        "received": 3,
        "stored": 2,
        "refused": 1,
        "repeated": 0,
        "duplicates": 0,
    }
    assert job.report["issues"] == [
        {"index": 1, "url": photos[1], "reason": "storage error: OSError: 503 Slow Down"}
    ]


def test_a_retried_job_does_not_download_again_what_it_stored(
    acme, photos, image_server, monkeypatch
):
    # Given storage that refuses the second photo once: a job-level error, retried by rq.
    refuse_to_store(jpeg("coffee", size=320), monkeypatch, times=1)
    job = submit(runway_album(photos))
    with pytest.raises(JobRetry):
        pipeline.run_job(job.pk, final_attempt=False)
    job.refresh_from_db()
    assert job.status == "queued"
    assert sorted(job.downloaded) == sorted([photos[0], photos[2]])

    # When the retry runs.
    job = run(job, final_attempt=False)

    # Then only the image that was not stored is downloaded again; the record is complete.
    assert (job.status, job.attempts) == ("succeeded", 2)
    assert job.downloaded == {}  # kept for a retry only
    assert dict(image_server.hits) == {"/a/1.jpg": 1, "/a/2.jpg": 2, "/a/3.jpg": 1}
    runway = Runway.objects.get()
    assert runway.image_count == 3
    for image in runway.images.all():
        assert default_storage.exists(image.storage_key)


def test_an_earlier_download_whose_object_was_collected_is_downloaded_again(
    acme, photos, image_server, monkeypatch
):
    refuse_to_store(jpeg("coffee", size=320), monkeypatch, times=1)
    job = submit(runway_album(photos[:2]))
    with pytest.raises(JobRetry):
        pipeline.run_job(job.pk, final_attempt=False)
    # gc_media collected the first photo's object between the attempts.
    key = IngestJob.objects.get(pk=job.pk).downloaded[photos[0]]["storage_key"]
    default_storage.delete(key)
    StoredObject.objects.filter(key=key).delete()

    job = run(job)

    assert job.status == "succeeded", job.error
    assert image_server.hits["/a/1.jpg"] == 2
    assert default_storage.exists(key)


def test_a_database_error_is_retried(acme, photos, monkeypatch):
    def gone(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(writing, "_new_images", gone)
    job = submit(runway_album(photos[:1]))

    with pytest.raises(OperationalError):
        pipeline.run_job(job.pk, final_attempt=False)

    job.refresh_from_db()
    assert job.status == "queued"
    assert "database error" in job.error
    assert not Runway.objects.exists()


def test_a_database_away_for_a_while_gets_the_job_handed_back_once_it_is_back(
    acme, photos, monkeypatch, settings
):
    # Given a job whose write fails because the database went away, and stays away for three
    # more tries of the hand-back (a fresh connection, then two pauses).
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 30
    real_release = pipeline.ingest_job_release
    tries = []

    def gone(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    def away_then_back(**kwargs):
        tries.append(1)
        if len(tries) <= 3:
            raise OperationalError("connection refused")
        return real_release(**kwargs)

    monkeypatch.setattr(writing, "_new_images", gone)
    monkeypatch.setattr(pipeline, "ingest_job_release", away_then_back)
    job = submit(runway_album(photos[:1]))

    # When it runs, rq gets the database error for its retry...
    with pytest.raises(OperationalError):
        pipeline.run_job(job.pk, final_attempt=False)

    # ...once the job was handed back: the retry finds it queued, not under a live lease.
    job.refresh_from_db()
    assert len(tries) == 4
    assert (job.status, job.attempts) == ("queued", 1)
    assert "database error" in job.error


def test_a_bug_fails_the_job_readably_and_is_not_retried(acme, photos, monkeypatch):
    def bug(*args, **kwargs):
        raise KeyError("oops")

    monkeypatch.setattr(writing, "_new_images", bug)

    job = run(submit(runway_album(photos[:1])), final_attempt=False)

    assert (job.status, job.reason) == ("failed", "internal_error")
    assert "KeyError" in job.error
    assert not Runway.objects.exists()


@pytest.fixture
def budget_album(acme, image_server, settings):
    """One download at a time and a 1.5 s budget: a quick image, one the server holds past the
    budget, and one the budget leaves no time to start."""
    settings.INGEST_DOWNLOAD_WORKERS = 1
    settings.INGEST_DOWNLOAD_BUDGET = 1.5
    # The per-image deadline alone would let the held image run 5 s.
    assert settings.INGEST_IMAGE_DEADLINE > settings.INGEST_DOWNLOAD_BUDGET
    urls = [
        image_server.add("/quick.jpg", jpeg("astronaut", size=200)),
        image_server.add("/held.jpg", jpeg("coffee", size=200), hold_first=True),
        image_server.add("/never.jpg", jpeg("chelsea", size=200)),
    ]
    return runway_album(urls)


def test_images_the_download_budget_left_undone_are_issues_on_the_first_attempt(
    budget_album, image_server, monkeypatch
):
    deadlines = {}
    real_fetch = downloads.fetch

    def fetch(url, *, policy):
        deadlines[url.rsplit("/", 1)[1]] = policy.total_deadline
        return real_fetch(url, policy=policy)

    monkeypatch.setattr(downloads, "fetch", fetch)

    job = run(submit(budget_album), final_attempt=False)

    assert (job.status, job.attempts) == ("succeeded", 1), job.error
    assert job.report["counts"] == {
        "received": 3,
        "stored": 1,
        "refused": 2,
        "repeated": 0,
        "duplicates": 0,
    }
    reasons = {issue["index"]: issue["reason"] for issue in job.report["issues"]}
    assert reasons == {
        1: "download cut off: the job's download budget of 1.5s ran out",
        2: "not downloaded: the job's download budget of 1.5s ran out",
    }
    assert image_server.hits["/never.jpg"] == 0
    # Each download got what was left of the budget, not the image's own 5 s deadline.
    assert set(deadlines) == {"quick.jpg", "held.jpg"}
    assert all(deadline <= 1.5 for deadline in deadlines.values()), deadlines


def test_an_rq_job_timeout_is_retried_not_reported_as_a_bug(acme, photos, monkeypatch):
    def too_slow(urls, **kwargs):
        raise JobTimeoutException("Task exceeded maximum timeout value (900 seconds)")

    monkeypatch.setattr(downloads, "download_all", too_slow)
    job = submit(runway_album(photos[:1]))

    with pytest.raises(JobTimeoutException):  # raised on to rq, which retries the job
        pipeline.run_job(job.pk, final_attempt=False)

    job.refresh_from_db()
    assert job.status == "queued"
    assert "rq job timeout" in job.error and "will retry" in job.error
    job = run(job, final_attempt=True)
    assert (job.status, job.reason) == ("failed", "job_timeout")
    assert "Task exceeded maximum timeout value" in job.error
    assert "internal error" not in job.error


def test_an_attempt_cut_off_by_the_job_timeout_hands_back_what_it_stored(acme, image_server):
    # Given an album whose second photo hangs on its site, and rq's job timeout (its alarm,
    # raised in the job's thread) striking while the job waits for it.
    fast = image_server.add("/t/1.jpg", jpeg("astronaut", size=320))
    slow = image_server.add("/t/2.jpg", jpeg("coffee", size=320), hold_first=True)
    job = submit(runway_album([fast, slow]))
    threading.Thread(
        target=lambda: image_server.held.wait(30) and time.sleep(1.5) or image_server.release.set(),
        daemon=True,
    ).start()

    with pytest.raises(JobTimeoutException), UnixSignalDeathPenalty(1, JobTimeoutException):
        pipeline.run_job(job.pk, final_attempt=False)

    # Then the job goes back to rq with the photo that was stored, not downloaded again.
    job.refresh_from_db()
    assert job.status == "queued"
    assert list(job.downloaded) == [fast]
    job = run(job, final_attempt=True)
    assert job.status == "succeeded", job.error
    assert image_server.hits["/t/1.jpg"] == 1
    assert Runway.objects.get().image_count == 2


def test_a_timeout_that_broke_the_connection_still_reaches_rq(acme, photos, monkeypatch, settings):
    # rq's alarm can interrupt a query; handing the job back may then fail as well, here for
    # longer than the lease lives (3 x 1 s).
    settings.INGEST_WORKER_HEARTBEAT_SECONDS = 1

    def too_slow(urls, **kwargs):
        raise JobTimeoutException("Task exceeded maximum timeout value (900 seconds)")

    def connection_broken(**kwargs):
        raise OperationalError("another command is already in progress")

    monkeypatch.setattr(downloads, "download_all", too_slow)
    monkeypatch.setattr(pipeline, "ingest_job_release", connection_broken)
    job = submit(runway_album(photos[:1]))

    # rq gets its own timeout (and retries), not the database error of the hand-back.
    with pytest.raises(JobTimeoutException):
        pipeline.run_job(job.pk, final_attempt=False)

    job.refresh_from_db()
    assert (job.status, job.attempts) == ("running", 1)  # the retry's claim takes it over


def test_an_object_collected_while_the_job_downloaded_is_stored_again(acme, photos, monkeypatch):
    # Given a job whose stored image gc_media deleted before the job wrote its rows (possible
    # only when a job outlives the GC's grace period).
    job = submit(runway_album(photos[:1]))
    real_download = downloads.download_all

    def download_then_collected(urls, **kwargs):
        outcomes = real_download(urls, **kwargs)
        key = outcomes[0].storage_key
        default_storage.delete(key)
        StoredObject.objects.filter(key=key).delete()
        return outcomes

    monkeypatch.setattr(downloads, "download_all", download_then_collected)

    # When it runs: no row may point at the missing object; the job goes back for a retry.
    with pytest.raises(JobRetry):
        pipeline.run_job(job.pk, final_attempt=False)
    job.refresh_from_db()
    assert job.status == "queued"
    assert "deleted by gc_media" in job.error
    assert not RunwayImage.objects.exists()

    # And the retry stores it again and writes the record.
    monkeypatch.setattr(downloads, "download_all", real_download)
    job = run(job)
    assert job.status == "succeeded"
    image = RunwayImage.objects.get()
    assert default_storage.exists(image.storage_key)
    assert StoredObject.objects.filter(key=image.storage_key).exists()


def test_a_finished_job_is_a_no_op(acme, photos, image_server):
    job = run(submit(runway_album(photos)))
    hits = sum(image_server.hits.values())

    result = pipeline.run_job(job.pk, final_attempt=True)

    job.refresh_from_db()
    assert result == "nothing to do"
    assert job.attempts == 1
    assert sum(image_server.hits.values()) == hits
    assert Runway.objects.count() == 1


def test_a_job_found_running_is_taken_over(acme, photos):
    # Its previous execution died (or raised with the database gone) before handing it back.
    job = submit(runway_album(photos[:1]))
    IngestJob.objects.filter(pk=job.pk).update(status="running", attempts=1)

    job = run(job)

    assert job.status == "succeeded"
    assert job.attempts == 2


# --- Races ----------------------------------------------------------------------------------------


def test_a_unique_violation_in_the_final_transaction_skips_as_a_lost_race(
    acme, image_server, monkeypatch
):
    # An album holding a photograph and its re-encoded, resized copy: the write flags the copy
    # as a near-duplicate of the first image before it loses the race.
    urls = [
        image_server.add("/race/orig.jpg", jpeg("astronaut", quality=92)),
        image_server.add("/race/copy.jpg", jpeg("astronaut", quality=70, size=300)),
    ]
    album = runway_album(urls)
    job = submit(album)
    real_plan = planning.plan_album
    calls = []

    def plan_then_lose(kind, album_, checksum):
        calls.append(1)
        if len(calls) > 1:
            # The second look, in the final transaction, saw nothing either (READ COMMITTED:
            # the other worker's insert was not committed yet)...
            return planning.Plan(record=None, brand=acme)
        plan = real_plan(kind, album_, checksum)
        # ...and between that look and our insert, another worker commits the same album.
        RunwayFactory(brand=acme, source="vogue", source_url=album["source_url"])
        return plan

    monkeypatch.setattr(planning, "plan_album", plan_then_lose)

    job = run(job)

    assert (job.status, job.reason) == ("skipped", "lost_race")
    assert job.record_id == Runway.objects.get().pk
    assert job.error == ""
    assert RunwayImage.objects.count() == 0
    # Counts describe the downloads; no near-duplicate flag of the rolled-back write remains.
    assert job.report["counts"]["stored"] == 2
    assert job.report["counts"]["duplicates"] == 0
    assert not any("near-duplicate" in issue["reason"] for issue in job.report["issues"])


def test_a_record_written_while_we_downloaded_skips_on_the_second_look(acme, photos, monkeypatch):
    album = runway_album(photos[:1])
    job = submit(album)
    real_download = downloads.download_all

    def download_and_race(urls, **kwargs):
        outcomes = real_download(urls, **kwargs)
        RunwayFactory(brand=acme, source="vogue", source_url=album["source_url"])
        return outcomes

    monkeypatch.setattr(downloads, "download_all", download_and_race)

    job = run(job)

    assert (job.status, job.reason) == ("skipped", "exists_pending")
    assert Runway.objects.count() == 1


def test_a_superseded_execution_writes_nothing(acme, photos, monkeypatch):
    job = submit(runway_album(photos[:1]))
    real_download = downloads.download_all

    def download_while_reclaimed(urls, **kwargs):
        outcomes = real_download(urls, **kwargs)
        # reconcile decided this execution was dead and marked the job stale meanwhile.
        IngestJob.objects.filter(pk=job.pk).update(status="stale")
        return outcomes

    monkeypatch.setattr(downloads, "download_all", download_while_reclaimed)

    result = pipeline.run_job(job.pk, final_attempt=True)

    job.refresh_from_db()
    assert result == "superseded"
    assert job.status == "stale"
    assert not Runway.objects.exists()
