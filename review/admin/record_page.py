"""The record page: its fields, the review panel, and saving (with or without approve)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.http import HttpResponseRedirect
from django.utils.html import format_html

from catalog.models import Record
from catalog.services import EDITABLE_FIELDS, RecordWriteRefused, record_check_may_curate
from review.admin.curation import CurationAdmin
from review.admin.display import admin_url, ingest_job_url
from review.admin.filters import Status
from review.conflicts import OutOfDate, conflict_if_stale, conflict_message, read_loaded
from review.forms import RecordForm
from review.selectors import claims_of_others, record_review_history
from review.services import claim_take, record_approve, record_edit


class RecordPageAdmin(CurationAdmin):
    """The record page of the record admins."""

    form = RecordForm
    change_form_template = "admin/review/record_change_form.html"
    save_on_top = True
    readonly_fields = (
        "status_display",
        "reviewer",
        "reviewed_at",
        "reject_reason",
        "published_at",
        "image_count",
        "source",
        "source_link",
        "ingest_job",
        "version",
        "created_at",
        "updated_at",
    )

    @admin.display(description="status")
    def status_display(self, obj: Record) -> str:
        return self.status_column(obj)

    @admin.display(description="source URL")
    def source_link(self, obj: Record) -> str:
        if not obj.source_url.startswith(("https://", "http://")):
            return obj.source_url or "–"  # never a javascript: or data: link
        return format_html(
            '<a href="{}" target="_blank" rel="noopener noreferrer">{}</a>',
            obj.source_url,
            obj.source_url,
        )

    @admin.display(description="ingest job")
    def ingest_job(self, obj: Record) -> str:
        if not obj.ingest_job_id:
            return "–"
        url = ingest_job_url(obj.ingest_job_id)
        if not url:
            return str(obj.ingest_job_id)
        return format_html('<a href="{}">job {}</a>', url, obj.ingest_job_id)

    def get_fieldsets(self, request, obj=None):
        return [
            # In columns (review.css): the images come first on this page.
            (None, {"fields": EDITABLE_FIELDS[self.model], "classes": ["review-record-fields"]}),
            (
                "Review",
                {
                    # The status panel at the top says the same in one line.
                    "classes": ["collapse"],
                    "fields": [
                        "status_display",
                        "reviewer",
                        "reviewed_at",
                        "reject_reason",
                        "published_at",
                    ],
                },
            ),
            (
                "Source",
                {
                    "classes": ["collapse"],
                    "fields": [
                        "source",
                        "source_link",
                        "ingest_job",
                        "version",
                        "created_at",
                        "updated_at",
                    ],
                },
            ),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            form = context["adminform"].form
            context["review"] = self.review_context(request, obj, form["loaded"].value())
        return super().render_change_form(request, context, add, change, form_url, obj)

    def review_context(self, request, obj: Record, token: str) -> dict[str, Any]:
        pending = obj.status == Status.PENDING
        history = record_review_history(record=obj)
        last = history[-1] if history else None
        position, total = self.queue_place(request, obj)
        holder = ""
        # Only an editor who may act on the album holds it; a view-only reader never does.
        may_act = self.has_change_permission(request, obj)
        if not (may_act and claim_take(record=obj, user=request.user)):
            others = claims_of_others(model=self.model, user=request.user, record_ids=[obj.pk])
            holder = others.get(obj.pk, "")
        return {
            **self.grid_context(request, obj),
            "token": token,
            "queue_position": position,
            "queue_total": total,
            "queue_label": self.queue_label(request),
            "queue_url": self.with_changelist_filters(request),
            "open_by": holder,
            "claim_url": admin_url(obj, "claim", obj.pk),
            "skip_url": self.with_queue(request, admin_url(obj, "skip", obj.pk)),
            "published_read_only": self.published_read_only(request, obj)
            and self.has_kind_change_permission(request, obj),
            # Approving needs the publish permission, from this page as from the list. With
            # the change permission too, the page's Approve button saves the field edits
            # with it (the main form); without it, the page is read-only and its Approve
            # button approves the album as it stands, like the bulk action.
            "can_approve": pending and self.has_publish_permission(request, obj),
            "approve_saves_edits": self.has_change_permission(request, obj),
            "can_reject": pending and self.has_reject_permission(request, obj),
            "can_unpublish": obj.status == Status.PUBLISHED
            and self.has_publish_permission(request, obj),
            "approve_url": self.with_queue(request, admin_url(obj, "approve", obj.pk)),
            "reject_url": self.with_queue(request, admin_url(obj, "reject", obj.pk)),
            "unpublish_url": self.with_queue(request, admin_url(obj, "unpublish", obj.pk)),
            "history": history,
            "recrawled": last if last is not None and last.recrawl and pending else None,
            "ingest_job_url": ingest_job_url(obj.ingest_job_id),
        }

    def save_model(self, request, obj, form, change):
        # The form's fields are the editable ones (get_fieldsets) and `loaded`, which never
        # counts as changed.
        changes = {name: form.cleaned_data[name] for name in form.changed_data}
        loaded = form.loaded_state
        with conflict_if_stale(loaded):
            if "_approve" in request.POST:
                record_approve(
                    record=obj,
                    actor=request.user,
                    changes=changes,
                    expected_version=loaded.version,
                )
            elif changes:
                record_edit(
                    record=obj,
                    actor=request.user,
                    changes=changes,
                    expected_version=loaded.version,
                )

    def log_change(self, request, obj, message):
        if "_approve" in request.POST:
            return None  # the review history holds the approve and its field edits
        return super().log_change(request, obj, message)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST" and "_approve" in request.POST:
            request.review_queue_before = self.queue(request)
        if request.method == "POST" and object_id is not None:
            refusal = self.published_save_refusal(request, object_id)
            if refusal:
                self.message_user(request, refusal, messages.ERROR)
                return HttpResponseRedirect(self.with_queue(request, request.path))
        # A refusal from a service (a race lost after the form's early check, a permission,
        # a status) has rolled the whole request back: say why and show the current record.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except RecordWriteRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return HttpResponseRedirect(self.with_queue(request, request.path))

    def published_save_refusal(self, request, object_id) -> str:
        """Why a save of a published album by an editor who may not publish is refused, in
        words ('' when it is not such a save). Django would answer 403: the page they saved
        was most likely loaded while the album was pending, and someone approved it since.

        An editor who may publish is never refused here, so their save reads the album once
        (Django's own read), not twice."""
        if self.has_publish_permission(request) or not self.has_kind_change_permission(request):
            return ""  # nothing to refuse here; or not an editor of this kind: Django's 403
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return ""
        try:
            record_check_may_curate(record=obj, actor=request.user, images=False)
        except RecordWriteRefused as refusal:
            # The form's own checks never run (Django answers 403 first): an out-of-date page
            # is said as the form would have said it, which names who published the album.
            try:
                loaded = read_loaded(request.POST.get("loaded"))
            except OutOfDate as out_of_date:
                return str(out_of_date)
            if loaded.version != obj.version:
                return conflict_message(obj, loaded)
            return str(refusal)
        return ""

    def response_change(self, request, obj):
        if "_approve" in request.POST:
            self.message_user(request, f"Approved and published “{obj}”.", messages.SUCCESS)
            return self.next_in_queue(request, obj)
        return super().response_change(request, obj)
