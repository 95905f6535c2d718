"""A repeated album: this album beside the one whose images it repeats, compared as two groups
(each repeating image next to the image it repeats, then the images only this album has), and
the three decisions: reject it as a duplicate of that album, merge the images that album lacks
into it (and reject this one), or "not a duplicate" (the flags go and stay gone)."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.template.response import TemplateResponse

from catalog.models import Record, RecordImage
from catalog.services import RecordWriteRefused
from review.admin.display import admin_url, thumbnail_url
from review.admin.queue import back_to_page, change_url, next_in_queue, queue_ids, with_queue
from review.admin.views.transitions import reject_reposts_of
from review.conflicts import conflict_if_stale, loaded_token, read_loaded
from review.naming import image_number
from review.services import (
    kind_label,
    record_merge_into,
    record_not_duplicate,
    record_reject_as_duplicate,
    repeating_images,
)

ACTIONS = ("reject", "merge", "distinct")


def repeated_album(modeladmin, request, object_id, other_id) -> tuple[Record, Record]:
    obj = modeladmin.get_object(request, unquote(object_id))
    other = modeladmin.get_queryset(request).filter(pk=other_id).first()
    if obj is None or other is None:
        raise Http404("No such album.")
    if not modeladmin.has_view_or_change_permission(request, obj):
        raise PermissionDenied
    return obj, other


def repeat_urls(modeladmin, request, obj: Record, other: Record) -> dict[str, str]:
    """The compare page and the three decisions, each carrying the editor's queue."""
    urls = {"compare": admin_url(obj, "repeats", obj.pk, other.pk)}
    urls.update({action: admin_url(obj, "repeat", obj.pk, other.pk, action) for action in ACTIONS})
    return {
        **{name: with_queue(modeladmin, request, url) for name, url in urls.items()},
        "album": admin_url(other, "change", other.pk),
    }


def repeats(modeladmin, request, object_id, other_id):
    """The two albums compared as groups."""
    obj, other = repeated_album(modeladmin, request, object_id, other_id)
    repeating = repeating_images(record=obj, of=other)
    repeated_ids = {image.pk for image in repeating}
    only_here = [
        image
        for image in obj.images.live().order_by("sort_order", "pk")
        if image.pk not in repeated_ids
    ]
    pending = obj.status == Record.Status.PENDING
    names = two_names(obj, other)
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.opts,
        "original": obj,
        "other": other,
        "title": f"{names['here']} beside {names['there']}",
        "here_name": names["here"],
        "other_name": names["there"],
        "pairs": [pair(image) for image in repeating],
        "only_here": [
            {"image": image, "number": image_number(image), "thumb": thumbnail_url(image)}
            for image in only_here
        ],
        "total": obj.image_count,
        "token": loaded_token(obj),
        "urls": repeat_urls(modeladmin, request, obj, other),
        "album_url": with_queue(modeladmin, request, change_url(modeladmin, obj.pk)),
        "other_url": admin_url(other, "change", other.pk),
        "can_reject": pending and modeladmin.has_reject_permission(request, obj),
        # A merge adds the images only this album has: with none, it would do nothing.
        "can_merge": pending
        and bool(only_here)
        and modeladmin.has_reject_permission(request, obj)
        and modeladmin.has_curate_permission(request, other),
        "can_curate": modeladmin.has_curate_permission(request, obj),
    }
    return TemplateResponse(request, "admin/review/repeats.html", context)


def two_names(obj: Record, other: Record) -> dict[str, str]:
    """What the page calls the two albums: their titles, and when the titles are the same
    (the same show crawled twice), what tells them apart: season code (a runway) or month (a
    street album), source and id."""
    if str(obj) != str(other):
        return {"here": f"“{obj}”", "there": f"“{other}”"}
    return {"here": distinguished(obj), "there": distinguished(other)}


def distinguished(record: Record) -> str:
    source = record.source or "legacy"
    return f"“{record}” ({record.period()}, {source}, {kind_label(type(record))} {record.pk})"


def pair(image: RecordImage) -> dict:
    """A repeating image beside the image it repeats."""
    there = cast(RecordImage, image.dup_of)  # repeating_images: flagged, the other live
    return {
        "here": image,
        "here_number": image_number(image),
        "here_thumb": thumbnail_url(image),
        "there": there,
        "there_number": image_number(there),
        "there_thumb": thumbnail_url(there),
    }


def repeat_decision(modeladmin, request, object_id, other_id, action: str):
    """One of the three decisions (POST, from the record page's banner or the compare page),
    at the version the page was loaded at."""
    obj, other = repeated_album(modeladmin, request, object_id, other_id)
    if request.method != "POST" or action not in ACTIONS:
        return back_to_page(modeladmin, request, obj.pk)
    if action == "distinct":
        allowed = modeladmin.has_curate_permission(request, obj)
    else:
        allowed = modeladmin.has_reject_permission(request, obj)
    if not allowed:
        raise PermissionDenied
    if action != "distinct":
        request.review_queue_before = queue_ids(modeladmin, request)
    try:
        loaded = read_loaded(request.POST.get("loaded"))
        with conflict_if_stale(loaded):
            if action == "reject":
                record_reject_as_duplicate(
                    record=obj, of=other, actor=request.user, expected_version=loaded.version
                )
                message = f"Rejected “{obj}” as a duplicate of “{other}”."
            elif action == "merge":
                _, added = record_merge_into(
                    record=obj, into=other, actor=request.user, expected_version=loaded.version
                )
                message = f"Merged “{obj}” into “{other}” ({added} images added) and rejected it."
            else:
                message = record_not_duplicate(
                    record=obj, of=other, actor=request.user, expected_version=loaded.version
                ).note
    except RecordWriteRefused as refusal:
        modeladmin.message_user(request, str(refusal), messages.ERROR)
        return back_to_page(modeladmin, request, obj.pk)
    modeladmin.message_user(request, message, messages.SUCCESS)
    if action == "distinct":
        return back_to_page(modeladmin, request, obj.pk)
    reject_reposts_of(modeladmin, request, obj)
    return next_in_queue(modeladmin, request, obj)
