"""Undo a rejection as a repeat, from the album's review history: the album goes back to the
queue, pending, through review.services.record_reject_undo (which refuses when the album
changed since); a refusal becomes a message."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404

from catalog.services import RecordWriteRefused
from review.admin.queue import back_to_page
from review.models import ReviewEvent
from review.services import record_reject_undo


def undo_rejection(modeladmin, request, object_id, event_id: int):
    obj = modeladmin.get_object(request, unquote(object_id))
    if obj is None:
        raise Http404("No such album.")
    if not modeladmin.has_reject_permission(request, obj):
        raise PermissionDenied
    if request.method != "POST":
        return back_to_page(modeladmin, request, obj.pk, "#review-history")
    # The row must be of this album: an id of another album's row is no row of this page.
    mine = Q(runway=obj) if modeladmin.record_fk == "runway" else Q(street_snap=obj)
    event = ReviewEvent.objects.filter(mine, pk=event_id).first()
    if event is None:
        raise Http404("No such row in this album's history.")
    try:
        record_reject_undo(event=event, actor=request.user)
    except RecordWriteRefused as refusal:
        modeladmin.message_user(request, str(refusal), messages.ERROR)
    else:
        modeladmin.message_user(
            request, f"“{obj}” is back in the review queue, pending.", messages.SUCCESS
        )
    return back_to_page(modeladmin, request, obj.pk)
