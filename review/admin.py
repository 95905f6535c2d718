"""The editors' admin: the review queues of runways and street snaps, their record pages
(fields, image grid, street groups, approve / reject / unpublish), brands with aliases, and
the review history.

Admin code holds no business rules: every write to an album goes through review.services
(transitions, field edits, image operations; built on catalog.services), and their refusals
become messages. Brands and their aliases are saved through Django's own ModelAdmin path:
the alias form set checks the aliases, and the unique constraint decides a race.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse, QueryDict
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
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
from review.selectors import claims_of_others, record_review_history
from review.services import (
    TRANSITIONS,
    Action,
    claim_release,
    claim_take,
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


def original_url(image: RecordImage | None) -> str:
    # Keys are content-addressed and public; the URL is computed, no request to the storage.
    return default_storage.url(image.storage_key) if image is not None else ""


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


# A stand-in image id in a URL reversed once and filled in per tile.
IMAGE_ID = 987654321


def image_number(image: RecordImage) -> int:
    """An image's number in its album, the same in the ingest job's report, the grid and the
    compare view: its place in the list the crawler sent, counted from 1 (sort_order never
    changes once the image is stored, so neither does the number)."""
    return image.sort_order + 1


def image_name(image: RecordImage) -> str:
    return f"image {image_number(image)} (id {image.pk})"


def ingest_job_url(job_id: int | None) -> str:
    """The ingest job's admin page, when the ingest admin is installed (review does not
    import ingest: the URL name is the only link between them)."""
    if not job_id:
        return ""
    try:
        return reverse("admin:ingest_ingestjob_change", args=[job_id])
    except NoReverseMatch:
        return ""


def hamming_distance(image: RecordImage, other: RecordImage | None) -> int | None:
    """Bits apart of two perceptual hashes, when both have one of the same algorithm."""
    if other is None or image.phash is None or other.phash is None:
        return None
    if image.phash_algorithm != other.phash_algorithm:
        return None
    return ((image.phash ^ other.phash) & 0xFFFF_FFFF_FFFF_FFFF).bit_count()


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


class QueueChangeList(RecordChangeList):
    """The list's tab, filters, search and order without its page: the queue an editor works
    through from the record pages (RecordAdmin.queue)."""

    def get_results(self, request):
        pass  # the queue reads self.queryset itself; no page, no counts


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
        return QueueChangeList if getattr(request, "review_queue", False) else RecordChangeList

    # --- the queue an editor came from ---------------------------------------------------
    # Django's admin carries the list's query string (tab, filters, search, order) to the
    # record page and back as `_changelist_filters`; the record page's decisions carry it
    # on, so "next" means the next album of that list, not of the unfiltered queue.
    def queue_filters(self, request) -> QueryDict:
        return QueryDict(request.GET.get("_changelist_filters", ""))

    def queue(self, request) -> list[int]:
        """The ids of the albums of the editor's list, in its order (one query)."""
        fake = copy.copy(request)
        fake.GET = self.queue_filters(request)
        fake.review_queue = True
        try:
            changelist = self.get_changelist_instance(fake)
        except IncorrectLookupParameters:  # a hand-edited query: the plain pending queue
            fake.GET = QueryDict()
            changelist = self.get_changelist_instance(fake)
        return list(changelist.queryset.values_list("pk", flat=True))

    def queue_tab(self, request) -> str:
        return status_tab(self.queue_filters(request).get("status"))

    def queue_label(self, request) -> str:
        """What the albums of the editor's list are, for "3 of 41 pending in this queue"."""
        tab = self.queue_tab(request)
        return "" if tab == "all" else f"{tab} "

    def with_queue(self, request, url: str) -> str:
        """`url` carrying the list the editor came from."""
        preserved = self.get_preserved_filters(request)
        return f"{url}?{preserved}" if preserved else url

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
            # In columns (review.css): the images come first on this page.
            (None, {"fields": EDITABLE_FIELDS[self.model], "classes": ["review-record-fields"]}),
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

    def with_changelist_filters(self, request) -> str:
        """The list the editor came from."""
        filters = request.GET.get("_changelist_filters", "")
        url = admin_url(self.model, "changelist")
        return f"{url}?{filters}" if filters else url

    def review_context(self, request, obj: Record, token: str) -> dict[str, Any]:
        pending = obj.status == Status.PENDING
        history = record_review_history(record=obj)
        last = history[-1] if history else None
        queue = self.queue(request)
        holder = ""
        # Only an editor who may act on the album holds it; a view-only reader never does.
        may_act = self.has_change_permission(request, obj)
        if not (may_act and claim_take(record=obj, user=request.user)):
            holder = claims_of_others(model=self.model, user=request.user, record_ids=[obj.pk])
            holder = holder.get(obj.pk, "")
        return {
            **self.grid_context(request, obj),
            "token": token,
            "queue_position": queue.index(obj.pk) + 1 if obj.pk in queue else None,
            "queue_total": len(queue),
            "queue_label": self.queue_label(request),
            "queue_url": self.with_changelist_filters(request),
            "open_by": holder,
            "claim_url": admin_url(obj, "claim", obj.pk),
            "skip_url": self.with_queue(request, admin_url(obj, "skip", obj.pk)),
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
            "approve_url": self.with_queue(request, admin_url(obj, "approve", obj.pk)),
            "reject_url": self.with_queue(request, admin_url(obj, "reject", obj.pk)),
            "unpublish_url": self.with_queue(request, admin_url(obj, "unpublish", obj.pk)),
            "history": history,
            "recrawled": last if last is not None and last.recrawl and pending else None,
            "ingest_job_url": ingest_job_url(obj.ingest_job_id),
        }

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
        if request.method == "POST" and "_approve" in request.POST:
            request.review_queue_before = self.queue(request)
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
        """After a decision or a skip, on to the next album of the editor's list (its tab,
        filters, search and order) that no other editor has open, or back to the list.

        "Next" is by the list as it was just before the decision (request.review_queue_before),
        since a decided album leaves a pending list: the albums after this one, then those
        before it, that are still in the list now. The next album is claimed here, so two
        editors deciding at the same moment are not both sent to it."""
        claim_release(record=obj, user=request.user)
        before = getattr(request, "review_queue_before", None)
        now = self.queue(request)
        if before is None:
            before = now
        at = before.index(obj.pk) if obj.pk in before else -1
        still, seen = set(now), set(before)
        candidates = [pk for pk in before[at + 1 :] + before[: max(at, 0)] if pk in still]
        candidates += [pk for pk in now if pk not in seen]  # arrived meanwhile
        taken = claims_of_others(model=self.model, user=request.user)
        for pk in candidates:
            if (
                pk != obj.pk
                and pk not in taken
                and claim_take(record=self.model(pk=pk), user=request.user)
            ):
                return HttpResponseRedirect(
                    self.with_queue(request, admin_url(self.model, "change", pk))
                )
        if any(pk != obj.pk for pk in candidates):
            self.message_user(
                request,
                "Every other album of this queue is open by another editor.",
                messages.INFO,
            )
        elif self.queue_tab(request) == Status.PENDING:
            self.message_user(request, "The pending queue is empty.", messages.INFO)
        else:
            self.message_user(request, "No other album in this queue.", messages.INFO)
        return HttpResponseRedirect(self.with_changelist_filters(request))

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
                    f"the cover moved to {self.image_name(record.cover_id)}"
                    if record.cover_id
                    else "the album now has no cover"
                )
                return record, f"Deleted {self.image_name(image_id)}; {moved}."
            return record, f"Deleted {self.image_name(image_id)}."
        if operation == "cover":
            record = record_set_cover(record=obj, image=image, **curator)
            return record, f"{self.image_name(image_id).capitalize()} is now the cover."
        if self.model is StreetSnap and operation == "attach-previous":
            record = street_image_attach_to_previous(image=image, **curator)
            parent = StreetSnapImage.objects.values_list("parent_id", flat=True).get(pk=image_id)
            return record, (
                f"{self.image_name(image_id).capitalize()} is now a detail of "
                f"{self.image_name(parent)}."
            )
        if self.model is StreetSnap and operation == "detach":
            record = street_image_detach(image=image, **curator)
            return record, f"{self.image_name(image_id).capitalize()} is now a main image."
        raise RecordWriteRefused(f"Unknown image operation “{operation}”.")

    def image_name(self, image_id: int) -> str:
        """“image 3 (id 57)”, read after the operation (its number never changes)."""
        sort_order = self.image_model.objects.values_list("sort_order", flat=True).get(pk=image_id)
        return image_name(self.image_model(pk=image_id, sort_order=sort_order))

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
            numbers = dict(
                self.image_model.objects.filter(pk__in=[*image_ids, main_id]).values_list(
                    "pk", "sort_order"
                )
            )
            listed = ", ".join(f"{numbers[pk] + 1} (id {pk})" for pk in image_ids)
            noun = "Image" if len(image_ids) == 1 else "Images"
            return record, (
                f"{noun} {listed} attached to main image {numbers[main_id] + 1} (id {main_id})."
            )

        return self.curate(request, object_id, attach)

    def curate(self, request, object_id, operation) -> HttpResponse:
        """Run one image operation (through review.services.record_curate_images, which
        keeps a published album's history); report it; back to the grid.

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
                    record, message = record_curate_images(
                        actor=request.user, operation=lambda: operation(obj, loaded)
                    )
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
        return HttpResponseRedirect(self.change_url(object_id) + "#images")

    def grid_response(self, request, object_id, message: str, written) -> JsonResponse:
        # The token comes from the record as this write left it, read under its lock: a read
        # after the commit could carry another editor's write into this page's token.
        obj = self.get_object(request, unquote(object_id))
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
        request.review_queue_before = self.queue(request)
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
            return HttpResponseRedirect(self.with_queue(request, self.change_url(obj.pk)))
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

    def skip_view(self, request, object_id):
        """On to the next album of the editor's queue without deciding this one (POST: it
        lets go of this album's claim and claims the next)."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return HttpResponseRedirect(reverse("admin:index"))
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseRedirect(self.with_queue(request, self.change_url(obj.pk)))
        return self.next_in_queue(request, obj)

    def claim_view(self, request, object_id):
        """The record page's sign of life (review.js, once a minute while the editor is
        active): keeps their claim, or takes the album once the other editor's has lapsed."""
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and not self.has_change_permission(request, obj):
            raise PermissionDenied
        if obj is None or request.method != "POST":
            return JsonResponse({"held": False, "open_by": ""}, status=404 if obj is None else 405)
        if claim_take(record=obj, user=request.user):
            return JsonResponse({"held": True, "open_by": ""})
        holder = claims_of_others(model=self.model, user=request.user, record_ids=[obj.pk])
        return JsonResponse({"held": False, "open_by": holder.get(obj.pk, "")})

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
            request.review_queue_before = self.queue(request)
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
            cancel_url=self.with_queue(request, self.change_url(obj.pk)),
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
        (docs/editors.md says so), or a request not from the list."""
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
