"""The admin index's figures: what waits for the editors (pending albums per kind and the
oldest one's age), what went wrong lately (ingest jobs failed in the last day), and the
renditions still to make. Reads only; each figure links to the list it counts."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

import django_rq
from django.conf import settings
from django.db.models import Count, Min
from django.urls import reverse
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Queue

from catalog.models import Record, RecordImage, Runway, RunwayImage, StreetSnap, StreetSnapImage
from ingest.models import IngestJob

logger = logging.getLogger(__name__)

RECORD_KINDS: tuple[tuple[type[Record], type[RecordImage]], ...] = (
    (Runway, RunwayImage),
    (StreetSnap, StreetSnapImage),
)
FAILED_WINDOW = timedelta(days=1)


@dataclass(frozen=True)
class Pending:
    """The pending albums of one kind: how many, since when, and their queue."""

    label: str
    count: int
    oldest: datetime | None
    url: str


@dataclass(frozen=True)
class FailedJobs:
    count: int
    since: datetime
    url: str


@dataclass(frozen=True)
class Renditions:
    """Images of live albums whose renditions are not made yet, and the renditions jobs
    waiting in Redis (None: no queue to read, the embedded mode, or Redis away)."""

    images: int
    jobs: int | None


def pending_albums(models: list[type[Record]]) -> list[Pending]:
    pending = []
    for model in models:
        figures = model.objects.live().pending().aggregate(n=Count("pk"), oldest=Min("created_at"))
        opts = model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        pending.append(
            Pending(
                label=str(opts.verbose_name_plural),
                count=figures["n"],
                oldest=figures["oldest"],
                url=f"{url}?status=pending",
            )
        )
    return pending


def failed_jobs() -> FailedJobs:
    since = timezone.now() - FAILED_WINDOW
    failed = IngestJob.objects.filter(status=IngestJob.Status.FAILED, finished_at__gte=since)
    query = urlencode({"status__exact": IngestJob.Status.FAILED, "finished_at__gte": since})
    url = f"{reverse('admin:ingest_ingestjob_changelist')}?{query}"
    return FailedJobs(count=failed.count(), since=since, url=url)


def renditions_waiting() -> Renditions:
    images = sum(
        image_model.objects.live()
        .filter(rendition_status=RecordImage.RenditionStatus.PENDING)
        .count()
        for _, image_model in RECORD_KINDS
    )
    return Renditions(images=images, jobs=renditions_queue_length())


def renditions_queue_length() -> int | None:
    """The jobs waiting in the renditions rq queue, read by its name (RENDITIONS_QUEUE,
    `renditions` by default) on the jobs' Redis. With RENDITIONS_QUEUE set to the ingest
    queue's name (the old routing), that count includes the ingest jobs waiting."""
    if not settings.REDIS_URL:
        return None  # the embedded mode: renditions are made in-process, no queue
    name = settings.RENDITIONS_QUEUE
    try:
        return Queue(name, connection=django_rq.get_connection(settings.INGEST_QUEUE)).count
    except RedisError as error:
        logger.warning("admin dashboard: the renditions queue is unreadable: %s", error)
        return None
