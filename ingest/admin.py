"""The ingest jobs admin: read-only, with a retry action for failed and stale jobs.

Jobs are written by the endpoint and the workers only; the admin shows them (payload and
report readably, the album's title and brand or city in the list) and can put a failed or
stale job back on the queue (the list's action, the job page's Retry button), through the
same enqueue path as the endpoint; a job failed on an unknown brand links the page that adds
the name it sent as an alias. Nobody adds, edits or deletes a job here.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.urls import NoReverseMatch, path, reverse
from django.utils import formats, timezone
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince

from catalog.models import MediaChange, PublicObject
from catalog.selectors import brand_resolve
from catalog.visibility import keys_sync, media_changes_process
from ingest.models import IngestJob
from ingest.report import COUNT_NAMES, sent_image_name
from ingest.services import RETRYABLE, JobStateError, ingest_job_retry


def record_admin_url(job: IngestJob) -> str | None:
    """The admin page of the job's record, if the catalog admin is registered.

    The record admins belong to the review app; resolving by name keeps ingest independent of
    it (and of whether it is installed at all).
    """
    if job.runway_id:
        name, pk = "admin:catalog_runway_change", job.runway_id
    elif job.street_snap_id:
        name, pk = "admin:catalog_streetsnap_change", job.street_snap_id
    else:
        return None
    try:
        return reverse(name, args=[pk])
    except NoReverseMatch:
        return None


PAYLOAD_ORDER = [
    "kind",
    "source",
    "source_url",
    "brand",
    "season_code",
    "season",
    "collection_type",
    "city",
    "year",
    "month",
    "title",
    "description",
    "images",
]


def _ordered(mapping: dict, order: Sequence[str]) -> dict:
    rank = {key: n for n, key in enumerate(order)}
    return dict(sorted(mapping.items(), key=lambda item: (rank.get(item[0], len(order)), item[0])))


def brand_alias_add_url(job: IngestJob) -> str | None:
    """For a job that failed on an unknown brand: the admin's page that adds the brand name
    it sent as an alias (pre-filled; the editor picks the brand), coming back to the job.
    None when the brand admins (the review app's) are not installed."""
    name = (job.payload or {}).get("brand")
    if job.reason != "unknown_brand" or not isinstance(name, str) or not name:
        return None
    try:
        add = reverse("admin:catalog_brandalias_add")
        back = reverse("admin:ingest_ingestjob_change", args=[job.pk])
    except NoReverseMatch:
        return None
    return f"{add}?{urlencode({'alias': name, 'next': back})}"


def unknown_brand_hint(job: IngestJob) -> dict:
    """What a job failed on an unknown brand says about that brand, as it is now: the brand
    may have been added (or the name made an alias) since the job failed, and the page must
    not go on saying that no brand has it. Empty for any other job."""
    sent = (job.payload or {}).get("brand")
    if job.reason != "unknown_brand" or not isinstance(sent, str) or not sent:
        return {}
    brand = brand_resolve(name=sent)
    brand_url = ""
    if brand is not None:
        try:
            brand_url = reverse("admin:catalog_brand_change", args=[brand.pk])
        except NoReverseMatch:
            pass
    return {
        "brand_sent": sent,
        "brand_now": brand,
        "brand_now_url": brand_url,
        # Only while the name still resolves to nothing: once it does, the way on is Retry.
        "brand_alias_add_url": None if brand else brand_alias_add_url(job),
    }


def _never(modeladmin: admin.ModelAdmin, request: HttpRequest, obj: Any = None) -> bool:
    """A permission nobody has (jobs, the outbox and the ledger are written by the system)."""
    return False


# A job's page: its sections and their fields.
_JOB_PAGE: list[tuple[str | None, tuple[str, ...]]] = [
    (None, ("status", "reason", "error", "attempts", "lost_executions", "record_link")),
    ("Submission", ("kind", "source", "source_url", "webhook_id")),
    ("Report", ("report_counts", "report_issues")),
    ("Payload", ("payload_checksum", "payload_pretty")),
    (
        "Timeline",
        ("created_at", "enqueued_at", "started_at", "heartbeat_at", "finished_at", "updated_at"),
    ),
]


@admin.register(IngestJob)
class IngestJobAdmin(admin.ModelAdmin):
    # Five columns, two lines in some: the list fits a 1280 px screen with both sidebars open.
    list_display = ["id", "status_column", "album_column", "age", "record_link"]

    class Media:
        css = {"all": ["ingest/admin.css"]}

    list_filter = ["status", "kind", "source"]
    search_fields = ["source_url", "webhook_id", "=id"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    actions = ["retry_jobs"]
    list_per_page = 50
    fieldsets = [(title, {"fields": fields}) for title, fields in _JOB_PAGE]
    # Every field the page shows: a job is never edited here.
    readonly_fields = [name for _, fields in _JOB_PAGE for name in fields]

    # Read-only: jobs are the record of what crawlers sent and what the pipeline did.
    has_add_permission = has_change_permission = has_delete_permission = _never

    def has_retry_permission(self, request) -> bool:
        return request.user.has_perm("ingest.retry_ingestjob")

    def get_urls(self):
        retry = path(
            "<path:object_id>/retry/",
            self.admin_site.admin_view(self.retry_view),
            name="ingest_ingestjob_retry",
        )
        return [retry, *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = self.get_object(request, unquote(object_id))
        context = {**(extra_context or {})}
        if job is not None:
            context["retry_url"] = (
                reverse("admin:ingest_ingestjob_retry", args=[job.pk])
                if job.status in RETRYABLE and self.has_retry_permission(request)
                else ""
            )
            context.update(unknown_brand_hint(job))
        return super().change_view(request, object_id, form_url, context)

    def retry_view(self, request, object_id):
        """The Retry button of a failed or stale job's page (POST)."""
        if not self.has_retry_permission(request):
            raise PermissionDenied
        page = reverse("admin:ingest_ingestjob_change", args=[object_id])
        if request.method != "POST":
            return HttpResponseRedirect(page)
        try:
            ingest_job_retry(job_id=int(object_id))
        except JobStateError as refusal:
            self.message_user(request, str(refusal), messages.WARNING)
        except (ValueError, IngestJob.DoesNotExist):
            raise Http404("No such ingest job.") from None
        else:
            self.message_user(request, "Queued again.", messages.SUCCESS)
        return HttpResponseRedirect(page)

    @admin.display(description="status", ordering="status")
    def status_column(self, job: IngestJob) -> str:
        """The status, and below it the reason and the attempts when there is more to say."""
        notes = [job.reason] if job.reason else []
        if job.attempts > 1:
            notes.append(f"{job.attempts} attempts")
        if not notes:
            return job.get_status_display()
        return format_html(
            '{}<br><span class="ingest-job-note">{}</span>',
            job.get_status_display(),
            " · ".join(notes),
        )

    @admin.display(description="album")
    def album_column(self, job: IngestJob) -> str:
        """The album's title as the crawler sent it, then its kind, brand and season (or city
        and month) and its source."""
        details = [job.get_kind_display().lower(), self.where(job), job.source]
        return format_html(
            '{}<br><span class="ingest-job-note">{}</span>',
            self.album(job),
            " · ".join(part for part in details if part and part != "-"),
        )

    @admin.display(description="album")
    def album(self, job: IngestJob) -> str:
        title = (job.payload or {}).get("title")
        return title if isinstance(title, str) and title else "-"

    @admin.display(description="brand / city")
    def where(self, job: IngestJob) -> str:
        """The brand and season of a runway, the city and month of a street album, as the
        crawler sent them (a failed job has no record to read them from)."""
        payload = job.payload or {}
        if job.kind == IngestJob.Kind.RUNWAY:
            parts = [payload.get("brand"), payload.get("season_code")]
        else:
            year, month = payload.get("year"), payload.get("month")
            dated = isinstance(year, int) and isinstance(month, int) and month
            parts = [payload.get("city"), f"{year}-{month:02d}" if dated else year]
        return " · ".join(str(part) for part in parts if part) or "-"

    @admin.display(description="age", ordering="created_at")
    def age(self, job: IngestJob) -> str:
        # The time itself in the one format of the admin's pages, on hover.
        when = formats.date_format(timezone.localtime(job.created_at), "DATETIME_FORMAT")
        return format_html(
            '<span title="{}" class="ingest-nowrap">{}</span>',
            when,
            timesince(job.created_at, depth=1),
        )

    @admin.display(description="record")
    def record_link(self, job: IngestJob) -> str:
        if not job.record_id:
            return "-"
        label = f"{'runway' if job.runway_id else 'street snap'} {job.record_id}"
        url = record_admin_url(job)
        if url:
            return format_html('<a href="{}" class="ingest-nowrap">{}</a>', url, label)
        return format_html('<span class="ingest-nowrap">{}</span>', label)

    @admin.display(description="payload")
    def payload_pretty(self, job: IngestJob) -> str:
        # PostgreSQL's jsonb keeps no key order: show the album in the contract's order.
        payload = _ordered(job.payload, PAYLOAD_ORDER)
        text = json.dumps(payload, indent=2, ensure_ascii=False)
        return format_html('<pre style="white-space: pre-wrap">{}</pre>', text)

    @admin.display(description="counts")
    def report_counts(self, job: IngestJob) -> str:
        counts = (job.report or {}).get("counts")
        if not counts:
            return "-"
        return format_html_join(", ", "{}: {}", _ordered(counts, COUNT_NAMES).items())

    @admin.display(description="issues")
    def report_issues(self, job: IngestJob) -> str:
        report = job.report or {}
        issues = report.get("issues") or []
        if not issues:
            return "-"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((_issue_image(i.get("index")), i.get("url", ""), i.get("reason", "")) for i in issues),
        )
        note = " (truncated)" if report.get("issues_truncated") else ""
        return format_html(
            "<table><thead><tr><th>image</th><th>URL</th><th>reason</th></tr></thead>"
            "<tbody>{}</tbody></table>{}",
            rows,
            note,
        )

    @admin.action(permissions=["retry"], description="Retry selected failed or stale jobs")
    def retry_jobs(self, request, queryset):
        retried, refused = [], []
        for job_id in queryset.order_by("pk").values_list("pk", flat=True):
            try:
                ingest_job_retry(job_id=job_id)
            except JobStateError as refusal:
                # The state the service found under its row lock, not the one listed here.
                refused.append(f"{job_id} ({refusal.status})")
                continue
            retried.append(str(job_id))
        if retried:
            self.message_user(request, f"Queued again: {', '.join(retried)}.", messages.SUCCESS)
        if refused:
            self.message_user(
                request,
                f"Not retried (only failed or stale jobs can be): {', '.join(refused)}.",
                messages.WARNING,
            )


def _issue_image(index) -> str:
    # As the report's reasons name it, images[5], and as the album's page numbers it, image 6
    # (docs/editors.md): the job's page is read by editors and crawler authors alike.
    if not isinstance(index, int):
        return str(index or "")
    return f"{sent_image_name(index)} (image {index + 1})"


# --- Visibility: what the jobs that move bytes and purge the edge have not finished ------------


@admin.register(MediaChange)
class MediaChangeAdmin(admin.ModelAdmin):
    """Changes the public may see that their visibility job has not finished: their bytes
    did not all move, or the edge did not confirm the purge. The sweep runs them again at each
    run (docs/operations.md, "Takedowns"); Run now does it at once."""

    list_display = ("created_at", "kind", "record_id", "bytes_done", "attempts", "due_at", "error")
    list_filter = ("kind", "bytes_done")
    ordering = ["pk"]
    readonly_fields = ("kind", "record_id", "tags", "bytes_done", "attempts", "due_at", "error")
    actions = ["run_now"]

    # Written by the visibility job; an editor may delete a change it should not run.
    has_add_permission = has_change_permission = _never

    @admin.action(permissions=["view"], description="Run the waiting changes now")
    def run_now(self, request, queryset):
        run = media_changes_process(pks=list(queryset.values_list("pk", flat=True)))
        level = messages.SUCCESS if run.ok else messages.WARNING
        self.message_user(request, run.summary(), level)


class FailingFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("failing", "Failing"), ("pending", "Pending")]

    def queryset(self, request, queryset):
        if self.value() == "failing":
            return queryset.exclude(pending="").filter(failures__gt=0)
        if self.value() == "pending":
            return queryset.exclude(pending="")
        return queryset


class EstimatedCountPaginator(Paginator):
    """The count of an unfiltered list as PostgreSQL estimates it (kept by autovacuum's
    ANALYZE), not counted: a table with a row per public object takes a second to count. A
    filtered list is counted."""

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if (
            isinstance(queryset, QuerySet)
            and not queryset.query.where
            and connections[queryset.db].vendor == "postgresql"
        ):
            with connections[queryset.db].cursor() as cursor:
                cursor.execute(
                    "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                    [queryset.model._meta.db_table],
                )
                (estimate,) = cursor.fetchone()
            if estimate >= 0:  # -1: never analyzed
                return estimate
        return super().count


@admin.register(PublicObject)
class PublicObjectAdmin(admin.ModelAdmin):
    """The public store's ledger: an object that could not be copied there or removed from it
    is listed as failing, with the error, until a retry (the sweep's, or Retry now) works."""

    list_display = ("key", "confirmed", "pending", "failures", "error", "changed_at")
    list_filter = (FailingFilter, "pending", "confirmed")
    # A key or a sha1, whole: the ledger has a row per public object (millions), and only an
    # exact match is an index's lookup.
    search_fields = ("=key", "=sha1")
    search_help_text = "A storage key or a sha1, whole (images/ab/ab12….jpg)."
    # Newest rows first, by the primary key's index (a sort by changed_at would read them all).
    ordering = ["-pk"]
    readonly_fields = ("key", "sha1", "confirmed", "pending", "failures", "error", "changed_at")
    actions = ["retry_now"]
    show_full_result_count = False
    paginator = EstimatedCountPaginator

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        return queryset.filter(Q(key=term) | Q(sha1=term)), False

    # The ledger is the visibility job's: shown, never written here.
    has_add_permission = has_change_permission = has_delete_permission = _never

    @admin.action(permissions=["view"], description="Move the selected objects now")
    def retry_now(self, request, queryset):
        synced = keys_sync(list(queryset.values_list("key", flat=True)))
        self.message_user(
            request,
            f"{len(synced.published)} made public, {len(synced.withdrawn)} made private, "
            f"{len(synced.failed)} failed again.",
            messages.WARNING if synced.failed else messages.SUCCESS,
        )


# --- The admin index's figure (config.admin shows it) -------------------------------------------


@dataclass(frozen=True)
class FailedJobs:
    """Ingest jobs that failed in the last day, and their list."""

    count: int
    since: datetime
    url: str


def failed_jobs(window: timedelta = timedelta(days=1)) -> FailedJobs:
    since = timezone.now() - window
    failed = IngestJob.objects.filter(status=IngestJob.Status.FAILED, finished_at__gte=since)
    query = urlencode({"status__exact": IngestJob.Status.FAILED, "finished_at__gte": since})
    url = f"{reverse('admin:ingest_ingestjob_changelist')}?{query}"
    return FailedJobs(count=failed.count(), since=since, url=url)
