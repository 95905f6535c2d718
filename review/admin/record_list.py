"""The list of one kind of album: its queryset, order, status tabs and columns."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils.html import format_html
from django.utils.timesince import timesince

from catalog.models import Record
from review.admin.display import rendition_note, thumbnail_is_original, thumbnail_url
from review.admin.filters import STATUS_RANK, STATUS_TABS, Status, status_tab
from review.admin.permissions import RecordPermissionsAdmin
from review.conflicts import loaded_token


class RecordChangeList(ChangeList):
    """The list of one kind of record, with the counts of its status tabs.

    One query counts the live albums of each status and all of them. The record admins turn
    Django's own count of all of them off (show_full_result_count), and the list takes its
    total from here instead: "3 results (40 total)" beside the search box reads as before,
    with one query fewer per page."""

    model: type[Record]

    def get_results(self, request):
        super().get_results(request)
        self.status_counts = self.model.objects.live().aggregate(
            **{str(status): Count("pk", filter=Q(status=status)) for status in Status.values},
            all=Count("pk"),
        )
        # What Django's get_results sets when it counts the total itself.
        self.show_full_result_count = True
        self.full_result_count = self.status_counts["all"]
        self.show_admin_actions = bool(self.full_result_count)


class QueueChangeList(RecordChangeList):
    """The list's tab, filters, search and order without its page: the queue an editor works
    through from the record pages (RecordAdmin.queue)."""

    def get_results(self, request):
        pass  # the queue reads self.queryset itself; no page, no counts


class RecordListAdmin(RecordPermissionsAdmin):
    """The list of the record admins."""

    change_list_template = "admin/review/record_change_list.html"
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER
    # RecordChangeList's tab counts give the list its total: Django need not count again.
    show_full_result_count = False

    def get_queryset(self, request):
        duplicates = (
            self.image_model.objects.filter(
                **{self.record_fk: OuterRef("pk")}, is_duplicate=True, deleted_at__isnull=True
            )
            .order_by()
            .values(self.record_fk)
            .annotate(n=Count("pk"))
            .values("n")
        )
        # The model's manager is a RecordQuerySet's; the stubs return a plain QuerySet.
        return (
            super()
            .get_queryset(request)
            .live()  # type: ignore[attr-defined]
            .select_related("cover")
            .annotate(
                duplicate_count=Coalesce(Subquery(duplicates, output_field=IntegerField()), 0),
                status_rank=STATUS_RANK,
            )
        )

    def get_ordering(self, request):
        tab = status_tab(request.GET.get("status"))
        if tab == Status.PENDING:
            return ["created_at", "pk"]  # a queue: oldest first
        if tab == "all":
            return [STATUS_RANK.asc(), "-created_at", "-pk"]  # pending first
        return [F("reviewed_at").desc(nulls_last=True), "-pk"]  # latest decisions first

    def get_changelist(self, request, **kwargs):
        return QueueChangeList if getattr(request, "review_queue", False) else RecordChangeList

    def changelist_view(self, request, extra_context=None):
        context = {
            # Never None: Django derives it from verbose_name when a model names none.
            "title": f"{self.opts.verbose_name_plural.capitalize()} — review queue",  # type: ignore[union-attr]
            **(extra_context or {}),
        }
        response = super().changelist_view(request, context)
        # The list page (not a redirect after an action, nor an action's own page).
        cl = getattr(response, "context_data", {}).get("cl")
        if isinstance(cl, RecordChangeList):
            current = status_tab(request.GET.get("status"))
            # A TemplateResponse (it has a cl); the stubs say HttpResponse.
            response.context_data["status_tabs"] = [  # type: ignore[attr-defined]
                {
                    "label": label,
                    "count": cl.status_counts[str(value)],
                    "url": f"?status={value}",
                    "current": current == value,
                }
                for value, label in STATUS_TABS
            ]
        return response

    def action_checkbox(self, obj):
        # The row's loaded token (the record page's: version, time, shown values) rides along
        # with its checkbox, so a bulk action refuses a record that changed after the list
        # was loaded, and says who changed what, just as the record page does.
        return format_html(
            '{}<input type="hidden" name="loaded_{}" value="{}">',
            super().action_checkbox(obj),
            obj.pk,
            loaded_token(obj),
        )

    @admin.display(description="cover")
    def cover_thumbnail(self, obj: Record) -> str:
        if obj.cover is None:
            return format_html('<span class="review-nocover">{}</span>', "no cover")
        if thumbnail_is_original(obj.cover):
            return format_html(
                '<img src="{}" alt="cover" class="review-list-thumb" loading="lazy" '
                'decoding="async" title="{}"><span class="review-badge review-badge-original">'
                "original</span>",
                thumbnail_url(obj.cover),
                rendition_note(obj.cover),
            )
        return format_html(
            '<img src="{}" alt="cover" class="review-list-thumb" loading="lazy" decoding="async">',
            thumbnail_url(obj.cover),
        )

    @admin.display(description="title", ordering="title")
    def title_column(self, obj: Record) -> str:
        return str(obj)

    @admin.display(description="status", ordering="status_rank")
    def status_column(self, obj: Record) -> str:
        return format_html(
            '<span class="review-status review-status-{}">{}</span>',
            obj.status,
            obj.get_status_display(),
        )

    @admin.display(description="images", ordering="image_count")
    def images_column(self, obj: Record) -> int:
        return obj.image_count

    @admin.display(description="near-dups", ordering="duplicate_count")
    def duplicates_column(self, obj: Record) -> str:
        # Annotated by get_queryset.
        if not obj.duplicate_count:  # type: ignore[attr-defined]
            return "–"
        return format_html('<span class="review-dup-count">{}</span>', obj.duplicate_count)  # type: ignore[attr-defined]

    @admin.display(description="received", ordering="created_at")
    def received_column(self, obj: Record) -> str:
        return format_html(
            '<span title="{}">{} ago</span>',
            obj.created_at.strftime("%Y-%m-%d %H:%M"),
            timesince(obj.created_at, depth=1),
        )
