"""The image grid of a record page and what editors do to it: the image operations (in
the page, from review.js, or as a plain form post) and attaching street images."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme

from catalog.models import THUMBNAIL_WIDTH, Record, RecordImage, StreetSnapImage
from catalog.services import RecordWriteRefused
from review.admin.display import (
    IMAGE_ID,
    admin_url,
    original_url,
    preview_url,
    rendition_note,
    thumbnail_is_original,
    thumbnail_url,
)
from review.admin.queue import back_to_page, with_queue
from review.admin.views.compare import compare_url
from review.conflicts import Loaded, conflict_if_stale, loaded_token, read_loaded
from review.naming import image_number
from review.services import Curated, images_attach

# A review service of one image: image_delete, image_make_cover, image_attach_to_previous...
# (each record admin's image_operations names its own, by the operation its URL names).
ImageOperation = Callable[..., Curated]


def grid_context(modeladmin, request, obj: Record) -> dict[str, Any]:
    """The image grid: what the record page shows, and what an image operation sent from it
    (review.js) gets back to redraw the grid without reloading the page."""
    record_fk = modeladmin.record_fk
    # The duplicated image's album comes along: a tile names a deleted album without a link,
    # and the page's query count stays the same however many tiles do.
    images = list(
        obj.images.live()
        .select_related("dup_of", f"dup_of__{record_fk}")
        .order_by("sort_order", "pk")
    )
    # One reverse() for every tile, not one per tile: at 500 images the URL resolver would
    # be a good part of the page's time.
    urls = {
        # With the list's filters, so the redrawn grid's links keep the editor's queue.
        "op": with_queue(
            modeladmin, request, admin_url(obj, "image", obj.pk, IMAGE_ID, "operation")
        ),
        "compare": compare_url(request, obj, IMAGE_ID),
    }
    if modeladmin.has_takedown_permission(request, obj):
        urls["takedown"] = with_queue(
            modeladmin, request, admin_url(obj, "takedownimage", obj.pk, IMAGE_ID)
        )
    tiles = {image.pk: tile(modeladmin, obj, image, urls) for image in images}
    flagged = [image for image in images if image.is_duplicate]
    return {
        "has_details": modeladmin.model.image_model().has_details,
        "groups": modeladmin.image_groups(images, tiles),
        "image_total": len(images),
        "mains": [image for image in images if not getattr(image, "is_detail", False)],
        "can_curate": modeladmin.has_curate_permission(request, obj),
        "attach_url": admin_url(obj, "attach", obj.pk),
        # review.js puts the image's id and the operation in: the tiles' buttons.
        "op_url": urls["op"],
        "image_id_placeholder": IMAGE_ID,
        "duplicate_total": len(flagged),
        "review_duplicates_url": (
            compare_url(request, obj, flagged[0].pk, mode=True) if flagged else ""
        ),
    }


def tile(modeladmin, obj: Record, image: RecordImage, urls: dict[str, str]) -> dict[str, Any]:
    dup = image.dup_of
    dup_url = dup_elsewhere = dup_name = ""
    if image.is_duplicate and dup is not None:
        dup_record = getattr(dup, modeladmin.record_fk)
        dup_url = f"#image-{dup.pk}"
        dup_name = f"image {image_number(dup)}"
        if dup_record.deleted_at is not None:
            # Its album's page no longer exists: say where it was, link nowhere.
            dup_elsewhere, dup_url = "in a deleted album", ""
        else:
            if dup_record.pk != obj.pk:
                dup_elsewhere = "in another album"
                dup_url = admin_url(modeladmin.model, "change", dup_record.pk) + dup_url
            if dup.deleted_at is not None:
                dup_elsewhere = f"{dup_elsewhere}, deleted".lstrip(", ")
        if dup_record.pk != obj.pk:
            dup_name = f"{dup_name} (id {dup.pk})"  # the ingest report names it by id
    pk = f"/{image.pk}/"
    return {
        "image": image,
        "number": image_number(image),
        # The tile shows the 400 rendition (a placeholder while there is none); the full-size
        # view the 1200 one; only a click on the link opens the original.
        "full_url": original_url(image),
        "thumb": thumbnail_url(image),
        "preview": preview_url(image),
        "thumb_height": (image.rendition(THUMBNAIL_WIDTH) or {}).get("height"),
        "thumb_is_original": thumbnail_is_original(image),
        "rendition_note": rendition_note(image),
        "compare_url": urls["compare"].replace(f"/{IMAGE_ID}/", pk) if dup_name else "",
        "takedown_url": urls["takedown"].replace(f"/{IMAGE_ID}/", pk) if "takedown" in urls else "",
        "is_cover": obj.cover_id == image.pk,
        "dup_url": dup_url,
        "dup_name": dup_name,
        "dup_elsewhere": dup_elsewhere,
    }


def image_operation(modeladmin, request, object_id, image_id, operation):
    """One image button (delete, cover, and the street ones): POST only (a GET, e.g. a
    reloaded URL, just goes back to the grid); CSRF-protected by admin_view like every
    admin page."""
    if request.method != "POST":
        return back_to_page(modeladmin, request, object_id, "#images")

    def operate(obj: Record, loaded: Loaded) -> Curated:
        service = modeladmin.image_operations.get(operation)
        if service is None:
            raise RecordWriteRefused(f"Unknown image operation “{operation}”.")
        return service(
            image=image_stub(modeladmin, obj, image_id),
            actor=request.user,
            expected_version=loaded.version,
        )

    return curate(modeladmin, request, object_id, operate)


def attach(modeladmin, request, object_id):
    """Attach the selected street images as details of the chosen main image."""
    if request.method != "POST" or not modeladmin.model.image_model().has_details:
        return back_to_page(modeladmin, request, object_id, "#images")

    def operate(obj: Record, loaded: Loaded) -> Curated:
        try:
            main_id = int(request.POST.get("main", ""))
            image_ids = sorted({int(pk) for pk in request.POST.getlist("images")})
        except ValueError:
            raise RecordWriteRefused("Choose a main image and at least one image.") from None
        # The street snaps' admin: its stubs are street images.
        return images_attach(
            images=[cast(StreetSnapImage, image_stub(modeladmin, obj, i)) for i in image_ids],
            main=cast(StreetSnapImage, image_stub(modeladmin, obj, main_id)),
            actor=request.user,
            expected_version=loaded.version,
        )

    return curate(modeladmin, request, object_id, operate)


def image_stub(modeladmin, obj: Record, image_id: int) -> RecordImage:
    # Only the ids: the service re-reads the image under the record's lock and checks that it
    # belongs to this record.
    return modeladmin.image_model(pk=image_id, **{f"{modeladmin.record_fk}_id": obj.pk})


def curation_target(modeladmin, request, object_id: str) -> tuple[Record, Loaded]:
    obj = modeladmin.get_object(request, unquote(object_id))
    # The kind's permissions only: whether this album, as the write finds it under its lock,
    # may be curated by this editor (a published one) is the service's to say, after it has
    # said whether the page is out of date.
    if obj is None or not modeladmin.has_curate_permission(request):
        raise PermissionDenied
    return obj, read_loaded(request.POST.get("loaded"))


def curate(
    modeladmin, request, object_id, operation: Callable[[Record, Loaded], Curated]
) -> HttpResponse:
    """Run one image operation (a review service, which keeps a published album's history);
    report it; back to the grid.

    From review.js (X-Requested-With: fetch) the answer is JSON instead: the message, the
    album's new loaded token and the grid redrawn, so a 500-image album is not reloaded for
    one click. Either way the same service and the same stale check."""
    in_page = request.headers.get("X-Requested-With") == "fetch"
    try:
        # The change-log entry commits with the write, as in Django's own change view: a
        # conflict message names the editor from it (review.conflicts).
        with transaction.atomic():
            obj, loaded = curation_target(modeladmin, request, object_id)
            with conflict_if_stale(loaded):
                record, message = operation(obj, loaded)
            modeladmin.log_change(request, obj, message)
    except RecordWriteRefused as refusal:
        if in_page:
            return JsonResponse({"ok": False, "message": str(refusal)}, status=409)
        modeladmin.message_user(request, str(refusal), messages.ERROR)
    else:
        if in_page:
            return grid_response(modeladmin, request, object_id, message, record)
        modeladmin.message_user(request, message, messages.SUCCESS)
    following = request.POST.get("next", "")
    if following and url_has_allowed_host_and_scheme(
        following, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return HttpResponseRedirect(following)
    return back_to_page(modeladmin, request, object_id, "#images")


def grid_response(modeladmin, request, object_id, message: str, written) -> JsonResponse:
    # The token comes from the record as this write left it, read under its lock: a read
    # after the commit could carry another editor's write into this page's token.
    obj = cast(Record, modeladmin.get_object(request, unquote(object_id)))  # just written
    review = {**grid_context(modeladmin, request, obj), "token": loaded_token(written)}
    grid = render_to_string(
        "admin/review/includes/image_grid.html", {"review": review}, request=request
    )
    return JsonResponse(
        {
            "ok": True,
            "message": message,
            "token": review["token"],
            "image_total": review["image_total"],
            "grid": grid,
        }
    )
