"""Ingest jobs and the webhook ids already used (replay protection)."""

from django.db import models
from django.db.models import Q

from catalog.models import Record


class IngestJob(models.Model):
    """One accepted album submission and what the worker pipeline made of it."""

    class Kind(models.TextChoices):
        RUNWAY = "runway", "Runway"
        STREET = "street", "Street"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        SKIPPED = "skipped", "Skipped"
        FAILED = "failed", "Failed"
        STALE = "stale", "Stale"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    source = models.CharField(max_length=32, blank=True, default="")
    source_url = models.CharField(max_length=1024, blank=True, default="")
    payload = models.JSONField()
    payload_checksum = models.CharField(max_length=64)
    webhook_id = models.CharField(max_length=255, db_index=True)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    reason = models.CharField(max_length=255, blank=True, default="")
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    # Executions that ended without a word (the worker was killed, or crashed natively) since
    # the job was accepted or last retried by hand; at INGEST_MAX_LOST_EXECUTIONS the job fails
    # as worker_died instead of being queued again forever.
    lost_executions = models.PositiveIntegerField(default=0)
    # Images an earlier attempt stored, by URL (storage key and analysis), so a job retried
    # after a job-level error does not download them again.
    downloaded = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    # The record this job created or reopened (at most one of the two).
    runway = models.ForeignKey(
        "catalog.Runway", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    street_snap = models.ForeignKey(
        "catalog.StreetSnap", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set once the job reached the queue; a queued job without it is re-enqueued by reconcile.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The running execution's lease: an rq work horse renews it every
    # INGEST_WORKER_HEARTBEAT_SECONDS while it runs the job, so a job whose lease went silent
    # for 3 of them has lost its execution, whatever Redis remembers (docs/operations.md).
    # Null for an execution that renews none (the in-process runner).
    heartbeat_at = models.DateTimeField("lease renewed", null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "ingest_jobs"
        constraints = [
            models.CheckConstraint(
                condition=Q(runway__isnull=True) | Q(street_snap__isnull=True),
                name="ingest_job_one_record",
            ),
        ]
        permissions = [("retry_ingestjob", "Can retry failed or stale ingest jobs")]

    def __str__(self) -> str:
        return f"ingest job {self.pk} ({self.kind}, {self.status})"

    @property
    def record_id(self) -> int | None:
        return self.runway_id or self.street_snap_id

    @classmethod
    def record_fields(cls, record: Record | None) -> dict[str, Record | None]:
        """The job's foreign keys to a record, pointing at ``record``: the one to its model is
        it, the other None (ingest_job_one_record)."""
        return {
            field.name: record if type(record) is field.related_model else None
            for field in cls._meta.get_fields()
            if field.many_to_one
        }


class UsedWebhookId(models.Model):
    """A webhook-id seen once. The unique constraint is what refuses a replay, even a racing one."""

    webhook_id = models.CharField(max_length=255, unique=True)
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "ingest_used_webhook_ids"

    def __str__(self) -> str:
        return self.webhook_id
