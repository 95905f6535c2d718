"""The list of one kind of album: its change list with the status tabs' counts, and the
queue a record page reads from the same list (QueueChangeList)."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ERROR_FLAG, ORDER_VAR, PAGE_VAR, ChangeList
from django.db.models import Count, Q
from django.urls import reverse

from catalog.models import Record, scheduled_q
from review.admin.filters import STATUS_TABS, Status, StatusFilter, status_tab
from review.selectors import records_repeats, records_reposts

STATUS_PARAMETER = StatusFilter.parameter_name
# Query keys that only pick the tab, order, page or facets: the list is not narrowed by them.
NOT_NARROWING = {STATUS_PARAMETER, ORDER_VAR, PAGE_VAR, ERROR_FLAG, "_facets"}


class RecordChangeList(ChangeList):
    """The list of one kind of record, with the counts of its status tabs.

    The tabs count the list as the editor has narrowed it (filters, search), the status
    aside: with a brand filter on, "Pending review 3" is that brand's pending albums, and
    each tab's link keeps the filter. One query counts every status. The record admins turn
    Django's own count of every album off (show_full_result_count): an unnarrowed list takes
    "3 results (40 total)" from the "All" tab's count, one query fewer per page; a narrowed
    one counts its total as Django would."""

    model: type[Record]

    def get_filters(self, request):
        # Read once per list: the tab counts' queryset (get_results) applies the same filters,
        # and building them again would read the brand filter's choices again.
        if not hasattr(self, "_filters"):
            self._filters = super().get_filters(request)
        return self._filters

    def get_results(self, request):
        super().get_results(request)
        counted = self.get_queryset(request, exclude_parameters=[STATUS_PARAMETER])
        # The pending tab counts the rows it lists: re-posts are folded under their album.
        self.status_counts = counted.order_by().aggregate(
            **{str(status): Count("pk", filter=Q(status=status)) for status in Status.values},
            all=Count("pk"),
            scheduled=Count("pk", filter=scheduled_q()),
            queue=Count("pk", filter=Q(status=Status.PENDING, is_repost=False)),
        )
        self.status_counts[str(Status.PENDING)] = self.status_counts.pop("queue")
        # What Django's get_results sets when it counts the total itself.
        self.show_full_result_count = True
        narrowed = any(key not in NOT_NARROWING for key in request.GET)
        self.full_result_count = (
            self.root_queryset.count() if narrowed else self.status_counts["all"]
        )
        self.show_admin_actions = bool(self.full_result_count)
        # The album each row repeats most, for the album column (two queries a page).
        repeats = records_repeats(records=list(self.result_list))
        reposts = records_reposts(
            records=[record for record in self.result_list if record.status == Status.PENDING]
        )
        context: dict[str, Any] = {"preserved_filters": self.preserved_filters, "opts": self.opts}
        for record in self.result_list:
            record.repeat = repeats.get(record.pk, [None])[0]
            record.reposts = reposts.get(record.pk, [])
            # As Django links a row: the album's page, carrying the list as the editor's queue.
            # (url_for_result's own way; it needs what ChangeList sets after get_results.)
            page = reverse(
                f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
                args=(quote(record.pk),),
                current_app=self.model_admin.admin_site.name,
            )
            record.queue_url = add_preserved_filters(context, page)


class QueueChangeList(RecordChangeList):
    """The list's tab, filters, search and order without its page: the queue an editor works
    through from the record pages (review.admin.queue)."""

    def get_results(self, request):
        pass  # the queue reads self.queryset itself; no page, no counts


def status_tabs(request, changelist: RecordChangeList) -> list[dict[str, Any]]:
    """The tabs above the list: each status with its count, the current one marked; each
    link keeps the list's filters, search and order (a new tab starts on its first page)."""
    current = status_tab(request.GET.get(STATUS_PARAMETER))
    return [
        {
            "label": label,
            "count": changelist.status_counts[str(value)],
            "url": changelist.get_query_string({STATUS_PARAMETER: value}, remove=[PAGE_VAR]),
            "current": current == value,
        }
        for value, label in STATUS_TABS
    ]
