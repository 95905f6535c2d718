"""The list of one kind of album: its change list with the status tabs' counts, and the
queue a record page reads from the same list (QueueChangeList)."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.main import ChangeList
from django.db.models import Count, Q

from catalog.models import Record
from review.admin.filters import STATUS_TABS, Status, status_tab


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
    through from the record pages (review.admin.queue)."""

    def get_results(self, request):
        pass  # the queue reads self.queryset itself; no page, no counts


def status_tabs(request, changelist: RecordChangeList) -> list[dict[str, Any]]:
    """The tabs above the list: each status with its count, the current one marked."""
    current = status_tab(request.GET.get("status"))
    return [
        {
            "label": label,
            "count": changelist.status_counts[str(value)],
            "url": f"?status={value}",
            "current": current == value,
        }
        for value, label in STATUS_TABS
    ]
