"""The admin index's figures of the review (config.admin shows them): what waits for the
editors (pending albums per kind and the oldest one's age), what goes live today (scheduled
albums whose go-live falls before the editors' midnight), and the renditions still to make.
Reads only; each figure links to the list it counts."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import django_rq
from django.conf import settings
from django.db.models import Count, Min
from django.urls import reverse
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Queue

from catalog.models import RECORD_MODELS, Record, RecordImage

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pending:
    """The pending albums of one kind: how many, since when, and their queue."""

    label: str
    count: int
    oldest: datetime | None
    url: str


@dataclass(frozen=True)
class GoingLive:
    """The scheduled albums of one kind whose go-live falls today (in the editors' time zone):
    how many, the first one's time, and the Scheduled tab."""

    label: str
    count: int
    first: datetime | None
    url: str


@dataclass(frozen=True)
class Renditions:
    """Images of live albums whose renditions are not made yet, and the renditions jobs
    waiting in Redis (None: no queue to read, the embedded mode, or Redis away)."""

    images: int
    jobs: int | None


def _changelist(model: type[Record]) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")


def pending_albums(models: Sequence[type[Record]]) -> list[Pending]:
    pending = []
    for model in models:
        figures = model.objects.live().pending().aggregate(n=Count("pk"), oldest=Min("created_at"))
        pending.append(
            Pending(
                label=str(model._meta.verbose_name_plural),
                count=figures["n"],
                oldest=figures["oldest"],
                url=f"{_changelist(model)}?status=pending",
            )
        )
    return pending


def going_live_today(models: Sequence[type[Record]]) -> list[GoingLive]:
    """Scheduled albums going live from now until the editors' midnight."""
    now = timezone.now()
    midnight = (timezone.localtime(now) + timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    found = []
    for model in models:
        figures = (
            model.objects.scheduled(now)
            .filter(go_live_at__lt=midnight)
            .aggregate(n=Count("pk"), first=Min("go_live_at"))
        )
        found.append(
            GoingLive(
                label=str(model._meta.verbose_name_plural),
                count=figures["n"],
                first=figures["first"],
                url=f"{_changelist(model)}?status=scheduled",
            )
        )
    return found


def renditions_waiting() -> Renditions:
    images = sum(
        model.image_model()
        .objects.live()
        .filter(rendition_status=RecordImage.RenditionStatus.PENDING)
        .count()
        for model in RECORD_MODELS.values()
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
