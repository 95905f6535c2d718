"""catalog.visibility when the store fails: S3 (moto's server) behind the test's own proxy,
which answers the copies or the removals with 503. The record's state is never rolled back,
nothing is shown whose bytes are not public, a failed withdrawal is visible (the ledger, the
admin's list, the metrics) and the sweep finishes it once the store answers again. A change
that fails waits out a back-off while the others go on. And the job's way through rq: enqueued
on commit, run by a real worker, run again when the back-off is over."""

import uuid
from datetime import timedelta

import boto3
import pytest
import time_machine
from botocore.config import Config
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.utils import timezone
from rq import SimpleWorker

from catalog.models import MediaChange, PublicObject
from catalog.visibility import media_changes_process, media_sweep
from config.metrics import ArchiveCollector
from ingest.queueing import VISIBILITY_JOB_ID
from publicapi.models import PublicRunway
from review.services import Action, record_approve, record_reject
from tests.edge_support import FailingProxy
from tests.support import TEST_REDIS_URL, curator
from tests.visibility_support import album, keys_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(settings, moto_s3):
    """Both stores in one bucket on moto's server, reached through a proxy that fails on
    demand; yields the proxy and a function listing the public copies."""
    bucket = f"archive-faults-{uuid.uuid4().hex[:12]}"
    credentials = {
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "region_name": "us-east-1",
    }
    s3 = boto3.client("s3", endpoint_url=moto_s3, **credentials)
    s3.create_bucket(Bucket=bucket)
    proxy = FailingProxy(moto_s3)
    options = {
        "endpoint_url": proxy.url,
        "access_key": "testing",
        "secret_key": "testing",
        "region_name": "us-east-1",
        "bucket_name": bucket,
        "file_overwrite": True,
        # boto3's own retries would hide the proxy's 503s: one try, the job retries.
        "client_config": Config(retries={"max_attempts": 1, "mode": "standard"}),
    }
    settings.MEDIA_PUBLIC_COPIES = True
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options},
        "public": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {**options, "location": "public", "querystring_auth": False},
        },
    }

    def public_keys() -> set[str]:
        listed = s3.list_objects_v2(Bucket=bucket, Prefix="public/").get("Contents", [])
        return {item["Key"].removeprefix("public/") for item in listed}

    yield proxy, public_keys
    proxy.close()


def metric(name: str, **labels) -> float:
    for family in ArchiveCollector().collect():
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    raise KeyError(name)


def test_a_publish_the_store_refuses_shows_nothing_and_is_retried(store, settings):
    proxy, public_keys = store
    settings.VISIBILITY_RETRY_INTERVALS = [60]
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    proxy.failing, proxy.methods = True, {"PUT"}  # copies are PUTs

    run = media_changes_process()

    # Published it stays; shown it is not, as none of its bytes is public.
    runway.refresh_from_db()
    assert (runway.status, runway.bytes_public) == ("published", False)
    assert not PublicRunway.objects.filter(pk=runway.pk).exists()
    assert not run.ok and public_keys() == set()
    change = MediaChange.objects.get()
    assert (change.bytes_done, change.attempts) == (False, 1) and "SlowDown" in change.error
    assert metric("archive_public_objects_failing", direction="publish") == len(keys_of(runway))

    proxy.failing = False
    assert media_changes_process().changes == 0  # it waits out its back-off
    with time_machine.travel(change.due_at):
        run = media_changes_process()

    assert run.ok and public_keys() == keys_of(runway)
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    assert metric("archive_public_objects_failing", direction="publish") == 0


