"""The runway and street snap admins: one ModelAdmin per kind, on a base that holds what
both share. The base is Django's hooks only (permissions, the list, the record page, the
URLs); each hook hands its work to a plain function: the pages and buttons of
review/admin/views/, the queue (queue.py), the record page's panel and save
(record_page.py), the columns (columns.py)."""

from __future__ import annotations

from collections import OrderedDict
from functools import update_wrapper
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.db.models import (
    BooleanField,
    Case,
    Count,
    F,
    IntegerField,
    OuterRef,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.http import HttpResponseRedirect
from django.urls import path
from django.utils.html import format_html

from catalog.models import RecordImage, Runway, RunwayImage, StreetSnap, StreetSnapImage
from catalog.services import RecordWriteRefused, permission_name
from review.admin import columns, record_page
from review.admin.display import approved_message
from review.admin.filters import (
    STATUS_RANK,
    HasDuplicatesFilter,
    NamedValuesFilter,
    RelatedOnlyListFilter,
    Status,
    StatusFilter,
    status_tab,
)
from review.admin.queue import next_in_queue, queue_ids, with_queue
from review.admin.record_list import QueueChangeList, RecordChangeList, status_tabs
from review.admin.views import (
    claims,
    compare,
    curation,
    embargo,
    previews,
    repeats,
    takedown,
    transitions,
    undo,
)
from review.admin.views.curation import ImageOperation
from review.conflicts import loaded_token
from review.forms import RecordForm
from review.naming import image_name, image_number
from review.selectors import repost_condition
from review.services import (
    Action,
    image_attach_to_previous,
    image_delete,
    image_detach,
    image_make_cover,
    takedown_permission_name,
    transition_permission_name,
)


class RecordAdmin(admin.ModelAdmin):
    """What the runway and street snap admins share."""

    image_model: type[RecordImage]
    record_fk: str  # the image's foreign key to its record
    # The review service of each image button, by the operation its URL names (the street
    # snap admin adds the street ones): views.curation.image_operation.
    image_operations: ClassVar[dict[str, ImageOperation]] = {
        "delete": image_delete,
        "cover": image_make_cover,
    }
    actions = [
        transitions.approve_selected,
        transitions.reject_selected,
        transitions.reject_repeats_selected,
        transitions.unpublish_selected,
    ]

    # The list: the pending queue first, oldest first. The album column links each album's
    # page itself, in the editor's queue (RecordChangeList): Django's own links would take
    # the whole cell, the album's details and its repeats badge with it.
    change_list_template = "admin/review/record_change_list.html"
    list_display_links = None
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER
    # RecordChangeList's tab counts give the list its total: Django need not count again.
    show_full_result_count = False

    # The record page: the fields in columns, then the images, then the history.
    form = RecordForm
    change_form_template = "admin/review/record_change_form.html"
    save_on_top = True
    # Django takes display functions here as in list_display; the stubs allow names only.
    readonly_fields = (  # type: ignore[assignment]
        columns.status_display,
        "reviewer",
        "reviewed_at",
        "reject_reason",
        "published_at",
        "image_count",
        "source",
        columns.source_link,
        columns.ingest_job,
        "version",
        "created_at",
        "updated_at",
    )

    # --- URLs: each routes to a plain view of review.admin.views ------------------------------
    def get_urls(self):
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.view
        return [
            # Longest first: "<path:object_id>" would take "7/repeats/3" into the id of the
            # shorter patterns below ("7/repeats/3/reject/" is not the reject of album "7").
            path(
                "<path:object_id>/repeats/<int:other_id>/",
                view(repeats.repeats),
                name=f"{prefix}_repeats",
            ),
            path(
                "<path:object_id>/repeats/<int:other_id>/<slug:action>/",
                view(repeats.repeat_decision),
                name=f"{prefix}_repeat",
            ),
            # Before the image operations' pattern, which "compare" would match too.
            path(
                "<path:object_id>/images/<int:image_id>/compare/",
                view(compare.compare),
                name=f"{prefix}_compare",
            ),
            path(
                "<path:object_id>/images/<int:image_id>/takedown/",
                view(takedown.take_down_image),
                name=f"{prefix}_takedownimage",
            ),
            path(
                "<path:object_id>/images/<int:image_id>/<slug:operation>/",
                view(curation.image_operation),
                name=f"{prefix}_image",
            ),
            path("<path:object_id>/images/attach/", view(curation.attach), name=f"{prefix}_attach"),
            path("<path:object_id>/approve/", view(transitions.approve), name=f"{prefix}_approve"),
            path(
                "<path:object_id>/reject/",
                view(transitions.transition),
                {"action": Action.REJECT},
                name=f"{prefix}_reject",
            ),
            path(
                "<path:object_id>/unpublish/",
                view(transitions.transition),
                {"action": Action.UNPUBLISH},
                name=f"{prefix}_unpublish",
            ),
            path("<path:object_id>/takedown/", view(takedown.take_down), name=f"{prefix}_takedown"),
            path("<path:object_id>/schedule/", view(embargo.schedule), name=f"{prefix}_schedule"),
            path(
                "<path:object_id>/approve-for/",
                view(embargo.approve_for),
                name=f"{prefix}_approvefor",
            ),
            path(
                "<path:object_id>/history/<int:event_id>/undo/",
                view(undo.undo_rejection),
                name=f"{prefix}_undo",
            ),
            path("<path:object_id>/skip/", view(claims.skip), name=f"{prefix}_skip"),
            path(
                "<path:object_id>/previews/<int:link_id>/revoke/",
                view(previews.preview_revoke),
                name=f"{prefix}_previewrevoke",
            ),
            path(
                "<path:object_id>/previews/",
                view(previews.preview_make),
                name=f"{prefix}_previewmake",
            ),
            path("<path:object_id>/claim/", view(claims.claim), name=f"{prefix}_claim"),
            *super().get_urls(),
        ]

    def view(self, function):
        """`function(modeladmin, request, ...)` as an admin view of this model admin (as
        ModelAdmin.get_urls wraps its own views)."""

        def wrapper(request, *args, **kwargs):
            return function(self, request, *args, **kwargs)

        wrapper.model_admin = self  # type: ignore[attr-defined]  # as Django's own wrapper
        return self.admin_site.admin_view(update_wrapper(wrapper, function))

    # --- permissions ---------------------------------------------------------------------
    # Records come from ingest and the legacy import; editors never add them. Deleting is not
    # offered: rejecting takes an album off the site and keeps it for reference.
    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_publish_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(transition_permission_name(self.model, Action.APPROVE))

    def has_reject_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(transition_permission_name(self.model, Action.REJECT))

    def has_takedown_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(takedown_permission_name(self.model))

    def has_change_permission(self, request, obj=None) -> bool:
        # A published album is on the public site: changing its fields or images needs the
        # publish permission too (catalog.services.record_check_may_curate refuses it
        # anyway). Without it the page is read-only and says why (published_read_only).
        return self.has_kind_change_permission(request, obj) and not self.published_read_only(
            request, obj
        )

    def has_kind_change_permission(self, request, obj=None) -> bool:
        """Django's own change permission: of the kind, whatever the album's status."""
        return super().has_change_permission(request, obj)

    def published_read_only(self, request, obj=None) -> bool:
        return (
            obj is not None
            and obj.status == Status.PUBLISHED
            and not self.has_publish_permission(request, obj)
        )

    def has_curate_permission(self, request, obj=None) -> bool:
        return self.has_change_permission(request, obj) and request.user.has_perm(
            permission_name(self.model.image_model(), "change")
        )

    # --- the list ------------------------------------------------------------------------
    def get_queryset(self, request):
        duplicates = (
            self.image_model.objects.filter(
                **{self.record_fk: OuterRef("pk")}, is_duplicate=True, deleted_at__isnull=True
            )
            .order_by()
            .values(self.record_fk)
            .annotate(n=Count("pk"))
            .values("n")
        )
        # The model's manager is a RecordQuerySet's; the stubs return a plain QuerySet.
        return (
            super()
            .get_queryset(request)
            .live()  # type: ignore[attr-defined]
            .select_related("cover")
            .annotate(
                duplicate_count=Coalesce(Subquery(duplicates, output_field=IntegerField()), 0),
                status_rank=STATUS_RANK,
                # A re-post of an older pending album of its source: folded under that album
                # on the pending tab (StatusFilter), decided with it.
                is_repost=Case(
                    When(repost_condition(self.model), then=Value(True)),
                    default=Value(False),
                    output_field=BooleanField(),
                ),
            )
        )

    def get_list_display(self, request):
        # A tab of one status says it once, above the list: the column is for "All" alone,
        # and the album's title gets its width.
        columns_shown = super().get_list_display(request)
        if status_tab(request.GET.get("status")) == "all":
            return columns_shown
        return [column for column in columns_shown if column is not columns.status_column]

    def get_ordering(self, request):
        tab = status_tab(request.GET.get("status"))
        if tab == Status.PENDING:
            return ["created_at", "pk"]  # a queue: oldest first
        if tab == "all":
            return [STATUS_RANK.asc(), "-created_at", "-pk"]  # pending first
        if tab == "scheduled":
            return [F("go_live_at").asc(nulls_last=True), "pk"]  # the next to go live first
        return [F("reviewed_at").desc(nulls_last=True), "-pk"]  # latest decisions first

    def get_changelist(self, request, **kwargs):
        # review.admin.queue reads the list without its page.
        return QueueChangeList if getattr(request, "review_queue", False) else RecordChangeList

    def changelist_view(self, request, extra_context=None):
        context = {
            # Never None: Django derives it from verbose_name when a model names none.
            "title": f"{self.opts.verbose_name_plural.capitalize()} — review queue",  # type: ignore[union-attr]
            **(extra_context or {}),
        }
        response = super().changelist_view(request, context)
        # The list page (not a redirect after an action, nor an action's own page).
        cl = getattr(response, "context_data", {}).get("cl")
        if isinstance(cl, RecordChangeList):
            # A TemplateResponse (it has a cl); the stubs say HttpResponse.
            response.context_data["status_tabs"] = status_tabs(request, cl)  # type: ignore[attr-defined]
        return response

    def action_checkbox(self, obj):
        # The row's loaded token (the record page's: version, time, shown values) rides along
        # with its checkbox, so a bulk action refuses a record that changed after the list
        # was loaded, and says who changed what, just as the record page does.
        return format_html(
            '{}<input type="hidden" name="loaded_{}" value="{}">',
            super().action_checkbox(obj),
            obj.pk,
            loaded_token(obj),
        )

    # --- the record page -----------------------------------------------------------------
    def get_fieldsets(self, request, obj=None):
        return [
            # In columns (review.css): the images come first on this page.
            (None, {"fields": self.model.editable_fields, "classes": ["review-record-fields"]}),
            (
                "Review",
                {
                    # The status panel at the top says the same in one line.
                    "classes": ["collapse"],
                    "fields": [
                        columns.status_display,
                        "reviewer",
                        "reviewed_at",
                        "reject_reason",
                        "published_at",
                    ],
                },
            ),
            (
                "Source",
                {
                    "classes": ["collapse"],
                    "fields": [
                        "source",
                        columns.source_link,
                        columns.ingest_job,
                        "version",
                        "created_at",
                        "updated_at",
                    ],
                },
            ),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            token = context["adminform"].form["loaded"].value()
            context["review"] = record_page.review_context(self, request, obj, token)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST" and "_approve" in request.POST:
            request.review_queue_before = queue_ids(self, request)
        if request.method == "POST" and object_id is not None:
            refusal = record_page.published_save_refusal(self, request, object_id)
            if refusal:
                self.message_user(request, refusal, messages.ERROR)
                return HttpResponseRedirect(with_queue(self, request, request.path))
        # A refusal from a service (a race lost after the form's early check, a permission,
        # a status) has rolled the whole request back: say why and show the current record.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except RecordWriteRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return HttpResponseRedirect(with_queue(self, request, request.path))

    def save_model(self, request, obj, form, change):
        record_page.save(request, obj, form)

    def log_change(self, request, obj, message):
        if "_approve" in request.POST:
            return None  # the review history holds the approve and its field edits
        return super().log_change(request, obj, message)

    def response_change(self, request, obj):
        if "_approve" in request.POST:
            self.message_user(request, approved_message(obj), messages.SUCCESS)
            transitions.reject_reposts_of(self, request, obj)
            return next_in_queue(self, request, obj)
        return super().response_change(request, obj)

    def image_groups(self, images: list, tiles: dict) -> list[dict[str, Any]]:
        """The grid's groups of tiles (views.curation.grid_context): each kind's own."""
        raise NotImplementedError


@admin.register(Runway)
class RunwayAdmin(RecordAdmin):
    image_model = RunwayImage
    record_fk = "runway"
    autocomplete_fields = ["brand"]
    list_display = (
        columns.cover_thumbnail,
        columns.runway_album_column,
        columns.status_column,
        columns.images_column,
        columns.received_column,
    )
    list_filter = (
        StatusFilter,
        ("brand", RelatedOnlyListFilter),
        "season_code",
        "year",
        "collection_type",
        ("source", NamedValuesFilter),
        HasDuplicatesFilter,
    )
    search_fields = ("title", "brand__name", "source_url")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("brand")

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
        columns.cover_thumbnail,
        columns.street_album_column,
        columns.status_column,
        columns.images_column,
        columns.received_column,
    )
    list_filter = (
        StatusFilter,
        "city",
        "year",
        "month",
        ("source", NamedValuesFilter),
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
