"""The record page: what its review panel shows, and saving its fields (with or without
approve). Plain functions of the record admin, which calls them from Django's change view
hooks (RecordAdmin.render_change_form, save_model, changeform_view)."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.utils import unquote

from catalog.models import Record
from catalog.services import RecordWriteRefused, record_check_may_curate
from review.admin.display import admin_url, ingest_job_url
from review.admin.filters import Status
from review.admin.queue import changelist_url, queue_label, queue_place, with_queue
from review.admin.views.curation import grid_context
from review.admin.views.embargo import embargo_context
from review.admin.views.previews import previews_context
from review.admin.views.repeats import repeat_urls
from review.conflicts import OutOfDate, conflict_if_stale, conflict_message, read_loaded
from review.models import ReviewEvent
from review.selectors import (
    HistoryLine,
    claims_of_others,
    record_review_history,
    records_repeats,
    records_reposts,
)
from review.services import claim_take, record_approve, record_edit


def review_context(modeladmin, request, obj: Record, token: str) -> dict[str, Any]:
    pending = obj.status == Status.PENDING
    history = record_review_history(record=obj)
    last = history[-1] if history else None
    position, total = queue_place(modeladmin, request, obj)
    holder = ""
    # Only an editor who may act on the album holds it; a view-only reader never does.
    may_act = modeladmin.has_change_permission(request, obj)
    if not (may_act and claim_take(record=obj, user=request.user)):
        others = claims_of_others(model=modeladmin.model, user=request.user, record_ids=[obj.pk])
        holder = others.get(obj.pk, "")

    def queued(view: str) -> str:
        return with_queue(modeladmin, request, admin_url(obj, view, obj.pk))

    repeated = records_repeats(records=[obj]).get(obj.pk, [])
    return {
        **grid_context(modeladmin, request, obj),
        # The albums this one repeats, most repeated first, with the decisions on the first.
        "repeats": [
            {"repeat": repeat, "urls": repeat_urls(modeladmin, request, obj, repeat.record)}
            for repeat in repeated
        ],
        # A merge adds the images the other album lacks: none to add, no merge to offer.
        "can_merge": pending
        and bool(repeated)
        and repeated[0].count < repeated[0].total
        and modeladmin.has_reject_permission(request, obj)
        and modeladmin.has_curate_permission(request, repeated[0].record),
        "token": token,
        "queue_position": position,
        "queue_total": total,
        "queue_label": queue_label(request),
        "queue_url": changelist_url(modeladmin, request),
        "open_by": holder,
        "claim_url": admin_url(obj, "claim", obj.pk),
        "skip_url": queued("skip"),
        "published_read_only": modeladmin.published_read_only(request, obj)
        and modeladmin.has_kind_change_permission(request, obj),
        # Approving needs the publish permission, from this page as from the list. With the
        # change permission too, the page's Approve button saves the field edits with it
        # (the main form); without it, the page is read-only and its Approve button approves
        # the album as it stands, like the bulk action.
        "can_approve": pending and modeladmin.has_publish_permission(request, obj),
        "approve_saves_edits": modeladmin.has_change_permission(request, obj),
        "can_reject": pending and modeladmin.has_reject_permission(request, obj),
        "can_unpublish": obj.status == Status.PUBLISHED
        and modeladmin.has_publish_permission(request, obj),
        "approve_url": queued("approve"),
        "reject_url": queued("reject"),
        "unpublish_url": queued("unpublish"),
        "can_take_down": modeladmin.has_takedown_permission(request, obj),
        "takedown_url": queued("takedown"),
        "history": history,
        # The one row an editor can undo: the last one, a rejection as a repeat, with nothing
        # written to the album since (review.services.record_reject_undo says the same).
        "undo": undo_line(modeladmin, request, obj, history),
        # Re-posts of this album by its source, folded under it in the queue and decided with
        # it (views.transitions.reject_reposts_of).
        "reposts": records_reposts(records=[obj]).get(obj.pk, []) if pending else [],
        "recrawled": last if last is not None and last.recrawl and pending else None,
        "ingest_job_url": ingest_job_url(obj.ingest_job_id),
        # The go-live and expiry: the banner, and the form that sets them (views.embargo).
        "embargo": embargo_context(modeladmin, request, obj),
        "previews": previews_context(modeladmin, request, obj),
    }


def undo_line(modeladmin, request, obj: Record, history: list[HistoryLine]) -> dict | None:
    """The history row a button can undo, with its URL, or None."""
    last = history[-1] if history else None
    if (
        last is None
        or last.action_code != ReviewEvent.Action.REJECT_REPEAT
        or last.record_version != obj.version
        or not modeladmin.has_reject_permission(request, obj)
    ):
        return None
    url = with_queue(modeladmin, request, admin_url(obj, "undo", obj.pk, last.event_id))
    return {"event_id": last.event_id, "url": url}


def save(request, obj: Record, form) -> None:
    """The page's Save (field edits) or its Approve (the edits and the approve, one write)."""
    # The form's fields are the editable ones (RecordAdmin.get_fieldsets) and `loaded`,
    # which never counts as changed.
    changes = {name: form.cleaned_data[name] for name in form.changed_data}
    loaded = form.loaded_state
    with conflict_if_stale(loaded):
        if "_approve" in request.POST:
            record_approve(
                record=obj, actor=request.user, changes=changes, expected_version=loaded.version
            )
        elif changes:
            record_edit(
                record=obj, actor=request.user, changes=changes, expected_version=loaded.version
            )


def published_save_refusal(modeladmin, request, object_id) -> str:
    """Why a save of a published album by an editor who may not publish is refused, in words
    ('' when it is not such a save). Django would answer 403: the page they saved was most
    likely loaded while the album was pending, and someone approved it since.

    An editor who may publish is never refused here, so their save reads the album once
    (Django's own read), not twice."""
    if modeladmin.has_publish_permission(request) or not modeladmin.has_kind_change_permission(
        request
    ):
        return ""  # nothing to refuse here; or not an editor of this kind: Django's 403
    obj = modeladmin.get_object(request, unquote(object_id))
    if obj is None:
        return ""
    try:
        record_check_may_curate(record=obj, actor=request.user, images=False)
    except RecordWriteRefused as refusal:
        # The form's own checks never run (Django answers 403 first): an out-of-date page is
        # said as the form would have said it, which names who published the album.
        try:
            loaded = read_loaded(request.POST.get("loaded"))
        except OutOfDate as out_of_date:
            return str(out_of_date)
        if loaded.version != obj.version:
            return conflict_message(obj, loaded)
        return str(refusal)
    return ""
