"""The storage path against a real S3-compatible HTTP server (moto in server mode): content-
addressed objects, storage errors retried then failed with no record, and the media GC (which
only ever deletes what ingest stored, never the legacy archive's objects beside them)."""

import uuid
from datetime import timedelta

import boto3
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from catalog.models import Runway, RunwayImage, StoredObject
from catalog.storage import image_store
from ingest import pipeline
from ingest.errors import JobRetry
from ingest.hashing import sha1_hex
from ingest.maintenance import media_gc
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory, RunwayImageFactory
from tests.ingest.support import jpeg, runway_album

pytestmark = pytest.mark.django_db


def bucket_keys(moto_s3: str, bucket: str) -> list[str]:
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_s3,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def run_album(urls: list[str], *, final_attempt: bool = True):
    job = ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(runway_album(urls))
    )
    pipeline.run_job(job.pk, final_attempt=final_attempt)
    job.refresh_from_db()
    return job


def test_the_default_storage_is_s3_on_the_moto_server(s3_storage, moto_s3):
    from storages.backends.s3 import S3Storage

    assert isinstance(default_storage._setup() or default_storage._wrapped, S3Storage)
    assert default_storage.bucket_name == s3_storage
    assert default_storage.endpoint_url == moto_s3


def test_the_same_bytes_are_one_object_under_their_sha1(s3_storage, moto_s3):
    data = jpeg("astronaut", size=200)
    sha1 = sha1_hex(data)

    first = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    second = image_store(data=data, sha1=sha1, mime_type="image/jpeg")

    assert first == second == f"images/{sha1[:2]}/{sha1}.jpg"
    assert bucket_keys(moto_s3, s3_storage) == [first]
    with default_storage.open(first) as stored:
        assert stored.read() == data


def test_a_job_stores_its_images_in_the_bucket(s3_storage, moto_s3, image_server):
    BrandFactory(name="Acme", slug="acme")
    urls = [
        image_server.add("/1.jpg", jpeg("astronaut", size=256)),
        image_server.add("/2.jpg", jpeg("coffee", size=256)),
    ]

    job = run_album(urls)

    assert job.status == "succeeded", job.error
    keys = set(RunwayImage.objects.values_list("storage_key", flat=True))
    assert keys == set(bucket_keys(moto_s3, s3_storage))
    assert len(keys) == 2


def test_a_storage_error_is_retried_then_fails_with_no_record(settings, s3_storage, image_server):
    BrandFactory(name="Acme", slug="acme")
    url = image_server.add("/1.jpg", jpeg("astronaut", size=256))
    # The bucket is gone (or the credentials were revoked): every upload fails.
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            **settings.STORAGES["default"],
            "OPTIONS": {**settings.STORAGES["default"]["OPTIONS"], "bucket_name": "no-such-bucket"},
        },
    }
    job = ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(runway_album([url]))
    )

    with pytest.raises(JobRetry):
        pipeline.run_job(job.pk, final_attempt=False)
    job.refresh_from_db()
    assert job.status == "queued"
    pipeline.run_job(job.pk, final_attempt=True)
    job.refresh_from_db()

    assert (job.status, job.reason) == ("failed", "storage_error")
    assert "NoSuchBucket" in job.error
    assert not Runway.objects.exists()


@pytest.fixture(params=["local", "s3"])
def any_storage(request):
    if request.param == "s3":
        request.getfixturevalue("s3_storage")
    return request.param


def store(data: bytes) -> str:
    """Store ``data`` as a worker does."""
    return image_store(data=data, sha1=sha1_hex(data), mime_type="image/jpeg")


def legacy_object(data: bytes) -> str:
    """An object the legacy archive put in the bucket: same prefix, same key scheme."""
    sha1 = sha1_hex(data)
    return default_storage.save(f"images/{sha1[:2]}/{sha1}.jpg", ContentFile(data))


def test_media_gc_deletes_only_old_unreferenced_objects_ingest_stored(any_storage):
    # Given objects ingest stored: referenced, referenced by a soft-deleted row, and an orphan
    # (a job that lost its race)...
    referenced = store(b"referenced")
    deleted_row = store(b"deleted row")
    orphan = store(b"orphan")
    RunwayImageFactory(storage_key=referenced)
    RunwayImageFactory(storage_key=deleted_row, deleted_at=timezone.now())
    # ...and the legacy archive's objects in the same bucket, under the same prefix and key
    # scheme: one whose row the legacy import skipped (nothing will ever reference it), one
    # not imported yet (the import runs days after deploy), one imported.
    skipped = legacy_object(b"legacy, skipped by the import")
    not_yet = legacy_object(b"legacy, imported next week")
    imported = legacy_object(b"legacy, imported")
    RunwayImageFactory(storage_key=imported, phash_algorithm="legacy")

    # When the GC runs now, then as a dry run and for real once the grace period has passed.
    young = media_gc()
    dry = media_gc(now=timezone.now() + timedelta(days=2), dry_run=True)
    kept_by_dry_run = default_storage.exists(orphan)
    old = media_gc(now=timezone.now() + timedelta(days=2))

    # Then only the orphan ingest stored goes, and only once it is old.
    assert young.deleted == [] and young.too_young == 3
    assert dry.deleted == [orphan] and kept_by_dry_run
    assert old.deleted == [orphan]
    assert (old.tracked, old.referenced, old.too_young) == (3, 2, 0)
    assert not default_storage.exists(orphan)
    assert not StoredObject.objects.filter(key=orphan).exists()
    for kept in (referenced, deleted_row, skipped, not_yet, imported):
        assert default_storage.exists(kept), kept


def test_an_object_already_in_storage_is_never_overwritten_nor_collected(any_storage):
    # Given a legacy object under the key the worker's bytes will get (the legacy archive
    # stored the same picture under the same scheme).
    data = jpeg("chelsea", size=120)
    sha1 = sha1_hex(data)
    key = default_storage.save(f"images/{sha1[:2]}/{sha1}.jpg", ContentFile(b"legacy bytes"))

    # When a job stores those bytes, twice, and its rows never come (it failed).
    assert image_store(data=data, sha1=sha1, mime_type="image/jpeg") == key
    image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    result = media_gc(now=timezone.now() + timedelta(days=2))

    # Then the legacy object is left as it was: not written to, not collected.
    assert StoredObject.objects.get(key=key).preexisting
    assert result.deleted == [] and result.preexisting == 1
    with default_storage.open(key) as stored:
        assert stored.read() == b"legacy bytes"


def test_storing_again_renews_the_objects_age_for_the_gc(any_storage):
    data = jpeg("coffee", size=120)
    sha1 = sha1_hex(data)
    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    StoredObject.objects.filter(key=key).update(last_stored_at=timezone.now() - timedelta(days=3))

    image_store(data=data, sha1=sha1, mime_type="image/jpeg")

    row = StoredObject.objects.get(key=key)
    assert row.last_stored_at > timezone.now() - timedelta(minutes=5)
    assert not row.preexisting
    assert media_gc(now=timezone.now() + timedelta(hours=1)).deleted == []
    names = default_storage.listdir(f"images/{sha1[:2]}")[1]
    assert names == [f"{sha1}.jpg"]  # no suffixed copy left behind
