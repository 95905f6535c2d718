"""The editors' admin: the review queues of runways and street snaps, their record pages
(fields, image grid, street groups, approve / reject / unpublish), brands with aliases, and
the review history.

Admin code holds no business rules: every write to an album goes through review.services
(transitions, field edits, image operations; built on catalog.services), and their refusals
become messages. Brands and their aliases are saved through Django's own ModelAdmin path:
the alias form set checks the aliases, and the unique constraint decides a race.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.http import HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince

from catalog.models import (
    THUMBNAIL_WIDTH,
    Brand,
    BrandAlias,
    Record,
    RecordImage,
    Runway,
    RunwayImage,
    StreetSnap,
    StreetSnapImage,
)
from catalog.services import (
    EDITABLE_FIELDS,
    IMAGE_MODEL,
    RecordWriteRefused,
    image_soft_delete,
    permission_name,
    record_check_may_curate,
    record_set_cover,
    street_image_attach_to_previous,
    street_image_detach,
    street_images_attach,
)
from review.conflicts import (
    Loaded,
    OutOfDate,
    conflict_if_stale,
    conflict_message,
    loaded_token,
    read_loaded,
)
from review.forms import BrandAliasForm, BrandAliasFormSet, ReasonForm, RecordForm
from review.models import ReviewEvent
from review.selectors import record_review_history
from review.services import (
    TRANSITIONS,
    Action,
    kind_label,
    record_approve,
    record_curate_images,
    record_edit,
    record_reject,
    record_unpublish,
    transition_permission_name,
)

Status = Record.Status
STATUS_TABS = [
    (Status.PENDING, "Pending review"),
    (Status.PUBLISHED, "Published"),
    (Status.REJECTED, "Rejected"),
    ("all", "All"),
]

# Pending first, then published, then rejected.
STATUS_RANK = Case(
    When(status=Status.PENDING, then=Value(0)),
    When(status=Status.PUBLISHED, then=Value(1)),
    default=Value(2),
)


def status_tab(value: str | None) -> str:
    """The list's tab for a `status` query value: a tab's own, else the pending queue."""
    return value if value in dict(STATUS_TABS) else Status.PENDING


def admin_url(model, view: str, *args) -> str:
    """The URL of one of the admin's pages for `model` (a class or an instance)."""
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def thumbnail_url(image: RecordImage | None) -> str:
    """The image's 400 px rendition, or its original where it has none (narrower than 400,
    or renditions not made yet or failed: :func:`thumbnail_is_original` says which).

    Keys are content-addressed and public; the URL is computed, no request to the storage.
    """
    if image is None:
        return ""
    return image.rendition_url(THUMBNAIL_WIDTH) or default_storage.url(image.storage_key)


def thumbnail_is_original(image: RecordImage | None) -> bool:
    return image is not None and image.rendition(THUMBNAIL_WIDTH) is None


def rendition_note(image: RecordImage) -> str:
    """Why an image shows its original as a thumbnail ('' when it does not)."""
    if not thumbnail_is_original(image):
        return ""
    status = image.rendition_status
    if status == RecordImage.RenditionStatus.FAILED:
        return f"no renditions: {image.rendition_error or 'they failed'}"
    if status == RecordImage.RenditionStatus.PENDING:
        return "renditions not made yet"
    return f"narrower than {THUMBNAIL_WIDTH} px: shown as it is"


def ingest_job_url(job_id: int | None) -> str:
    """The ingest job's admin page, when the ingest admin is installed (review does not
    import ingest: the URL name is the only link between them)."""
    if not job_id:
        return ""
    try:
        return reverse("admin:ingest_ingestjob_change", args=[job_id])
    except NoReverseMatch:
        return ""


# --- List filters --------------------------------------------------------------------------


class StatusFilter(admin.SimpleListFilter):
    """Status, defaulting to pending: the list opens on the review queue."""

    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return STATUS_TABS

    def value(self):
        return status_tab(super().value())

    def queryset(self, request, queryset):
        if self.value() == "all":
            return queryset
        return queryset.filter(status=self.value())

    def choices(self, changelist):
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }


