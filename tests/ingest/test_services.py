"""Job transitions and maintenance: retry from the admin, reconcile (never-enqueued, lost by
Redis, stale), purging used webhook ids, and the commands cron runs."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from rq.job import Job

from ingest import services
from ingest.models import IngestJob, UsedWebhookId
from ingest.services import (
    JobStateError,
    ingest_job_claim,
    ingest_job_retry,
    ingest_jobs_reconcile,
    rq_job_id,
    webhook_ids_purge,
)
from tests.factories import IngestJobFactory, UsedWebhookIdFactory

pytestmark = pytest.mark.django_db


def ago(**delta) -> timezone.datetime:
    return timezone.now() - timedelta(**delta)


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    """Job ids handed to the queue, instead of running them."""
    calls: list[int] = []

    def fake_enqueue(*, job_id: int) -> bool:
        calls.append(job_id)
        IngestJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
        return True

    monkeypatch.setattr(services, "ingest_job_enqueue", fake_enqueue)
    return calls


# --- Retry (the admin's action) ------------------------------------------------------------------


@pytest.mark.parametrize("status", ["failed", "stale"])
def test_a_failed_or_stale_job_is_queued_again_after_commit(
    status, enqueued, django_capture_on_commit_callbacks
):
    job = IngestJobFactory(
        status=status, reason="unknown_brand", error="Unknown brand", attempts=1, report={"x": 1}
    )

    with django_capture_on_commit_callbacks(execute=True):
        ingest_job_retry(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.reason, job.error, job.report) == ("queued", "", "", {})
    assert job.attempts == 1  # keeps counting
    assert enqueued == [job.pk]


@pytest.mark.parametrize("status", ["queued", "running", "succeeded", "skipped"])
def test_other_jobs_cannot_be_retried(status, enqueued):
    job = IngestJobFactory(status=status)

    with pytest.raises(JobStateError):
        ingest_job_retry(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == status
    assert enqueued == []


# --- Claim ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["succeeded", "skipped", "failed"])
def test_claiming_a_finished_job_does_nothing(status):
    job = IngestJobFactory(status=status, attempts=1)

    assert ingest_job_claim(job_id=job.pk) is None
    job.refresh_from_db()
    assert (job.status, job.attempts) == (status, 1)


@pytest.mark.parametrize("status", ["queued", "stale", "running"])
def test_claiming_counts_the_attempt(status):
    job = IngestJobFactory(status=status, attempts=2)

    claim = ingest_job_claim(job_id=job.pk)

    job.refresh_from_db()
    assert claim.attempt == 3
    assert (job.status, job.attempts) == ("running", 3)
    assert job.started_at is not None


def test_claiming_a_missing_job_does_nothing():
    assert ingest_job_claim(job_id=123_456) is None


# --- Reconcile ------------------------------------------------------------------------------------


def test_reconcile_enqueues_a_job_that_never_reached_the_queue(enqueued, settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 60
    lost = IngestJobFactory()
    IngestJob.objects.filter(pk=lost.pk).update(created_at=ago(minutes=5))
    just_accepted = IngestJobFactory()  # its on-commit enqueue may still be under way

    result = ingest_jobs_reconcile()

    assert result.enqueued == [lost.pk]
    assert enqueued == [lost.pk]
    assert just_accepted.pk not in enqueued


def test_reconcile_marks_a_job_running_too_long_stale_and_queues_it(enqueued, settings):
    settings.INGEST_STALE_AFTER_SECONDS = 3600
    stuck = IngestJobFactory(status="running", attempts=1, enqueued_at=ago(hours=3))
    IngestJob.objects.filter(pk=stuck.pk).update(started_at=ago(hours=2), created_at=ago(hours=3))
    busy = IngestJobFactory(status="running", attempts=1, enqueued_at=ago(minutes=3))
    IngestJob.objects.filter(pk=busy.pk).update(started_at=ago(minutes=2))

    result = ingest_jobs_reconcile()

    stuck.refresh_from_db()
    busy.refresh_from_db()
    assert result.stale == [stuck.pk]
    assert result.enqueued == [stuck.pk]
    assert stuck.status == "stale"
    assert "reclaimed" in stuck.error
    assert busy.status == "running"


def test_reconcile_leaves_finished_jobs_alone(enqueued):
    for status in ["succeeded", "skipped", "failed"]:
        job = IngestJobFactory(status=status)
        IngestJob.objects.filter(pk=job.pk).update(created_at=ago(days=1))

    assert ingest_jobs_reconcile().enqueued == []


def test_embedded_reconcile_requeues_a_queued_job_whose_process_died(enqueued, settings):
    settings.INGEST_STALE_AFTER_SECONDS = 3600
    orphan = IngestJobFactory(enqueued_at=ago(hours=2))
    IngestJob.objects.filter(pk=orphan.pk).update(created_at=ago(hours=2))
    waiting = IngestJobFactory(enqueued_at=ago(minutes=10))
    IngestJob.objects.filter(pk=waiting.pk).update(created_at=ago(minutes=10))

    assert ingest_jobs_reconcile().enqueued == [orphan.pk]


def test_reconcile_requeues_a_job_that_redis_lost(rq_queue, settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    on_queue = IngestJobFactory()
    lost = IngestJobFactory()
    assert services.ingest_job_enqueue(job_id=on_queue.pk)
    assert services.ingest_job_enqueue(job_id=lost.pk)
    # Redis restarted without persistence: the job is gone from it, not from the database.
    Job.fetch(rq_job_id(lost.pk), connection=rq_queue.connection).delete()

    result = ingest_jobs_reconcile()

    assert result.enqueued == [lost.pk]
    assert sorted(rq_queue.get_job_ids()) == sorted([rq_job_id(on_queue.pk), rq_job_id(lost.pk)])


def test_the_reconcile_command_reports_what_it_did(enqueued, settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    job = IngestJobFactory()
    IngestJob.objects.filter(pk=job.pk).update(created_at=ago(minutes=1))
    out = StringIO()

    call_command("reconcile", stdout=out)

    assert f"enqueued: 1 [{job.pk}]" in out.getvalue()


def test_the_reconcile_command_fails_when_the_queue_is_down(settings):
    settings.INGEST_RECONCILE_GRACE_SECONDS = 0
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        settings.INGEST_QUEUE: {"URL": settings.REDIS_URL, "DEFAULT_TIMEOUT": 60},
    }
    job = IngestJobFactory()
    IngestJob.objects.filter(pk=job.pk).update(created_at=ago(minutes=1))

    with pytest.raises(SystemExit) as exited:
        call_command("reconcile", stdout=StringIO())

    assert exited.value.code == 1
    job.refresh_from_db()
    assert (job.status, job.enqueued_at) == ("queued", None)


# --- Used webhook ids -----------------------------------------------------------------------------


def test_purge_keeps_ids_that_could_still_be_replayed(settings):
    settings.INGEST_SIGNATURE_TOLERANCE_SECONDS = 300
    old = UsedWebhookIdFactory()
    recent = UsedWebhookIdFactory()
    UsedWebhookId.objects.filter(pk=old.pk).update(received_at=ago(seconds=601))
    # Stamped up to 5 minutes ahead, a request stays valid until 10 minutes after it arrived.
    UsedWebhookId.objects.filter(pk=recent.pk).update(received_at=ago(seconds=590))

    assert webhook_ids_purge() == 1
    assert list(UsedWebhookId.objects.values_list("pk", flat=True)) == [recent.pk]


def test_the_purge_command(settings):
    UsedWebhookId.objects.filter(pk=UsedWebhookIdFactory().pk).update(received_at=ago(days=1))
    out = StringIO()

    call_command("purge_webhook_ids", stdout=out)

    assert "purged 1 webhook id(s)" in out.getvalue()
    assert not UsedWebhookId.objects.exists()


def test_the_gc_media_command_dry_run(settings):
    from django.core.files.storage import default_storage

    from catalog.storage import image_store
    from ingest.hashing import sha1_hex

    settings.INGEST_MEDIA_GC_GRACE_SECONDS = 0
    key = image_store(data=b"x", sha1=sha1_hex(b"x"), mime_type="image/jpeg")
    out = StringIO()

    call_command("gc_media", "--dry-run", stdout=out)

    assert f"would delete {key}" in out.getvalue()
    assert "stored by ingest 1:" in out.getvalue()
    assert default_storage.exists(key)
