"""The storage path against a real S3-compatible HTTP server (moto in server mode): content-
addressed objects, storage errors retried then failed with no record, and the media GC."""

import uuid
from datetime import timedelta

import boto3
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from catalog.models import Runway, RunwayImage
from catalog.storage import image_store
from ingest import pipeline
from ingest.hashing import sha1_hex
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept, media_gc
from tests.factories import BrandFactory, RunwayImageFactory
from tests.ingest.conftest import jpeg, runway_album

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

    with pytest.raises(pipeline.Transient):
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


def test_media_gc_deletes_only_old_unreferenced_objects(any_storage):
    referenced = default_storage.save("images/aa/referenced.jpg", ContentFile(b"r"))
    orphan = default_storage.save("images/bb/orphan.jpg", ContentFile(b"o"))
    deleted_row = default_storage.save("images/cc/deleted-row.jpg", ContentFile(b"d"))
    outside = default_storage.save("legacy/kept.jpg", ContentFile(b"l"))
    RunwayImageFactory(storage_key=referenced)
    RunwayImageFactory(storage_key=deleted_row, deleted_at=timezone.now())

    young = media_gc()
    dry = media_gc(now=timezone.now() + timedelta(days=2), dry_run=True)
    kept_by_dry_run = default_storage.exists(orphan)
    old = media_gc(now=timezone.now() + timedelta(days=2))

    assert young.deleted == [] and young.too_young == 1
    assert dry.deleted == [orphan] and kept_by_dry_run
    assert old.deleted == [orphan]
    assert old.scanned == 3 and old.referenced == 2
    assert not default_storage.exists(orphan)
    for kept in (referenced, deleted_row, outside):
        assert default_storage.exists(kept)


def test_storing_again_renews_an_objects_age_for_the_gc(any_storage):
    data = jpeg("coffee", size=120)
    sha1 = sha1_hex(data)
    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    before = default_storage.get_modified_time(key)

    image_store(data=data, sha1=sha1, mime_type="image/jpeg")

    assert default_storage.get_modified_time(key) >= before
    names = default_storage.listdir(f"images/{sha1[:2]}")[1]
    assert names == [f"{sha1}.jpg"]  # no suffixed copy left behind
