"""Embargoes from the record page: the banner that says when an album goes live or expires,
and the small form that sets and clears those times, or approves a pending album "for" a
time. Times are typed and shown in the editors' time zone (review.middleware) and stored in
UTC; each button calls its service (record_schedule, record_approve_for) and turns a refusal
(ScheduleRefused, a conflict) into a message; the rules are the services'."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from catalog.models import Record
from review.admin.display import admin_url, embargo_lines, zone_name
from review.admin.queue import back_to_page, next_in_queue, page_album, queue_ids, with_queue
from review.admin.views.transitions import decide_on_page, reject_reposts_of
from review.services import record_approve_for, record_schedule

Status = Record.Status
ANCHOR = "#review-embargo"
# What the browser's datetime-local input sends and shows: minutes, no zone (the editors').
INPUT_FORMAT = "%Y-%m-%dT%H:%M"


def _time_field(label: str) -> forms.DateTimeField:
    """An optional time (empty clears it), in the browser's datetime-local input, whose value
    belongs to #embargo-form (outside the page's main form)."""
    return forms.DateTimeField(
        label=label,
        required=False,
        input_formats=[INPUT_FORMAT],
        widget=forms.DateTimeInput(
            format=INPUT_FORMAT, attrs={"type": "datetime-local", "form": "embargo-form"}
        ),
    )


class EmbargoForm(forms.Form):
    """A go-live and an expiry, each optional, read in the current time zone: the editors'
    one in the admin. Labelled as the history names the fields (the models' verbose names)."""

    go_live_at = _time_field("Go live at")
    expires_at = _time_field("Expire at")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            field.widget.attrs["id"] = f"embargo-{name.replace('_', '-')}"


def embargo_context(modeladmin, request, obj: Record) -> dict[str, Any]:
    """What the record page's embargo panel shows: the banner's sentences, the form (for an
    editor who may publish), and its buttons' URLs."""
    now = timezone.now()
    may_schedule = modeladmin.has_publish_permission(request, obj)
    return {
        "lines": embargo_lines(obj, now),
        "scheduled": obj.is_scheduled(now),
        "zone": zone_name(now),
        "form": EmbargoForm(initial={"go_live_at": obj.go_live_at, "expires_at": obj.expires_at})
        if may_schedule
        else None,
        "schedule_url": with_queue(modeladmin, request, admin_url(obj, "schedule", obj.pk)),
        "can_approve_for": may_schedule and obj.status == Status.PENDING,
        "approve_for_url": with_queue(modeladmin, request, admin_url(obj, "approvefor", obj.pk)),
    }


def _posted(modeladmin, request, object_id):
    """The album and the posted form, once the editor may schedule it; (None, None) for an
    album that is gone."""
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_publish_permission)
    return (obj, EmbargoForm(request.POST)) if obj is not None else (None, None)


def _form_refusal(modeladmin, request, form: EmbargoForm) -> bool:
    """Say what the form could not read; True when it could read everything."""
    if form.is_valid():
        return True
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else name
        for error in errors:
            modeladmin.message_user(request, f"{label}: {error}", messages.ERROR)
    return False


def schedule(modeladmin, request, object_id):
    """Set or clear the album's go-live and expiry (an empty field clears its time)."""
    obj, form = _posted(modeladmin, request, object_id)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    if request.method != "POST" or not _form_refusal(modeladmin, request, form):
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    events = []
    done = decide_on_page(
        modeladmin,
        request,
        request.POST.get("loaded"),
        lambda version: events.append(
            record_schedule(
                record=obj,
                actor=request.user,
                go_live_at=form.cleaned_data["go_live_at"],
                expires_at=form.cleaned_data["expires_at"],
                expected_version=version,
            )
        ),
    )
    if done:
        if events[0] is None:
            modeladmin.message_user(
                request, f"“{obj}” already had these times: nothing changed.", messages.INFO
            )
        else:
            obj.refresh_from_db()
            modeladmin.message_user(request, _saved(obj), messages.SUCCESS)
    return back_to_page(modeladmin, request, obj.pk, ANCHOR)


def approve_for(modeladmin, request, object_id):
    """Approve a pending album to go live at the form's go-live (and expire at its expiry):
    a go-live already past approves it now."""
    obj, form = _posted(modeladmin, request, object_id)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    if request.method != "POST" or not _form_refusal(modeladmin, request, form):
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    if form.cleaned_data["go_live_at"] is None:
        modeladmin.message_user(
            request,
            "Give the time it goes live to approve it for that time, or use Approve and publish.",
            messages.ERROR,
        )
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    request.review_queue_before = queue_ids(modeladmin, request)
    approved = decide_on_page(
        modeladmin,
        request,
        request.POST.get("loaded"),
        lambda version: record_approve_for(
            record=obj,
            actor=request.user,
            go_live_at=form.cleaned_data["go_live_at"],
            expires_at=form.cleaned_data["expires_at"],
            expected_version=version,
        ),
    )
    if not approved:
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    obj.refresh_from_db()
    modeladmin.message_user(request, f"Approved “{obj}”. {_saved(obj)}", messages.SUCCESS)
    reject_reposts_of(modeladmin, request, obj)
    return next_in_queue(modeladmin, request, obj)


def _saved(obj: Record) -> str:
    """What the album's times are now, for the message after a change."""
    lines = embargo_lines(obj)
    if not lines:
        published = obj.status == Status.PUBLISHED
        return f"“{obj}” has no go-live or expiry" + (
            ": it is on the public site now." if published else "."
        )
    return f"“{obj}”: " + ". ".join(lines) + "."
