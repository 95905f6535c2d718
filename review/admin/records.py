"""The runway and street snap admins: their URLs, list columns and image groups."""

from __future__ import annotations

from collections import OrderedDict

from django.contrib import admin
from django.urls import path

from catalog.models import Runway, RunwayImage, StreetSnap, StreetSnapImage
from review.admin.filters import HasDuplicatesFilter, RelatedOnlyListFilter, StatusFilter
from review.admin.transitions import TransitionAdmin
from review.naming import image_name, image_number
from review.services import Action, image_attach_to_previous, image_detach


class RecordAdmin(TransitionAdmin):
    """What the runway and street snap admins share."""

    # --- extra URLs: image curation and reasons for reject / unpublish ------------------
    def get_urls(self):
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view
        return [
            # Before the image operations' pattern, which "compare" would match too.
            path(
                "<path:object_id>/images/<int:image_id>/compare/",
                view(self.compare_view),
                name=f"{prefix}_compare",
            ),
            path(
                "<path:object_id>/images/<int:image_id>/<slug:operation>/",
                view(self.image_operation_view),
                name=f"{prefix}_image",
            ),
            path(
                "<path:object_id>/images/attach/",
                view(self.attach_view),
                name=f"{prefix}_attach",
            ),
            path(
                "<path:object_id>/approve/",
                view(self.approve_view),
                name=f"{prefix}_approve",
            ),
            path("<path:object_id>/skip/", view(self.skip_view), name=f"{prefix}_skip"),
            path("<path:object_id>/claim/", view(self.claim_view), name=f"{prefix}_claim"),
            path(
                "<path:object_id>/reject/",
                view(self.transition_view),
                {"action": Action.REJECT},
                name=f"{prefix}_reject",
            ),
            path(
                "<path:object_id>/unpublish/",
                view(self.transition_view),
                {"action": Action.UNPUBLISH},
                name=f"{prefix}_unpublish",
            ),
            *super().get_urls(),
        ]


@admin.register(Runway)
class RunwayAdmin(RecordAdmin):
    image_model = RunwayImage
    record_fk = "runway"
    autocomplete_fields = ["brand"]
    list_display = (
        "cover_thumbnail",
        "title_column",
        "brand",
        "season_column",
        "year",
        "status_column",
        "images_column",
        "duplicates_column",
        "received_column",
    )
    list_display_links = ("cover_thumbnail", "title_column")
    list_filter = (
        StatusFilter,
        ("brand", RelatedOnlyListFilter),
        "season_code",
        "year",
        "collection_type",
        "source",
        HasDuplicatesFilter,
    )
    search_fields = ("title", "brand__name", "source_url")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("brand")

    @admin.display(description="season", ordering="season_code")
    def season_column(self, runway: Runway) -> str:
        return f"{runway.season_code} · {runway.collection_type}"

    def image_groups(self, images, tiles):
        # Runway images group into looks: detail shots share their look's index.
        looks: OrderedDict[int, list] = OrderedDict()
        for image in images:
            looks.setdefault(image.look_index, []).append(tiles[image.pk])
        return [
            {"label": f"Look {look}" if look else "No look", "tiles": group}
            for look, group in looks.items()
        ]


@admin.register(StreetSnap)
class StreetSnapAdmin(RecordAdmin):
    image_model = StreetSnapImage
    record_fk = "street_snap"
    list_display = (
        "cover_thumbnail",
        "title_column",
        "city",
        "year",
        "month",
        "status_column",
        "images_column",
        "duplicates_column",
        "received_column",
    )
    list_display_links = ("cover_thumbnail", "title_column")
    list_filter = (
        StatusFilter,
        "city",
        "year",
        "month",
        "source",
        HasDuplicatesFilter,
    )
    search_fields = ("title", "city", "source_url")
    image_operations = {
        **RecordAdmin.image_operations,
        "attach-previous": image_attach_to_previous,
        "detach": image_detach,
    }

    def image_groups(self, images, tiles):
        # A group is a main image and its details, in the order of the main images. A detail
        # whose parent is not a live main image (which the services never leave behind, but
        # old data might) is shown as its own group, as the public API shows it.
        mains = {image.pk: image for image in images if not image.is_detail}
        groups: OrderedDict[int, list] = OrderedDict()
        previous_main = None
        for image in images:
            if image.is_detail and image.parent_id in mains:
                tiles[image.pk]["parent_number"] = image_number(mains[image.parent_id])
                continue
            tile = tiles[image.pk]
            tile["previous_main"] = previous_main and image_name(previous_main)
            groups[image.pk] = [tile]
            if not image.is_detail:
                previous_main = image
        for image in images:
            if image.is_detail and image.parent_id in mains:
                groups[image.parent_id].append(tiles[image.pk])
        return [
            {"label": f"Main image {group[0]['number']}", "tiles": group}
            for group in groups.values()
        ]
