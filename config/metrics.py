"""Prometheus metrics at ``GET /metrics`` (prometheus-client), behind ``METRICS_TOKEN``.

Right however many processes serve and work: the database and the queues are read at scrape
time; public API requests are counted in prometheus-client's multiprocess mode under gunicorn
(``PROMETHEUS_MULTIPROC_DIR``), so a scrape of any worker sums them all.
"""

import hmac
import logging
import os
import re
from datetime import UTC, datetime, timedelta

import pybreaker
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Count, DurationField, ExpressionWrapper, F, IntegerField, Min, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce
from django.http import Http404, HttpResponse
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from config.health import redis_breaker

logger = logging.getLogger(__name__)

# Counted in this process; summed across processes by MultiProcessCollector under gunicorn.
_local_registry = CollectorRegistry(auto_describe=True)
API_REQUESTS = Counter(
    "archive_api_requests",
    "Public API requests by view and HTTP status.",
    ["view", "status"],
    registry=_local_registry,
)

DURATION_BUCKETS = (1, 2, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600)
QUEUE_WAIT_BUCKETS = (1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400)
FINISHED = ("succeeded", "skipped", "failed")
IMAGE_OUTCOMES = ("received", "stored", "refused", "repeated", "duplicates")
# What catalog.visibility.media_sweep counts in MediaSweep.fixed.
SWEEP_FIXED = tuple(
    "published withdrawn missing records_to_publish records_to_withdraw changes_run".split()
)


