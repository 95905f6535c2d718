"""Approve, reject and unpublish: from the record page (reject and unpublish ask for a
reason on a page of their own) and as bulk actions on the list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import model_ngettext, unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from catalog.models import Record
from catalog.services import RecordWriteRefused
from review.admin.display import thumbnail_url
from review.admin.record_page import RecordPageAdmin
from review.conflicts import OutOfDate, conflict_if_stale, loaded_token, read_loaded
from review.forms import ReasonForm
from review.services import (
    TRANSITIONS,
    Action,
    record_approve,
    record_reject,
    record_unpublish,
)


class TransitionAdmin(RecordPageAdmin):
    """The transitions of the record admins, from the page and in bulk."""

    actions = ["approve_selected", "reject_selected", "unpublish_selected"]

    def decide_on_page(self, request, token: str | None, decide: Callable[[int], Any]) -> bool:
        """Run one transition from a record's page at the version the page was loaded at;
        say why when it is refused. True when it was applied."""
        try:
            loaded = read_loaded(token)
            with conflict_if_stale(loaded):
                decide(loaded.version)
        except RecordWriteRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return False
        return True

    def approve_view(self, request, object_id):
        """Approve the album as it stands, without field edits: the record page's Approve
        button for an editor who may publish but not edit (with the change permission, the
        button submits the main form and saves the edits with the approve)."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return HttpResponseRedirect(reverse("admin:index"))
        if not self.has_publish_permission(request, obj):
            raise PermissionDenied
        if request.method != "POST":
            return self.back_to_page(request, obj.pk)
        request.review_queue_before = self.queue(request)
        approved = self.decide_on_page(
            request,
            request.POST.get("loaded"),
            lambda version: record_approve(
                record=obj, actor=request.user, expected_version=version
            ),
        )
        if not approved:
            return self.back_to_page(request, obj.pk)
        self.message_user(request, f"Approved and published “{obj}”.", messages.SUCCESS)
        return self.next_in_queue(request, obj)

    def transition_view(self, request, object_id, action: str):
        """The intermediate page of reject and unpublish: asks for the reason, then applies."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return HttpResponseRedirect(reverse("admin:index"))
        transition, service = TRANSITIONS[action], self.reason_service(action)
        allowed = (
            self.has_reject_permission(request, obj)
            if action == Action.REJECT
            else self.has_publish_permission(request, obj)
        )
        if not allowed:
            raise PermissionDenied
        token = request.POST.get("loaded") or loaded_token(obj)
        form = ReasonForm(request.POST if "confirm" in request.POST else None)
        if form.is_bound and form.is_valid():
            reason = form.cleaned_data["reason"]
            request.review_queue_before = self.queue(request)
            decided = self.decide_on_page(
                request,
                token,
                lambda version: service(
                    record=obj, actor=request.user, reason=reason, expected_version=version
                ),
            )
            if decided:
                self.message_user(
                    request, f"{transition.done.capitalize()} “{obj}”: {reason}", messages.SUCCESS
                )
                if action == Action.REJECT:
                    return self.next_in_queue(request, obj)
            return self.back_to_page(request, obj.pk)
        return self.reason_page(
            request,
            action=action,
            records=[obj],
            form=form,
            hidden=[("loaded", token)],
            cancel_url=self.with_queue(request, self.change_url(obj.pk)),
        )

    def reason_page(self, request, *, action, records, form, hidden, cancel_url):
        transition = TRANSITIONS[action]
        noun = model_ngettext(self.opts, len(records))  # "runway", "3 runways"
        count = f"{len(records)} " if len(records) != 1 else ""
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"{transition.verb.capitalize()} {count}{noun}",
            "action": action,
            "verb": transition.verb,
            "records": [
                {"record": record, "thumb": thumbnail_url(record.cover)} for record in records
            ],
            "form": form,
            "hidden": hidden,
            "cancel_url": cancel_url,
            "submit_label": f"{transition.verb.capitalize()} {count}{noun}",
            "explanation": (
                "The album leaves the review queue and is not shown on the site."
                if action == Action.REJECT
                else "The album is taken off the site at once. It stays in the archive, "
                "rejected, with this reason."
            ),
        }
        return TemplateResponse(request, "admin/review/transition_reason.html", context)

    # --- bulk actions --------------------------------------------------------------------
    # Each calls its transition's service (record_approve, record_reject, record_unpublish)
    # once per selected album. Approve applies no field edits here, so like reject and
    # unpublish it needs only its own permission: the same as the record page's Approve.
    @admin.action(permissions=["publish"], description="Approve and publish selected albums")
    def approve_selected(self, request, queryset):
        self.apply_to_each(
            request,
            queryset,
            Action.APPROVE,
            lambda record, version: record_approve(
                record=record, actor=request.user, expected_version=version
            ),
        )

    @admin.action(permissions=["reject"], description="Reject selected albums (asks for a reason)")
    def reject_selected(self, request, queryset):
        return self.bulk_with_reason(request, queryset, Action.REJECT)

    @admin.action(
        permissions=["publish"], description="Unpublish selected albums (asks for a reason)"
    )
    def unpublish_selected(self, request, queryset):
        return self.bulk_with_reason(request, queryset, Action.UNPUBLISH)

    @staticmethod
    def reason_service(action: str) -> Callable[..., Any]:
        """The service of a transition that asks for a reason."""
        services: dict[str, Callable[..., Any]] = {
            Action.REJECT: record_reject,
            Action.UNPUBLISH: record_unpublish,
        }
        return services[action]

    def bulk_with_reason(self, request, queryset, action: str):
        form = ReasonForm(request.POST if "confirm" in request.POST else None)
        if form.is_bound and form.is_valid():
            service, reason = self.reason_service(action), form.cleaned_data["reason"]
            self.apply_to_each(
                request,
                queryset,
                action,
                lambda record, version: service(
                    record=record, actor=request.user, reason=reason, expected_version=version
                ),
            )
            return None
        records = self.selected_records(request, queryset)
        hidden: list[tuple[str, Any]] = [("action", request.POST.get("action", ""))]
        for record in records:
            hidden.append((ACTION_CHECKBOX_NAME, record.pk))
            token = request.POST.get(f"loaded_{record.pk}")
            if token:
                hidden.append((f"loaded_{record.pk}", token))
        return self.reason_page(
            request,
            action=action,
            records=records,
            form=form,
            hidden=hidden,
            cancel_url=request.get_full_path(),
        )

    def selected_records(self, request, queryset) -> list[Record]:
        """The albums ticked in the list, in id order.

        Django hands an action the ticked rows that still match the list's tab and filters.
        A ticked album that left them since the list was loaded (another editor approved it
        while this one was on the pending tab) would be skipped without a word; it is added
        back, so the transition service refuses it and the message says what happened.
        """
        records = list(queryset.order_by("pk"))
        ticked = set(request.POST.getlist(ACTION_CHECKBOX_NAME))
        gone = ticked - {str(record.pk) for record in records}
        if gone:
            records += self.get_queryset(request).filter(pk__in=[pk for pk in gone if pk.isdigit()])
            records.sort(key=lambda record: record.pk)
        return records

    def apply_to_each(
        self, request, queryset, action: str, decide: Callable[[Record, int | None], Any]
    ) -> None:
        """`decide(record, version)` once per record, each in its own transaction: a refusal
        leaves the others applied; report both.

        The version is the one the list showed the row at (its loaded token). A row without
        a token checks the status only: one beyond the page, selected with "Select all"
        (docs/editors.md says so), or a request not from the list."""
        transition = TRANSITIONS[action]
        changed, refused = 0, []
        for record in self.selected_records(request, queryset):
            token = request.POST.get(f"loaded_{record.pk}")
            try:
                loaded = read_loaded(token) if token else None
            except OutOfDate as refusal:
                refused.append(f"“{record}”: {refusal}")
                continue
            try:
                with conflict_if_stale(loaded):
                    decide(record, loaded.version if loaded else None)
            except RecordWriteRefused as refusal:
                refused.append(str(refusal))
            else:
                changed += 1
        noun = model_ngettext(self.opts, changed)
        if changed:
            self.message_user(
                request, f"{transition.done.capitalize()} {changed} {noun}.", messages.SUCCESS
            )
        if refused:
            self.message_user(
                request,
                format_html(
                    "{} not {}:{}",
                    len(refused),
                    transition.done,
                    format_html_join("", "<br>• {}", ((line,) for line in refused)),
                ),
                messages.WARNING,
            )
