"""Approve, reject and unpublish: from the record page (reject and unpublish ask for a
reason on a page of their own) and as bulk actions on the list.

Each calls its transition's service (record_approve; record_reject, whose action says reject
or unpublish) and turns a refusal into a message; the rules are the services'."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import model_ngettext
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from catalog.models import Record
from catalog.services import RecordWriteRefused
from review.admin.display import admin_url, approved_message, thumbnail_url
from review.admin.queue import (
    back_to_page,
    change_url,
    next_in_queue,
    page_album,
    queue_ids,
    with_queue,
)
from review.conflicts import OutOfDate, conflict_if_stale, loaded_token, read_loaded
from review.forms import ReasonForm
from review.selectors import record_published_repeat
from review.services import (
    TRANSITIONS,
    Action,
    record_approve,
    record_reject,
    record_reject_as_repeat,
    record_reposts_reject,
)

Status = Record.Status

# --- from the record page ---------------------------------------------------------------


def approve(modeladmin, request, object_id):
    """Approve the album as it stands, without field edits: the record page's Approve button
    for an editor who may publish but not edit (with the change permission, the button
    submits the main form and saves the edits with the approve: RecordAdmin.save_model)."""
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_publish_permission)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    if request.method != "POST":
        return back_to_page(modeladmin, request, obj.pk)
    request.review_queue_before = queue_ids(modeladmin, request)
    approved = decide_on_page(
        modeladmin,
        request,
        request.POST.get("loaded"),
        lambda version: record_approve(record=obj, actor=request.user, expected_version=version),
    )
    if not approved:
        return back_to_page(modeladmin, request, obj.pk)
    modeladmin.message_user(request, approved_message(obj), messages.SUCCESS)
    reject_reposts_of(modeladmin, request, obj)
    return next_in_queue(modeladmin, request, obj)


def transition(modeladmin, request, object_id, action: str):
    """The intermediate page of reject and unpublish: asks for the reason, then applies."""
    may = (
        modeladmin.has_reject_permission
        if action == Action.REJECT
        else modeladmin.has_publish_permission
    )
    obj = page_album(modeladmin, request, object_id, may=may)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    done = TRANSITIONS[action].done
    token = request.POST.get("loaded") or loaded_token(obj)
    form = ReasonForm(request.POST if "confirm" in request.POST else None)
    if form.is_bound and form.is_valid():
        reason = form.cleaned_data["reason"]
        request.review_queue_before = queue_ids(modeladmin, request)
        decided = decide_on_page(
            modeladmin,
            request,
            token,
            lambda version: record_reject(
                record=obj,
                actor=request.user,
                reason=reason,
                action=action,
                expected_version=version,
            ),
        )
        if decided:
            modeladmin.message_user(
                request, f"{done.capitalize()} “{obj}”: {reason}", messages.SUCCESS
            )
            if action == Action.REJECT:
                reject_reposts_of(modeladmin, request, obj)
                return next_in_queue(modeladmin, request, obj)
        return back_to_page(modeladmin, request, obj.pk)
    return reason_page(
        modeladmin,
        request,
        action=action,
        records=[obj],
        form=form,
        hidden=[("loaded", token)],
        cancel_url=with_queue(modeladmin, request, change_url(modeladmin, obj.pk)),
    )


def reject_reposts_of(modeladmin, request, head: Record) -> None:
    """After a decision on `head`: its re-posts (folded under it in the queue) are rejected
    as duplicates of it, and the messages say which, and which were refused."""
    events, refused = record_reposts_reject(head=head, actor=request.user)
    if events:
        names = ", ".join(f"“{event.record}” (id {event.record.pk})" for event in events)
        modeladmin.message_user(
            request,
            f"Also rejected {len(events)} re-post{'s' if len(events) != 1 else ''} of it as "
            f"duplicates: {names}. Each can be put back from its review history.",
            messages.SUCCESS,
        )
    for refusal in refused:
        modeladmin.message_user(request, f"A re-post was not rejected: {refusal}", messages.WARNING)


def decide_on_page(modeladmin, request, token: str | None, decide: Callable[[int], Any]) -> bool:
    """Run one transition from a record's page at the version the page was loaded at; say
    why when it is refused. True when it was applied."""
    try:
        loaded = read_loaded(token)
        with conflict_if_stale(loaded):
            decide(loaded.version)
    except RecordWriteRefused as refusal:
        modeladmin.message_user(request, str(refusal), messages.ERROR)
        return False
    return True


def reason_page(modeladmin, request, *, action, records, form, hidden, cancel_url):
    transition = TRANSITIONS[action]
    noun = model_ngettext(modeladmin.opts, len(records))  # "runway", "3 runways"
    count = f"{len(records)} " if len(records) != 1 else ""
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.opts,
        "title": f"{transition.verb.capitalize()} {count}{noun}",
        "action": action,
        "verb": transition.verb,
        "records": [{"record": record, "thumb": thumbnail_url(record.cover)} for record in records],
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


# --- bulk actions on the list -------------------------------------------------------------
# Each calls its transition's service once per selected album. Approve applies no field
# edits here, so like reject and unpublish it needs only its own permission: the same as the
# record page's Approve.


@admin.action(permissions=["publish"], description="Approve and publish selected albums")
def approve_selected(modeladmin, request, queryset):
    apply_to_each(
        modeladmin,
        request,
        queryset,
        Action.APPROVE,
        lambda record, version: record_approve(
            record=record, actor=request.user, expected_version=version
        ),
    )


@admin.action(permissions=["reject"], description="Reject selected albums (asks for a reason)")
def reject_selected(modeladmin, request, queryset):
    return bulk_with_reason(modeladmin, request, queryset, Action.REJECT)


@admin.action(permissions=["publish"], description="Unpublish selected albums (asks for a reason)")
def unpublish_selected(modeladmin, request, queryset):
    return bulk_with_reason(modeladmin, request, queryset, Action.UNPUBLISH)


@admin.action(
    permissions=["reject"],
    description="Reject selected albums that repeat a published one (shows which first)",
)
def reject_repeats_selected(modeladmin, request, queryset):
    """Each selected album whose images repeat a published album is rejected as a duplicate
    of it (record_reject_as_repeat); the others are left alone. A page first shows which
    albums, which album each repeats and how many of its images; each rejection can be
    undone from the album's history."""
    if "confirm" in request.POST:
        apply_to_each(
            modeladmin,
            request,
            queryset,
            Action.REJECT_REPEAT,
            lambda record, version: record_reject_as_repeat(
                record=record, actor=request.user, expected_version=version
            ),
        )
        return None
    records = selected_records(modeladmin, request, queryset)
    rows = []
    for record in records:
        repeat = record_published_repeat(record=record)
        rows.append(
            {
                "record": record,
                "thumb": thumbnail_url(record.cover),
                "repeat": repeat,
                "repeat_url": admin_url(repeat.record, "change", repeat.record.pk)
                if repeat
                else "",
            }
        )
    rejected = [row for row in rows if row["repeat"]]
    hidden: list[tuple[str, Any]] = [("action", request.POST.get("action", ""))]
    for record, row in zip(records, rows, strict=True):
        if not row["repeat"]:
            continue  # not sent on: the confirmation acts on the albums it showed
        pk = record.pk
        hidden.append((ACTION_CHECKBOX_NAME, pk))
        token = request.POST.get(f"loaded_{pk}")
        if token:
            hidden.append((f"loaded_{pk}", token))
    noun = model_ngettext(modeladmin.opts, len(rejected))
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.opts,
        "title": "Reject the repeats of published albums",
        "rows": rows,
        "rejected": rejected,
        "left": [row for row in rows if not row["repeat"]],
        "hidden": hidden,
        "submit_label": f"Reject {len(rejected)} {noun} as repeats",
        "cancel_url": request.get_full_path(),
    }
    return TemplateResponse(request, "admin/review/reject_repeats.html", context)


