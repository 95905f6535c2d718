"""Soft claims from the record page: its sign of life, and skipping an album (which lets go
of it and takes the next one of the editor's queue)."""

from __future__ import annotations

from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect, JsonResponse
from django.urls import reverse

from review.admin.queue import back_to_page, next_in_queue, page_album
from review.selectors import claims_of_others
from review.services import claim_take


def claim(modeladmin, request, object_id):
    """The record page's sign of life (review.js, once a minute while the editor is active):
    keeps their claim, or takes the album once the other editor's has lapsed."""
    obj = modeladmin.get_object(request, unquote(object_id))
    if obj is not None and not modeladmin.has_change_permission(request, obj):
        raise PermissionDenied
    if obj is None or request.method != "POST":
        return JsonResponse({"held": False, "open_by": ""}, status=404 if obj is None else 405)
    if claim_take(record=obj, user=request.user):
        return JsonResponse({"held": True, "open_by": ""})
    holder = claims_of_others(model=modeladmin.model, user=request.user, record_ids=[obj.pk])
    return JsonResponse({"held": False, "open_by": holder.get(obj.pk, "")})


def skip(modeladmin, request, object_id):
    """On to the next album of the editor's queue without deciding this one (POST: it lets
    go of this album's claim and claims the next)."""
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_view_or_change_permission)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    if request.method != "POST":
        return back_to_page(modeladmin, request, obj.pk)
    return next_in_queue(modeladmin, request, obj)