def test_a_withdrawal_the_store_refuses_is_never_rolled_back_and_the_sweep_finishes_it(store):
    proxy, public_keys = store
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    media_changes_process()
    assert public_keys() == keys_of(runway)
    proxy.failing, proxy.methods = True, {"DELETE", "POST"}  # removals

    record_reject(
        record=runway, actor=curator(), reason="the photographer's request", action=Action.UNPUBLISH
    )
    run = media_changes_process()

    # The album left the site with the write, whatever the store does.
    runway.refresh_from_db()
    assert (runway.status, runway.bytes_public) == ("rejected", False)
    assert not PublicRunway.objects.filter(pk=runway.pk).exists()
    assert not run.ok and public_keys() == keys_of(runway)
    # Visible: the ledger, the metrics, the admin's list of failing objects.
    assert set(PublicObject.objects.filter(pending="withdraw").values_list("key", flat=True)) == (
        keys_of(runway)
    )
    assert metric("archive_public_objects_failing", direction="withdraw") == len(keys_of(runway))
    assert metric("archive_media_changes_waiting") == 1
    admin = Client()
    admin.force_login(curator())
    listing = admin.get("/admin/catalog/publicobject/?state=failing").content.decode()
    assert all(key in listing for key in keys_of(runway))

    proxy.failing = False
    MediaChange.objects.update(created_at=runway.updated_at.replace(year=2000))
    with time_machine.travel(MediaChange.objects.get().due_at):  # its back-off over
        sweep = media_sweep()

    assert sweep.fixed["withdrawn"] == len(keys_of(runway))
    assert public_keys() == set()
    assert not MediaChange.objects.exists() and not PublicObject.objects.exists()
    assert metric("archive_media_sweep_fixed", what="withdrawn") == len(keys_of(runway))


def test_an_object_missing_from_the_private_store_does_not_hold_a_publish_back(store):
    proxy, public_keys = store
    runway = album(status="pending", photos=("astronaut", "coffee"))
    lost = runway.images.exclude(pk=runway.cover_id).get()
    default_storage.delete(lost.storage_key)
    record_approve(record=runway, actor=curator())

    run = media_changes_process()

    assert run.keys.missing == [lost.storage_key]
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    assert lost.storage_key not in public_keys()
    # Restored, the sweep copies it.
    default_storage.save(lost.storage_key, ContentFile(b"\xff\xd8restored"))
    PublicObject.objects.update(changed_at=runway.updated_at.replace(year=2000))
    assert media_sweep().fixed["published"] == 1
    assert lost.storage_key in public_keys()


# --- Through rq ----------------------------------------------------------------------------------


@pytest.fixture
def visibility_queue(settings, rq_queue):
    import django_rq

    name = f"{rq_queue.name}-visibility"
    settings.VISIBILITY_QUEUE = name
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        name: {"URL": TEST_REDIS_URL, "DEFAULT_TIMEOUT": 60},
    }
    return django_rq.get_queue(name)


# The worker closes its connections around each job (ingest.tasks): real commits.
@pytest.mark.django_db(transaction=True)
def test_a_change_asks_for_one_job_on_commit_and_a_worker_runs_it(public_copies, visibility_queue):
    runway = album(status="pending")
    other = album(status="pending", photos=("rocket",))

    record_approve(record=runway, actor=curator())
    record_approve(record=other, actor=curator())

    # Two commits, one waiting job: it takes every change committed by then.
    assert visibility_queue.job_ids == [VISIBILITY_JOB_ID]
    SimpleWorker([visibility_queue], connection=visibility_queue.connection).work(burst=True)
    assert not MediaChange.objects.exists()
    assert PublicRunway.objects.filter(pk__in=[runway.pk, other.pk]).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_failing_change_is_run_again_after_its_back_off_and_holds_no_other(
    store, visibility_queue, settings
):
    proxy, public_keys = store
    settings.VISIBILITY_RETRY_INTERVALS = [60]
    runway = album(status="pending")
    proxy.failing, proxy.methods = True, {"PUT"}
    record_approve(record=runway, actor=curator())
    worker = SimpleWorker([visibility_queue], connection=visibility_queue.connection)
    worker.work(burst=True)

    # The run leaves the change waiting out its back-off.
    change = MediaChange.objects.get()
    assert change.attempts == 1 and change.due_at > timezone.now()

    # Meanwhile another album's change goes through.
    proxy.failing = False
    other = album(status="pending", photos=("rocket",))
    record_approve(record=other, actor=curator())
    worker.work(burst=True)
    assert PublicRunway.objects.filter(pk=other.pk).exists()
    assert list(MediaChange.objects.values_list("record_id", flat=True)) == [runway.pk]

    # Its back-off over, the scheduler's catch-up (config/cron.py) takes the first one.
    with time_machine.travel(change.due_at + timedelta(seconds=1)):
        visibility_queue.enqueue("catalog.tasks.run_media_sync")
        worker.work(burst=True)
    assert not MediaChange.objects.exists()
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