class HasDuplicatesFilter(admin.SimpleListFilter):
    title = "near-duplicates"
    parameter_name = "duplicates"

    def lookups(self, request, model_admin):
        return [("yes", "Has near-duplicates"), ("no", "No near-duplicates")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(duplicate_count__gt=0)
        if self.value() == "no":
            return queryset.filter(duplicate_count=0)
        return queryset


# --- Records -------------------------------------------------------------------------------


class RecordChangeList(ChangeList):
    """The list of one kind of record, with the counts of its status tabs.

    One query counts the live albums of each status and all of them. The record admins turn
    Django's own count of all of them off (show_full_result_count), and the list takes its
    total from here instead: "3 results (40 total)" beside the search box reads as before,
    with one query fewer per page."""

    def get_results(self, request):
        super().get_results(request)
        self.status_counts = self.model.objects.live().aggregate(
            **{str(status): Count("pk", filter=Q(status=status)) for status in Status.values},
            all=Count("pk"),
        )
        # What Django's get_results sets when it counts the total itself.
        self.show_full_result_count = True
        self.full_result_count = self.status_counts["all"]
        self.show_admin_actions = bool(self.full_result_count)


class RecordAdmin(admin.ModelAdmin):
    """What the runway and street snap admins share."""

    form = RecordForm
    change_form_template = "admin/review/record_change_form.html"
    change_list_template = "admin/review/record_change_list.html"
    save_on_top = True
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER
    actions = ["approve_selected", "reject_selected", "unpublish_selected"]
    # RecordChangeList's tab counts give the list its total: Django need not count again.
    show_full_result_count = False
    readonly_fields = (
        "status_display",
        "reviewer",
        "reviewed_at",
        "reject_reason",
        "published_at",
        "image_count",
        "source",
        "source_link",
        "ingest_job",
        "version",
        "created_at",
        "updated_at",
    )
    image_model: type[RecordImage]
    record_fk: str  # the image's foreign key to its record

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

    def has_change_permission(self, request, obj=None) -> bool:
        # A published album is on the public site: changing its fields or images needs the
        # publish permission too (catalog.services.record_check_may_curate refuses it
        # anyway). Without it the page is read-only and says why (published_read_only).
        return super().has_change_permission(request, obj) and not self.published_read_only(
            request, obj
        )

    def published_read_only(self, request, obj=None) -> bool:
        return (
            obj is not None
            and obj.status == Status.PUBLISHED
            and not self.has_publish_permission(request, obj)
        )

    def has_curate_permission(self, request, obj=None) -> bool:
        return self.has_change_permission(request, obj) and request.user.has_perm(
            permission_name(IMAGE_MODEL[self.model], "change")
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
        return (
            super()
            .get_queryset(request)
            .live()
            .select_related("cover")
            .annotate(
                duplicate_count=Coalesce(Subquery(duplicates, output_field=IntegerField()), 0),
                status_rank=STATUS_RANK,
            )
        )

    def get_ordering(self, request):
        tab = status_tab(request.GET.get("status"))
        if tab == Status.PENDING:
            return ["created_at", "pk"]  # a queue: oldest first
        if tab == "all":
            return [STATUS_RANK.asc(), "-created_at", "-pk"]  # pending first
        return [F("reviewed_at").desc(nulls_last=True), "-pk"]  # latest decisions first

    def get_changelist(self, request, **kwargs):
        return RecordChangeList

    def changelist_view(self, request, extra_context=None):
        context = {
            "title": f"{self.opts.verbose_name_plural.capitalize()} — review queue",
            **(extra_context or {}),
        }
        response = super().changelist_view(request, context)
        # The list page (not a redirect after an action, nor an action's own page).
        cl = getattr(response, "context_data", {}).get("cl")
        if isinstance(cl, RecordChangeList):
            current = status_tab(request.GET.get("status"))
            response.context_data["status_tabs"] = [
                {
                    "label": label,
                    "count": cl.status_counts[str(value)],
                    "url": f"?status={value}",
                    "current": current == value,
                }
                for value, label in STATUS_TABS
            ]
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

    @admin.display(description="cover")
    def cover_thumbnail(self, obj: Record) -> str:
        if obj.cover is None:
            return format_html('<span class="review-nocover">{}</span>', "no cover")
        if thumbnail_is_original(obj.cover):
            return format_html(
                '<img src="{}" alt="cover" class="review-list-thumb" loading="lazy" '
                'decoding="async" title="{}"><span class="review-badge review-badge-original">'
                "original</span>",
                thumbnail_url(obj.cover),
                rendition_note(obj.cover),
            )
        return format_html(
            '<img src="{}" alt="cover" class="review-list-thumb" loading="lazy" decoding="async">',
            thumbnail_url(obj.cover),
        )

    @admin.display(description="title", ordering="title")
    def title_column(self, obj: Record) -> str:
        return str(obj)

    @admin.display(description="status", ordering="status_rank")
    def status_column(self, obj: Record) -> str:
        return format_html(
            '<span class="review-status review-status-{}">{}</span>',
            obj.status,
            obj.get_status_display(),
        )

    @admin.display(description="images", ordering="image_count")
    def images_column(self, obj: Record) -> int:
        return obj.image_count

    @admin.display(description="near-dups", ordering="duplicate_count")
    def duplicates_column(self, obj: Record) -> str:
        if not obj.duplicate_count:
            return "–"
        return format_html('<span class="review-dup-count">{}</span>', obj.duplicate_count)

    @admin.display(description="received", ordering="created_at")
    def received_column(self, obj: Record) -> str:
        return format_html(
            '<span title="{}">{} ago</span>',
            obj.created_at.strftime("%Y-%m-%d %H:%M"),
            timesince(obj.created_at, depth=1),
        )

    # --- the record page -----------------------------------------------------------------
    @admin.display(description="status")
    def status_display(self, obj: Record) -> str:
        return self.status_column(obj)

    @admin.display(description="source URL")
    def source_link(self, obj: Record) -> str:
        if not obj.source_url.startswith(("https://", "http://")):
            return obj.source_url or "–"  # never a javascript: or data: link
        return format_html(
            '<a href="{}" target="_blank" rel="noopener noreferrer">{}</a>',
            obj.source_url,
            obj.source_url,
        )

    @admin.display(description="ingest job")
    def ingest_job(self, obj: Record) -> str:
        if not obj.ingest_job_id:
            return "–"
        url = ingest_job_url(obj.ingest_job_id)
        if not url:
            return str(obj.ingest_job_id)
        return format_html('<a href="{}">job {}</a>', url, obj.ingest_job_id)

    def get_fieldsets(self, request, obj=None):
        return [
            (None, {"fields": EDITABLE_FIELDS[self.model]}),
            (
                "Review",
                {
                    # The status panel at the top says the same in one line.
                    "classes": ["collapse"],
                    "fields": [
                        "status_display",
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
                        "source_link",
                        "ingest_job",
                        "version",
                        "created_at",
                        "updated_at",
                    ],
                },
            ),
        ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            form = context["adminform"].form
            context["review"] = self.review_context(request, obj, form["loaded"].value())
        return super().render_change_form(request, context, add, change, form_url, obj)

    def review_context(self, request, obj: Record, token: str) -> dict[str, Any]:
        # The duplicated image's album comes along: a tile names a deleted album without
        # a link, and the page's query count stays the same however many tiles do.
        images = list(
            obj.images.live()
            .select_related("dup_of", f"dup_of__{self.record_fk}")
            .order_by("sort_order", "pk")
        )
        tiles = {image.pk: self.tile(obj, image) for image in images}
        pending = obj.status == Status.PENDING
        history = record_review_history(record=obj)
        last = history[-1] if history else None
        return {
            "token": token,
            "is_street": self.model is StreetSnap,
            "groups": self.image_groups(images, tiles),
            "image_total": len(images),
            "mains": [image for image in images if not getattr(image, "is_detail", False)],
            "can_curate": self.has_curate_permission(request, obj),
            "published_read_only": self.published_read_only(request, obj)
            and super().has_change_permission(request, obj),
            # Approving needs the publish permission, from this page as from the list. With
            # the change permission too, the page's Approve button saves the field edits
            # with it (the main form); without it, the page is read-only and its Approve
            # button approves the album as it stands, like the bulk action.
            "can_approve": pending and self.has_publish_permission(request, obj),
            "approve_saves_edits": self.has_change_permission(request, obj),
            "can_reject": pending and self.has_reject_permission(request, obj),
            "can_unpublish": obj.status == Status.PUBLISHED
            and self.has_publish_permission(request, obj),
            "approve_url": admin_url(obj, "approve", obj.pk),
            "reject_url": admin_url(obj, "reject", obj.pk),
            "unpublish_url": admin_url(obj, "unpublish", obj.pk),
            "attach_url": admin_url(obj, "attach", obj.pk),
            "history": history,
            "recrawled": last if last is not None and last.recrawl and pending else None,
            "ingest_job_url": ingest_job_url(obj.ingest_job_id),
        }

    def tile(self, obj: Record, image: RecordImage) -> dict[str, Any]:
        dup = image.dup_of
        dup_url = dup_elsewhere = ""
        if image.is_duplicate and dup is not None:
            dup_record = getattr(dup, self.record_fk)
            dup_url = f"#image-{dup.pk}"
            if dup_record.deleted_at is not None:
                # Its album's page no longer exists: say where it was, link nowhere.
                dup_elsewhere, dup_url = "in a deleted album", ""
            else:
                if dup_record.pk != obj.pk:
                    dup_elsewhere = "in another album"
                    dup_url = admin_url(self.model, "change", dup_record.pk) + dup_url
                if dup.deleted_at is not None:
                    dup_elsewhere = f"{dup_elsewhere}, deleted".lstrip(", ")
        operations = ["delete", "cover"]
        if self.model is StreetSnap:
            operations += ["detach", "attach-previous"]
        return {
            "image": image,
            # The original opens on click; the tile shows the 400 rendition where there is one.
            "url": default_storage.url(image.storage_key),
            "thumb": thumbnail_url(image),
            "thumb_height": (image.rendition(THUMBNAIL_WIDTH) or {}).get("height"),
            "thumb_is_original": thumbnail_is_original(image),
            "rendition_note": rendition_note(image),
            "ops": {
                operation.replace("-", "_"): admin_url(obj, "image", obj.pk, image.pk, operation)
                for operation in operations
            },
            "is_cover": obj.cover_id == image.pk,
            "dup_url": dup_url,
            "dup_elsewhere": dup_elsewhere,
        }

    def image_groups(self, images: list, tiles: dict) -> list[dict[str, Any]]:
        raise NotImplementedError

    def save_model(self, request, obj, form, change):
        # The form's fields are the editable ones (get_fieldsets) and `loaded`, which never
        # counts as changed.
        changes = {name: form.cleaned_data[name] for name in form.changed_data}
        loaded = form.loaded_state
        with conflict_if_stale(loaded):
            if "_approve" in request.POST:
                record_approve(
                    record=obj,
                    actor=request.user,
                    changes=changes,
                    expected_version=loaded.version,
                )
            elif changes:
                record_edit(
                    record=obj,
                    actor=request.user,
                    changes=changes,
                    expected_version=loaded.version,
                )

    def log_change(self, request, obj, message):
        if "_approve" in request.POST:
            return None  # the review history holds the approve and its field edits
        return super().log_change(request, obj, message)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST" and object_id is not None:
            refusal = self.published_save_refusal(request, object_id)
            if refusal:
                self.message_user(request, refusal, messages.ERROR)
                return HttpResponseRedirect(request.path)
        # A refusal from a service (a race lost after the form's early check, a permission,
        # a status) has rolled the whole request back: say why and show the current record.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except RecordWriteRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return HttpResponseRedirect(request.path)

    def published_save_refusal(self, request, object_id) -> str:
        """Why a save of a published album by an editor who may not publish is refused, in
        words ('' when it is not such a save). Django would answer 403: the page they saved
        was most likely loaded while the album was pending, and someone approved it since.

        An editor who may publish is never refused here, so their save reads the album once
        (Django's own read), not twice."""
        if self.has_publish_permission(request) or not super().has_change_permission(request):
            return ""  # nothing to refuse here; or not an editor of this kind: Django's 403
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return ""
        try:
            record_check_may_curate(record=obj, actor=request.user, images=False)
        except RecordWriteRefused as refusal:
            # The form's own checks never run (Django answers 403 first): an out-of-date page
            # is said as the form would have said it, which names who published the album.
            try:
                loaded = read_loaded(request.POST.get("loaded"))
            except OutOfDate as out_of_date:
                return str(out_of_date)
            if loaded.version != obj.version:
                return conflict_message(obj, loaded)
            return str(refusal)
        return ""

    def response_change(self, request, obj):
        if "_approve" in request.POST:
            self.message_user(request, f"Approved and published “{obj}”.", messages.SUCCESS)
            return self.next_in_queue(request, obj)
        return super().response_change(request, obj)

    def next_in_queue(self, request, obj: Record) -> HttpResponse:
        """After a decision, on to the next pending album (oldest first), or the list."""
        following = (
            self.model.objects.live()
            .pending()
            .exclude(pk=obj.pk)
            .order_by("created_at", "pk")
            .only("pk")
            .first()
        )
        if following is None:
            self.message_user(request, "The pending queue is empty.", messages.INFO)
            return HttpResponseRedirect(admin_url(self.model, "changelist"))
        return HttpResponseRedirect(admin_url(self.model, "change", following.pk))

    # --- extra URLs: image curation and reasons for reject / unpublish ------------------
    def get_urls(self):
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view
        return [
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
        return self.image_model(pk=image_id, **{f"{self.record_fk}_id": obj.pk})

    def image_operation_view(self, request, object_id, image_id, operation):
        # POST only (a GET, e.g. a reloaded URL, just goes back to the grid); CSRF-protected
        # by admin_view like every admin page.
        if request.method != "POST":
            return HttpResponseRedirect(self.change_url(object_id) + "#images")
        return self.curate(
            request,
            object_id,
            lambda obj, loaded: self.operate(request, obj, loaded, image_id, operation),
        )

    def operate(
        self, request, obj, loaded: Loaded, image_id: int, operation: str
    ) -> tuple[Record, str]:
        image = self.image_stub(obj, image_id)
        curator = {"actor": request.user, "expected_version": loaded.version}
        if operation == "delete":
            record = image_soft_delete(image=image, **curator)
            if obj.cover_id == image_id:
                moved = (
                    f"the cover moved to image {record.cover_id}"
                    if record.cover_id
                    else "the album now has no cover"
                )
                return record, f"Deleted image {image_id}; {moved}."
            return record, f"Deleted image {image_id}."
        if operation == "cover":
            record = record_set_cover(record=obj, image=image, **curator)
            return record, f"Image {image_id} is now the cover."
        if self.model is StreetSnap and operation == "attach-previous":
            record = street_image_attach_to_previous(image=image, **curator)
            parent = StreetSnapImage.objects.values_list("parent_id", flat=True).get(pk=image_id)
            return record, f"Image {image_id} is now a detail of image {parent}."
        if self.model is StreetSnap and operation == "detach":
            record = street_image_detach(image=image, **curator)
            return record, f"Image {image_id} is now a main image."
        raise RecordWriteRefused(f"Unknown image operation “{operation}”.")

    def attach_view(self, request, object_id):
        if request.method != "POST" or self.model is not StreetSnap:
            return HttpResponseRedirect(self.change_url(object_id) + "#images")

        def attach(obj, loaded: Loaded) -> tuple[Record, str]:
            try:
                main_id = int(request.POST.get("main", ""))
                image_ids = sorted({int(pk) for pk in request.POST.getlist("images")})
            except ValueError:
                raise RecordWriteRefused("Choose a main image and at least one image.") from None
            record = street_images_attach(
                images=[self.image_stub(obj, image_id) for image_id in image_ids],
                main=self.image_stub(obj, main_id),
                actor=request.user,
                expected_version=loaded.version,
            )
            listed = ", ".join(str(pk) for pk in image_ids)
            noun = "Image" if len(image_ids) == 1 else "Images"
            return record, f"{noun} {listed} attached to main image {main_id}."

        return self.curate(request, object_id, attach)

    def curate(self, request, object_id, operation) -> HttpResponse:
        """Run one image operation (through review.services.record_curate_images, which
        keeps a published album's history); report it; back to the grid."""
        try:
            # The change-log entry commits with the write, as in Django's own change view:
            # a conflict message names the editor from it (review.conflicts).
            with transaction.atomic():
                obj, loaded = self.curation_target(request, object_id)
                with conflict_if_stale(loaded):
                    _, message = record_curate_images(
                        actor=request.user, operation=lambda: operation(obj, loaded)
                    )
                self.log_change(request, obj, message)
        except RecordWriteRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
        else:
            self.message_user(request, message, messages.SUCCESS)
        return HttpResponseRedirect(self.change_url(object_id) + "#images")

    def change_url(self, object_id) -> str:
        return admin_url(self.model, "change", unquote(str(object_id)))

    def decide_on_page(self, request, token: str | None, decide: Callable[[int], Any]) -> bool:
        """Run one transition from a record's page at the version the page was loaded at;
        say why when it is refused. True when it was applied."""
        try:
            loaded = read_loaded(token)
            with conflict_if_stale(loaded):
                decide(loaded.version)
        except RecordWriteRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return False
        return True

    def approve_view(self, request, object_id):
        """Approve the album as it stands, without field edits: the record page's Approve
        button for an editor who may publish but not edit (with the change permission, the
        button submits the main form and saves the edits with the approve)."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return HttpResponseRedirect(reverse("admin:index"))
        if not self.has_publish_permission(request, obj):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseRedirect(self.change_url(obj.pk))
        approved = self.decide_on_page(
            request,
            request.POST.get("loaded"),
            lambda version: record_approve(
                record=obj, actor=request.user, expected_version=version
            ),
        )
        if not approved:
            return HttpResponseRedirect(self.change_url(obj.pk))
        self.message_user(request, f"Approved and published “{obj}”.", messages.SUCCESS)
        return self.next_in_queue(request, obj)

    def transition_view(self, request, object_id, action: str):
        """The intermediate page of reject and unpublish: asks for the reason, then applies."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return HttpResponseRedirect(reverse("admin:index"))
        transition, service = TRANSITIONS[action], self.reason_service(action)
        allowed = (
            self.has_reject_permission(request, obj)
            if action == Action.REJECT
            else self.has_publish_permission(request, obj)
        )
        if not allowed:
            raise PermissionDenied
        token = request.POST.get("loaded") or loaded_token(obj)
        form = ReasonForm(request.POST if "confirm" in request.POST else None)
        if form.is_bound and form.is_valid():
            reason = form.cleaned_data["reason"]
            decided = self.decide_on_page(
                request,
                token,
                lambda version: service(
                    record=obj, actor=request.user, reason=reason, expected_version=version
                ),
            )
            if decided:
                self.message_user(
                    request, f"{transition.done.capitalize()} “{obj}”: {reason}", messages.SUCCESS
                )
                if action == Action.REJECT:
                    return self.next_in_queue(request, obj)
            return HttpResponseRedirect(self.change_url(obj.pk))
        return self.reason_page(
            request,
            action=action,
            records=[obj],
            form=form,
            hidden=[("loaded", token)],
            cancel_url=self.change_url(obj.pk),
        )

    def reason_page(self, request, *, action, records, form, hidden, cancel_url):
        transition = TRANSITIONS[action]
        many = len(records) != 1
        noun = kind_label(self.model, plural=many)
        count = f"{len(records)} " if many else ""
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"{transition.verb.capitalize()} {count}{noun}",
            "action": action,
            "verb": transition.verb,
            "records": [
                {"record": record, "thumb": thumbnail_url(record.cover)} for record in records
            ],
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

    # --- bulk actions --------------------------------------------------------------------
    # Each calls its transition's service (record_approve, record_reject, record_unpublish)
    # once per selected album. Approve applies no field edits here, so like reject and
    # unpublish it needs only its own permission: the same as the record page's Approve.
    @admin.action(permissions=["publish"], description="Approve and publish selected albums")
    def approve_selected(self, request, queryset):
        self.apply_to_each(
            request,
            queryset,
            Action.APPROVE,
            lambda record, version: record_approve(
                record=record, actor=request.user, expected_version=version
            ),
        )

    @admin.action(permissions=["reject"], description="Reject selected albums (asks for a reason)")
    def reject_selected(self, request, queryset):
        return self.bulk_with_reason(request, queryset, Action.REJECT)

    @admin.action(
        permissions=["publish"], description="Unpublish selected albums (asks for a reason)"
    )
    def unpublish_selected(self, request, queryset):
        return self.bulk_with_reason(request, queryset, Action.UNPUBLISH)

    @staticmethod
    def reason_service(action: str) -> Callable[..., Any]:
        """The service of a transition that asks for a reason."""
        return {Action.REJECT: record_reject, Action.UNPUBLISH: record_unpublish}[action]

    def bulk_with_reason(self, request, queryset, action: str):
        form = ReasonForm(request.POST if "confirm" in request.POST else None)
        if form.is_bound and form.is_valid():
            service, reason = self.reason_service(action), form.cleaned_data["reason"]
            self.apply_to_each(
                request,
                queryset,
                action,
                lambda record, version: service(
                    record=record, actor=request.user, reason=reason, expected_version=version
                ),
            )
            return None
        records = self.selected_records(request, queryset)
        hidden: list[tuple[str, Any]] = [("action", request.POST.get("action", ""))]
        for record in records:
            hidden.append((admin.helpers.ACTION_CHECKBOX_NAME, record.pk))
            token = request.POST.get(f"loaded_{record.pk}")
            if token:
                hidden.append((f"loaded_{record.pk}", token))
        return self.reason_page(
            request,
            action=action,
            records=records,
            form=form,
            hidden=hidden,
            cancel_url=request.get_full_path(),
        )

    def selected_records(self, request, queryset) -> list[Record]:
        """The albums ticked in the list, in id order.

        Django hands an action the ticked rows that still match the list's tab and filters.
        A ticked album that left them since the list was loaded (another editor approved it
        while this one was on the pending tab) would be skipped without a word; it is added
        back, so the transition service refuses it and the message says what happened.
        """
        records = list(queryset.order_by("pk"))
        ticked = set(request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME))
        gone = ticked - {str(record.pk) for record in records}
        if gone:
            records += self.get_queryset(request).filter(pk__in=[pk for pk in gone if pk.isdigit()])
            records.sort(key=lambda record: record.pk)
        return records

    def apply_to_each(
        self, request, queryset, action: str, decide: Callable[[Record, int | None], Any]
    ) -> None:
        """`decide(record, version)` once per record, each in its own transaction: a refusal
        leaves the others applied; report both.

        The version is the one the list showed the row at (its loaded token). A row without
        a token checks the status only: one beyond the page, selected with "Select all"
        (README says so), or a request not from the list."""
        transition = TRANSITIONS[action]
        changed, refused = 0, []
        for record in self.selected_records(request, queryset):
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
        noun = kind_label(self.model, plural=changed != 1)
        if changed:
            self.message_user(
                request, f"{transition.done.capitalize()} {changed} {noun}.", messages.SUCCESS
            )
        if refused:
            self.message_user(
                request,
                format_html(
                    "{} not {}:{}",
                    len(refused),
                    transition.done,
                    format_html_join("", "<br>• {}", ((line,) for line in refused)),
                ),
                messages.WARNING,
            )


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
        ("brand", admin.RelatedOnlyFieldListFilter),
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

    def image_groups(self, images, tiles):
        # A group is a main image and its details, in the order of the main images. A detail
        # whose parent is not a live main image (which the services never leave behind, but
        # old data might) is shown as its own group, as the public API shows it.
        mains = {image.pk for image in images if not image.is_detail}
        groups: OrderedDict[int, list] = OrderedDict()
        previous_main = None
        for image in images:
            if image.is_detail and image.parent_id in mains:
                continue
            tile = tiles[image.pk]
            tile["previous_main"] = previous_main
            groups[image.pk] = [tile]
            if not image.is_detail:
                previous_main = image.pk
        for image in images:
            if image.is_detail and image.parent_id in mains:
                groups[image.parent_id].append(tiles[image.pk])
        return [
            {"label": f"Main image {main} and its details", "tiles": group}
            for main, group in groups.items()
        ]


# --- Brands and the history ----------------------------------------------------------------


class BrandAliasInline(admin.TabularInline):
    model = BrandAlias
    form = BrandAliasForm
    formset = BrandAliasFormSet
    extra = 1
    verbose_name = "alias"
    verbose_name_plural = (
        "Aliases (names crawlers send for this brand; capitals and spaces do not count)"
    )


class AliasTakenMeanwhile(Exception):
    pass


ALIAS_TAKEN_MEANWHILE = (
    "Nothing was saved: one of these aliases is already taken, most likely saved for another "
    "brand by someone else a moment ago. Reload the page to see the aliases as they are now, "
    "then make your changes again."
)


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    inlines = [BrandAliasInline]
    list_display = ("name", "slug", "aliases_column", "is_featured")
    list_filter = ("is_featured",)
    search_fields = ("name", "slug", "aliases__alias")
    prepopulated_fields = {"slug": ["name"]}

    def save_formset(self, request, form, formset, change):
        try:
            with transaction.atomic():
                super().save_formset(request, form, formset, change)
        except IntegrityError as error:
            # The formset checked the aliases against every other brand's, but another
            # editor's save can commit between that check and this one; the unique
            # constraint (brand_alias_unique_ci) decides.
            raise AliasTakenMeanwhile(ALIAS_TAKEN_MEANWHILE) from error

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # Raised inside the view's transaction, which rolls the brand's own edits back too.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except AliasTakenMeanwhile as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return HttpResponseRedirect(request.path)

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("aliases")

    @admin.display(description="aliases")
    def aliases_column(self, brand: Brand) -> str:
        return ", ".join(alias.alias for alias in brand.aliases.all()) or "–"


@admin.register(ReviewEvent)
class ReviewEventAdmin(admin.ModelAdmin):
    """Every transition of every album, and every edit of a published one, newest first: who
    did what, and why."""

    list_display = ("at", "actor", "action", "record_link", "from_status", "to_status", "reason")
    list_filter = ("action", "to_status", "actor")
    list_select_related = ("actor", "runway", "street_snap")
    date_hierarchy = "at"
    # Every record's rows together: versions of two records do not compare, so time it is
    # here. One record's own history (its page) is in version order: see ReviewEvent.
    ordering = ("-at", "-pk")
    search_fields = ("reason", "actor__username")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="album")
    def record_link(self, event: ReviewEvent) -> str:
        record = event.record
        return format_html('<a href="{}">{}</a>', admin_url(record, "change", record.pk), record)
