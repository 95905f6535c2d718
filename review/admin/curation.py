"""The image grid of a record page and what editors do to it: the image operations (in
the page or as a plain form post) and the near-duplicate compare view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, cast

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse, QueryDict
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.utils.http import url_has_allowed_host_and_scheme

from catalog.models import THUMBNAIL_WIDTH, Record, RecordImage, StreetSnap, StreetSnapImage
from catalog.services import RecordWriteRefused
from review.admin.display import (
    IMAGE_ID,
    admin_url,
    hamming_distance,
    original_url,
    rendition_note,
    thumbnail_is_original,
    thumbnail_url,
)
from review.admin.queue import QueueAdmin
from review.conflicts import Loaded, conflict_if_stale, loaded_token, read_loaded
from review.naming import image_name, image_number
from review.services import Curated, image_delete, image_make_cover, images_attach

# A review service of one image: image_delete, image_make_cover, image_attach_to_previous...
ImageOperation = Callable[..., Curated]


class CurationAdmin(QueueAdmin):
    """The image grid, the image operations and the compare view of the record admins."""

    # The review service of each image button, by the operation its URL names (the street
    # snap admin adds the street ones).
    image_operations: ClassVar[dict[str, ImageOperation]] = {
        "delete": image_delete,
        "cover": image_make_cover,
    }

    def grid_context(self, request, obj: Record) -> dict[str, Any]:
        """The image grid: what the record page shows, and what an image operation sent from
        it (review.js) gets back to redraw the grid without reloading the page."""
        # The duplicated image's album comes along: a tile names a deleted album without
        # a link, and the page's query count stays the same however many tiles do.
        images = list(
            obj.images.live()
            .select_related("dup_of", f"dup_of__{self.record_fk}")
            .order_by("sort_order", "pk")
        )
        # One reverse() for every tile, not one per tile: at 500 images the URL resolver
        # would be a good part of the page's time.
        urls = {
            # With the list's filters, so the redrawn grid's links keep the editor's queue.
            "op": self.with_queue(request, admin_url(obj, "image", obj.pk, IMAGE_ID, "operation")),
            "compare": self.compare_url(request, obj, IMAGE_ID),
        }
        tiles = {image.pk: self.tile(obj, image, urls) for image in images}
        flagged = [image for image in images if image.is_duplicate]
        return {
            "is_street": self.model is StreetSnap,
            "groups": self.image_groups(images, tiles),
            "image_total": len(images),
            "mains": [image for image in images if not getattr(image, "is_detail", False)],
            "can_curate": self.has_curate_permission(request, obj),
            "attach_url": admin_url(obj, "attach", obj.pk),
            # review.js puts the image's id and the operation in: the tiles' buttons.
            "op_url": urls["op"],
            "image_id_placeholder": IMAGE_ID,
            "duplicate_total": len(flagged),
            "review_duplicates_url": (
                self.compare_url(request, obj, flagged[0].pk, mode=True) if flagged else ""
            ),
        }

    def compare_url(self, request, obj: Record, image_id: int, *, mode: bool = False) -> str:
        """The compare view of one near-duplicate; `mode`: stepping through the album's."""
        query = QueryDict(mutable=True)
        if request.GET.get("_changelist_filters"):
            query["_changelist_filters"] = request.GET["_changelist_filters"]
        if mode:
            query["mode"] = "duplicates"
        url = admin_url(obj, "compare", obj.pk, image_id)
        return f"{url}?{query.urlencode()}" if query else url

    def tile(self, obj: Record, image: RecordImage, urls: dict[str, str]) -> dict[str, Any]:
        dup = image.dup_of
        dup_url = dup_elsewhere = dup_name = ""
        if image.is_duplicate and dup is not None:
            dup_record = getattr(dup, self.record_fk)
            dup_url = f"#image-{dup.pk}"
            dup_name = f"image {image_number(dup)}"
            if dup_record.deleted_at is not None:
                # Its album's page no longer exists: say where it was, link nowhere.
                dup_elsewhere, dup_url = "in a deleted album", ""
            else:
                if dup_record.pk != obj.pk:
                    dup_elsewhere = "in another album"
                    dup_url = admin_url(self.model, "change", dup_record.pk) + dup_url
                if dup.deleted_at is not None:
                    dup_elsewhere = f"{dup_elsewhere}, deleted".lstrip(", ")
            if dup_record.pk != obj.pk:
                dup_name = f"{dup_name} (id {dup.pk})"  # the ingest report names it by id
        pk = f"/{image.pk}/"
        return {
            "image": image,
            "number": image_number(image),
            # The original opens full size; the tile shows the 400 rendition where there is one.
            "full_url": original_url(image),
            "thumb": thumbnail_url(image),
            "thumb_height": (image.rendition(THUMBNAIL_WIDTH) or {}).get("height"),
            "thumb_is_original": thumbnail_is_original(image),
            "rendition_note": rendition_note(image),
            "compare_url": urls["compare"].replace(f"/{IMAGE_ID}/", pk) if dup_name else "",
            "is_cover": obj.cover_id == image.pk,
            "dup_url": dup_url,
            "dup_name": dup_name,
            "dup_elsewhere": dup_elsewhere,
        }

    def image_groups(self, images: list, tiles: dict) -> list[dict[str, Any]]:
        raise NotImplementedError

    def curation_target(self, request, object_id: str) -> tuple[Record, Loaded]:
        obj = self.get_object(request, unquote(object_id))
        # The kind's permissions only: whether this album, as the write finds it under its
        # lock, may be curated by this editor (a published one) is the service's to say,
        # after it has said whether the page is out of date.
        if obj is None or not self.has_curate_permission(request):
            raise PermissionDenied
        return obj, read_loaded(request.POST.get("loaded"))

    def image_stub(self, obj: Record, image_id: int) -> RecordImage:
        # Only the ids: the service re-reads the image under the record's lock and checks
        # that it belongs to this record.
        # A kind's image model; the plugin refuses the fields of the abstract one it is typed as.
        return self.image_model(pk=image_id, **{f"{self.record_fk}_id": obj.pk})  # type: ignore[misc]

    def image_operation_view(self, request, object_id, image_id, operation):
        # POST only (a GET, e.g. a reloaded URL, just goes back to the grid); CSRF-protected
        # by admin_view like every admin page.
        if request.method != "POST":
            return self.back_to_page(request, object_id, "#images")
        return self.curate(
            request,
            object_id,
            lambda obj, loaded: self.operate(request, obj, loaded, image_id, operation),
        )

    def operate(self, request, obj, loaded: Loaded, image_id: int, operation: str) -> Curated:
        service = self.image_operations.get(operation)
        if service is None:
            raise RecordWriteRefused(f"Unknown image operation “{operation}”.")
        return service(
            image=self.image_stub(obj, image_id),
            actor=request.user,
            expected_version=loaded.version,
        )

    def attach_view(self, request, object_id):
        if request.method != "POST" or self.model is not StreetSnap:
            return self.back_to_page(request, object_id, "#images")

        def attach(obj, loaded: Loaded) -> Curated:
            try:
                main_id = int(request.POST.get("main", ""))
                image_ids = sorted({int(pk) for pk in request.POST.getlist("images")})
            except ValueError:
                raise RecordWriteRefused("Choose a main image and at least one image.") from None
            # The street snaps' admin: its stubs are street images.
            return images_attach(
                images=[cast(StreetSnapImage, self.image_stub(obj, i)) for i in image_ids],
                main=cast(StreetSnapImage, self.image_stub(obj, main_id)),
                actor=request.user,
                expected_version=loaded.version,
            )

        return self.curate(request, object_id, attach)

    def curate(
        self, request, object_id, operation: Callable[[Record, Loaded], Curated]
    ) -> HttpResponse:
        """Run one image operation (a review service, which keeps a published album's
        history); report it; back to the grid.

        From review.js (X-Requested-With: fetch) the answer is JSON instead: the message,
        the album's new loaded token and the grid redrawn, so a 500-image album is not
        reloaded for one click. Either way the same service and the same stale check."""
        in_page = request.headers.get("X-Requested-With") == "fetch"
        try:
            # The change-log entry commits with the write, as in Django's own change view:
            # a conflict message names the editor from it (review.conflicts).
            with transaction.atomic():
                obj, loaded = self.curation_target(request, object_id)
                with conflict_if_stale(loaded):
                    record, message = operation(obj, loaded)
                self.log_change(request, obj, message)
        except RecordWriteRefused as refusal:
            if in_page:
                return JsonResponse({"ok": False, "message": str(refusal)}, status=409)
            self.message_user(request, str(refusal), messages.ERROR)
        else:
            if in_page:
                return self.grid_response(request, object_id, message, record)
            self.message_user(request, message, messages.SUCCESS)
        following = request.POST.get("next", "")
        if following and url_has_allowed_host_and_scheme(
            following, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return HttpResponseRedirect(following)
        return self.back_to_page(request, object_id, "#images")

    def grid_response(self, request, object_id, message: str, written) -> JsonResponse:
        # The token comes from the record as this write left it, read under its lock: a read
        # after the commit could carry another editor's write into this page's token.
        obj = cast(Record, self.get_object(request, unquote(object_id)))  # just written
        review = {**self.grid_context(request, obj), "token": loaded_token(written)}
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

    def compare_view(self, request, object_id, image_id):
        """A near-duplicate beside the image it repeats, at the same size, with what tells
        them apart, and "delete this one". With ?mode=duplicates it steps through every
        flagged image of the album (review duplicates)."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None or not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        images = obj.images.live().select_related("dup_of", f"dup_of__{self.record_fk}")
        image = images.filter(pk=image_id).first()
        if image is None:
            self.message_user(request, "That image is no longer in this album.", messages.WARNING)
            return self.back_to_page(request, obj.pk)
        mode = request.GET.get("mode") == "duplicates"
        flagged = list(
            images.filter(is_duplicate=True)
            .order_by("sort_order", "pk")
            .values_list("pk", flat=True)
        )
        album_url = self.with_queue(request, self.change_url(obj.pk)) + f"#image-{image.pk}"
        at = flagged.index(image.pk) if image.pk in flagged else None
        following = (
            self.compare_url(request, obj, flagged[at + 1], mode=True)
            if mode and at is not None and at + 1 < len(flagged)
            else ""
        )
        previous = self.compare_url(request, obj, flagged[at - 1], mode=True) if mode and at else ""
        can_curate = self.has_curate_permission(request, obj)
        other = image.dup_of if image.is_duplicate else None
        sides = [self.compare_side(obj, image, can_curate)]
        if other is not None:
            sides.append(self.compare_side(obj, other, can_curate))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
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
            # After "delete this one": the next flagged image, or back to the album.
            "after_delete_url": following or album_url.split("#")[0] + "#images",
        }
        return TemplateResponse(request, "admin/review/compare.html", context)

    def compare_side(self, obj: Record, image: RecordImage, can_curate: bool) -> dict[str, Any]:
        record = getattr(image, self.record_fk)
        here = record.pk == obj.pk
        return {
            "image": image,
            "name": image_name(image),
            "url": original_url(image),
            "album": record,
            "here": here,
            "album_url": ""
            if record.deleted_at is not None
            else admin_url(record, "change", record.pk) + f"#image-{image.pk}",
            "deleted": image.deleted_at is not None,
            "delete_url": admin_url(obj, "image", obj.pk, image.pk, "delete")
            if here and can_curate and image.deleted_at is None
            else "",
        }