class ApiMetricsMiddleware:
    """Counts public API responses by the URL's name and the status."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path_info.startswith("/api/v1/"):
            match = getattr(request, "resolver_match", None)
            view = match.url_name if match is not None and match.url_name else "unknown"
            API_REQUESTS.labels(view, str(response.status_code)).inc()
        return response


def metrics_view(request):
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("metrics are off: METRICS_TOKEN is not set")
    supplied = request.headers.get("Authorization", "")
    if not hmac.compare_digest(supplied.encode(), f"Bearer {token}".encode()):
        response = HttpResponse("a valid bearer token is required\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body = generate_latest(_request_registry()) + generate_latest(_archive_registry)
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


def _request_registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return _local_registry


class ArchiveCollector:
    """Everything read at scrape time from PostgreSQL (or SQLite) and Redis."""

    def collect(self):
        try:
            yield from self._jobs()
            yield from self._images()
            yield from self._visibility()
        except DatabaseError:
            logger.warning("metrics: the database did not answer", exc_info=True)
        yield from self._queues()

    def _jobs(self):
        from ingest.models import IngestJob

        jobs = GaugeMetricFamily(
            "archive_ingest_jobs",
            "Ingest jobs by status and reason (rows of ingest_jobs).",
            labels=["status", "reason"],
        )
        rows = IngestJob.objects.values("status", "reason").annotate(n=Count("pk"))
        for row in rows.order_by():
            jobs.add_metric([row["status"], row["reason"]], row["n"])
        yield jobs

        finished = IngestJob.objects.filter(status__in=FINISHED, started_at__isnull=False)
        yield _histogram(
            "archive_ingest_job_duration_seconds",
            "Duration of finished jobs' last attempt (claim to finish).",
            finished.filter(finished_at__isnull=False),
            F("finished_at") - F("started_at"),
            DURATION_BUCKETS,
        )
        yield _histogram(
            "archive_ingest_job_queue_wait_seconds",
            "From the job reaching the queue to the start of its last attempt.",
            finished,
            F("started_at") - Coalesce("enqueued_at", "created_at"),
            QUEUE_WAIT_BUCKETS,
        )

    def _images(self):
        from catalog.models import RunwayImage, StreetSnapImage
        from ingest.models import IngestJob

        outcomes = GaugeMetricFamily(
            "archive_ingest_images",
            "Images of finished jobs by outcome (sums of the reports' counts).",
            labels=["outcome"],
        )
        sums = IngestJob.objects.filter(status__in=FINISHED).aggregate(
            **{
                name: Sum(Cast(KT(f"report__counts__{name}"), IntegerField()))
                for name in IMAGE_OUTCOMES
            }
        )
        for name in IMAGE_OUTCOMES:
            outcomes.add_metric([name], sums[name] or 0)
        yield outcomes

        refusals = GaugeMetricFamily(
            "archive_ingest_image_refusals",
            "Refused images by reason, from the reports' issues (capped per job by "
            "INGEST_REPORT_MAX_ISSUES, so a lower bound; archive_ingest_images is exact).",
            labels=["reason"],
        )
        for reason, n in _refusal_reasons().items():
            refusals.add_metric([reason], n)
        yield refusals

        flagged = GaugeMetricFamily(
            "archive_near_duplicate_images",
            "Live images flagged as near-duplicates, by kind.",
            labels=["kind"],
        )
        for kind, model in (("runway", RunwayImage), ("street", StreetSnapImage)):
            flagged.add_metric([kind], model.objects.live().filter(is_duplicate=True).count())
        yield flagged

    def _visibility(self):
        from django.utils import timezone

        from catalog.models import MediaChange, MediaSweep, PublicObject

        waiting = MediaChange.objects.aggregate(n=Count("pk"), oldest=Min("created_at"))
        changes = GaugeMetricFamily(
            "archive_media_changes_waiting",
            "Changes the public may see whose bytes or edge purge are not done yet "
            "(media_changes rows; the visibility job, then the sweep, run them).",
        )
        changes.add_metric([], waiting["n"])
        yield changes
        oldest = GaugeMetricFamily(
            "archive_media_changes_oldest_seconds",
            "Age of the oldest waiting change (0 when none waits).",
        )
        age = (timezone.now() - waiting["oldest"]).total_seconds() if waiting["oldest"] else 0
        oldest.add_metric([], age)
        yield oldest

        failing = GaugeMetricFamily(
            "archive_public_objects_failing",
            "Objects whose copy to the public store (publish) or removal from it (withdraw) "
            "failed and is being retried.",
            labels=["direction"],
        )
        rows = (
            PublicObject.objects.exclude(pending="")
            .filter(failures__gt=0)
            .values("pending")
            .annotate(n=Count("pk"))
        )
        counts = {row["pending"]: row["n"] for row in rows.order_by()}
        for direction in ("publish", "withdraw"):
            failing.add_metric([direction], counts.get(direction, 0))
        yield failing

        last = MediaSweep.objects.filter(finished_at__isnull=False).order_by("-started_at").first()
        fixed = GaugeMetricFamily(
            "archive_media_sweep_fixed",
            "Drift the last visibility sweep found and fixed: objects published or withdrawn, "
            "records whose bytes_public disagreed with their status, changes no job had run.",
            labels=["what"],
        )
        for what in SWEEP_FIXED:
            fixed.add_metric([what], (last.fixed if last else {}).get(what, 0))
        yield fixed
        finished = GaugeMetricFamily(
            "archive_media_sweep_last_finished_seconds",
            "Unix time the last visibility sweep finished (0: none yet).",
        )
        finished.add_metric([], last.finished_at.timestamp() if last and last.finished_at else 0)
        yield finished

    def _queues(self):
        if not settings.REDIS_URL:
            return
        import django_rq
        from redis.exceptions import RedisError

        depth = GaugeMetricFamily(
            "archive_rq_jobs",
            "rq jobs per queue and state (queued: waiting for a worker; scheduled: retries "
            "waiting for their backoff).",
            labels=["queue", "state"],
        )
        age = GaugeMetricFamily(
            "archive_rq_oldest_job_age_seconds",
            "Seconds the oldest job waiting on each queue has waited (0: none waits). A new "
            "album waits on ingest; a growing renditions age is a backlog the workers serve "
            "after ingest (docs/operations.md, Queues).",
            labels=["queue"],
        )
        up = GaugeMetricFamily("archive_redis_up", "1 when Redis answered this scrape.")
        try:
            # Skipped while the breaker is open: a Redis that hangs must not hold every
            # scrape for its timeout.
            with redis_breaker.calling():
                for name in sorted(settings.RQ_QUEUES):
                    queue = django_rq.get_queue(name)
                    depth.add_metric([name, "queued"], queue.count)
                    depth.add_metric([name, "scheduled"], queue.scheduled_job_registry.count)
                    depth.add_metric([name, "started"], queue.started_job_registry.count)
                    depth.add_metric([name, "failed"], queue.failed_job_registry.count)
                    age.add_metric([name], _oldest_age(queue))
        except (RedisError, pybreaker.CircuitBreakerError):
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield depth
        yield age
        yield up


# The jobs looked at from the head of a queue for the oldest: rq appends new jobs at the tail,
# but the rest of an album a renditions job left for ingest goes back to the head.
_OLDEST_AMONG = 10


def _oldest_age(queue) -> float:
    from rq.job import Job

    ids = queue.get_job_ids(0, _OLDEST_AMONG - 1)
    times = [
        job.enqueued_at
        for job in Job.fetch_many(ids, connection=queue.connection)
        if job is not None and job.enqueued_at is not None
    ]
    if not times:
        return 0.0
    oldest = min(t if t.tzinfo else t.replace(tzinfo=UTC) for t in times)
    return max(0.0, (datetime.now(UTC) - oldest).total_seconds())


def _histogram(name, documentation, queryset, expression, buckets):
    """A cumulative histogram computed in one aggregate query."""
    seconds = queryset.annotate(
        d=ExpressionWrapper(expression, output_field=DurationField())
    ).filter(d__isnull=False)
    aggregates = {
        f"le_{i}": Count("pk", filter=Q(d__lte=timedelta(seconds=bound)))
        for i, bound in enumerate(buckets)
    }
    result = seconds.aggregate(count=Count("pk"), total=Sum("d"), **aggregates)
    pairs = [(str(float(bound)), result[f"le_{i}"]) for i, bound in enumerate(buckets)]
    pairs.append(("+Inf", result["count"]))
    total = result["total"].total_seconds() if result["total"] else 0.0
    family = HistogramMetricFamily(name, documentation)
    family.add_metric([], pairs, sum_value=total)
    return family


# Refusal reasons are sentences with hosts, sizes and numbers in them; a metric label needs a
# small fixed set. First match wins; "other" keeps the sum whole.
_REFUSAL_CLASSES = [
    (re.compile(r"^HTTP (\d{3})"), None),
    (re.compile(r"download budget|not downloaded|cut off"), "download_budget"),
    (re.compile(r"timed? ?out|timeout|deadline"), "timeout"),
    (re.compile(r"refused address|private|loopback|link-local|reserved|metadata"), "address"),
    (re.compile(r"connect|connection|network|TLS|lookup|no address"), "connection"),
    (re.compile(r"larger than|too many pixels|more than .* pixels|bomb"), "too_large"),
    (re.compile(r"not a JPEG|not accepted|unreadable|truncated|format"), "not_an_image"),
    (re.compile(r"redirect"), "redirects"),
    (re.compile(r"invalid URL|has no host|invalid host"), "invalid_url"),
]
# Issues that are not refusals: repeats, near-duplicates, details stored as main images.
_NOT_REFUSALS = re.compile(r"^(same bytes as |near-duplicate of|stored as a main image)")


def refusal_class(reason: str) -> str | None:
    """The metric label of one refusal reason; None for an issue that is not a refusal."""
    if _NOT_REFUSALS.match(reason):
        return None
    for pattern, label in _REFUSAL_CLASSES:
        match = pattern.search(reason)
        if match:
            return label or f"http_{match.group(1)}"
    return "other"


def _refusal_reasons() -> dict[str, int]:
    # One grouped query over the reports' issues; the database does the unnesting.
    if connection.vendor == "postgresql":
        sql = (
            "SELECT issue->>'reason', count(*) FROM ingest_jobs, "
            "jsonb_array_elements(report->'issues') AS issue "
            "WHERE status IN (%s, %s, %s) GROUP BY 1"
        )
    else:
        sql = (
            "SELECT json_extract(issue.value, '$.reason'), count(*) FROM ingest_jobs, "
            "json_each(ingest_jobs.report, '$.issues') AS issue "
            "WHERE status IN (%s, %s, %s) GROUP BY 1"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, list(FINISHED))
        rows = cursor.fetchall()
    counts: dict[str, int] = {}
    for reason, n in rows:
        label = refusal_class(reason or "")
        if label is not None:
            counts[label] = counts.get(label, 0) + n
    return counts


_archive_registry = CollectorRegistry(auto_describe=False)
_archive_registry.register(ArchiveCollector())