def bulk_with_reason(modeladmin, request, queryset, action: str):
    form = ReasonForm(request.POST if "confirm" in request.POST else None)
    if form.is_bound and form.is_valid():
        reason = form.cleaned_data["reason"]
        apply_to_each(
            modeladmin,
            request,
            queryset,
            action,
            lambda record, version: record_reject(
                record=record,
                actor=request.user,
                reason=reason,
                action=action,
                expected_version=version,
            ),
        )
        return None
    records = selected_records(modeladmin, request, queryset)
    hidden: list[tuple[str, Any]] = [("action", request.POST.get("action", ""))]
    for record in records:
        hidden.append((ACTION_CHECKBOX_NAME, record.pk))
        token = request.POST.get(f"loaded_{record.pk}")
        if token:
            hidden.append((f"loaded_{record.pk}", token))
    return reason_page(
        modeladmin,
        request,
        action=action,
        records=records,
        form=form,
        hidden=hidden,
        cancel_url=request.get_full_path(),
    )


def selected_records(modeladmin, request, queryset) -> list[Record]:
    """The albums ticked in the list, in id order.

    Django hands an action the ticked rows that still match the list's tab and filters. A
    ticked album that left them since the list was loaded (another editor approved it while
    this one was on the pending tab) would be skipped without a word; it is added back, so
    the transition service refuses it and the message says what happened.
    """
    records = list(queryset.order_by("pk"))
    ticked = set(request.POST.getlist(ACTION_CHECKBOX_NAME))
    gone = ticked - {str(record.pk) for record in records}
    if gone:
        records += modeladmin.get_queryset(request).filter(
            pk__in=[pk for pk in gone if pk.isdigit()]
        )
        records.sort(key=lambda record: record.pk)
    return records


def apply_to_each(
    modeladmin, request, queryset, action: str, decide: Callable[[Record, int | None], Any]
) -> None:
    """`decide(record, version)` once per record, each in its own transaction: a refusal
    leaves the others applied; report both.

    The version is the one the list showed the row at (its loaded token). A row without a
    token checks the status only: one beyond the page, selected with "Select all"
    (docs/editors.md says so), or a request not from the list."""
    transition = TRANSITIONS[action]
    changed, refused = 0, []
    for record in selected_records(modeladmin, request, queryset):
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
            if transition.source == Status.PENDING:
                reject_reposts_of(modeladmin, request, record)
    noun = model_ngettext(modeladmin.opts, changed)
    if changed:
        modeladmin.message_user(
            request, f"{transition.done.capitalize()} {changed} {noun}.", messages.SUCCESS
        )
    if refused:
        modeladmin.message_user(
            request,
            format_html(
                "{} not {}:{}",
                len(refused),
                transition.done,
                format_html_join("", "<br>• {}", ((line,) for line in refused)),
            ),
            messages.WARNING,
        )
