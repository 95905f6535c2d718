"""The compare view: a near-duplicate beside the image it repeats, at the same size, with
what tells them apart, and "delete this one". With ?mode=duplicates it steps through every
flagged image of the album (the grid's "Review duplicates")."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import QueryDict
from django.template.response import TemplateResponse

from catalog.models import Record, RecordImage
from review.admin.display import (
    admin_url,
    hamming_distance,
    original_url,
    preview_url,
    rendition_note,
)
from review.admin.queue import back_to_page, change_url, with_queue
from review.conflicts import loaded_token
from review.naming import image_name


def compare_url(request, obj: Record, image_id: int, *, mode: bool = False) -> str:
    """The compare view of one near-duplicate; `mode`: stepping through the album's."""
    query = QueryDict(mutable=True)
    if request.GET.get("_changelist_filters"):
        query["_changelist_filters"] = request.GET["_changelist_filters"]
    if mode:
        query["mode"] = "duplicates"
    url = admin_url(obj, "compare", obj.pk, image_id)
    return f"{url}?{query.urlencode()}" if query else url


def compare(modeladmin, request, object_id, image_id):
    obj = modeladmin.get_object(request, unquote(object_id))
    if obj is None or not modeladmin.has_view_or_change_permission(request, obj):
        raise PermissionDenied
    record_fk = modeladmin.record_fk
    images = obj.images.live().select_related("dup_of", f"dup_of__{record_fk}")
    image = images.filter(pk=image_id).first()
    if image is None:
        modeladmin.message_user(request, "That image is no longer in this album.", messages.WARNING)
        return back_to_page(modeladmin, request, obj.pk)
    mode = request.GET.get("mode") == "duplicates"
    flagged = list(
        images.filter(is_duplicate=True).order_by("sort_order", "pk").values_list("pk", flat=True)
    )
    album_url = with_queue(modeladmin, request, change_url(modeladmin, obj.pk))
    album_url += f"#image-{image.pk}"
    at = flagged.index(image.pk) if image.pk in flagged else None
    following = (
        compare_url(request, obj, flagged[at + 1], mode=True)
        if mode and at is not None and at + 1 < len(flagged)
        else ""
    )
    previous = compare_url(request, obj, flagged[at - 1], mode=True) if mode and at else ""
    can_curate = modeladmin.has_curate_permission(request, obj)
    other = image.dup_of if image.is_duplicate else None
    # After "delete this one": the next flagged image, or back to the album with the focus on
    # the image that takes the deleted one's place (the next, else the one before).
    order = list(images.order_by("sort_order", "pk").values_list("pk", flat=True))
    album = album_url.split("#")[0]

    def after_delete(side: RecordImage) -> str:
        if following:
            return following
        if side.pk not in order or len(order) == 1:
            return f"{album}#images"
        at = order.index(side.pk)
        return f"{album}#image-{order[at + 1] if at + 1 < len(order) else order[at - 1]}"

    sides = [compare_side(modeladmin, obj, image, can_curate, after_delete(image))]
    if other is not None:
        sides.append(compare_side(modeladmin, obj, other, can_curate, after_delete(other)))
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.opts,
        "original": obj,
        "title": f"Compare {image_name(image)} of “{obj}”",
        "sides": sides,
        "distance": hamming_distance(image, other),
        "token": loaded_token(obj),
        "mode": mode,
        "position": at + 1 if at is not None else None,
        "flagged_total": len(flagged),
        "next_url": following,
        "previous_url": previous,
        "album_url": album_url,
    }
    return TemplateResponse(request, "admin/review/compare.html", context)


def compare_side(
    modeladmin, obj: Record, image: RecordImage, can_curate: bool, after_delete: str
) -> dict[str, Any]:
    record = getattr(image, modeladmin.record_fk)
    here = record.pk == obj.pk
    return {
        "image": image,
        "name": image_name(image),
        # The 1200 px rendition, the original a link away: a page never loads originals.
        "url": preview_url(image),
        "original_url": original_url(image),
        "rendition_note": rendition_note(image),
        "album": record,
        "here": here,
        "album_url": ""
        if record.deleted_at is not None
        else admin_url(record, "change", record.pk) + f"#image-{image.pk}",
        "deleted": image.deleted_at is not None,
        "after_delete_url": after_delete,
        "delete_url": admin_url(obj, "image", obj.pk, image.pk, "delete")
        if here and can_curate and image.deleted_at is None
        else "",
    }
