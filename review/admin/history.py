"""The review history of every album."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html

from review.admin.display import admin_url
from review.models import ReviewEvent


@admin.register(ReviewEvent)
class ReviewEventAdmin(admin.ModelAdmin):
    """Every transition of every album, and every edit of a published one, newest first: who
    did what, and why."""

    list_display = ("at", "actor", "action", "record_link", "from_status", "to_status", "reason")
    list_filter = ("action", "to_status", "actor")
    list_select_related = ("actor", "runway", "street_snap")
    date_hierarchy = "at"
    # Every record's rows together: versions of two records do not compare, so time it is
    # here. One record's own history (its page) is in version order: see ReviewEvent.
    ordering = ("-at", "-pk")
    search_fields = ("reason", "actor__username")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="album")
    def record_link(self, event: ReviewEvent) -> str:
        record = event.record
        return format_html('<a href="{}">{}</a>', admin_url(record, "change", record.pk), record)
