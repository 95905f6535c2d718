"""The record lists' status tabs (the pending queue first) and their filters."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Case, Value, When

from catalog.models import Record

Status = Record.Status
STATUS_TABS = [
    (Status.PENDING, "Pending review"),
    (Status.PUBLISHED, "Published"),
    # Published albums whose go-live is ahead: a part of the Published tab, which lists every
    # published album (the status is theirs), shown apart so the editors see what is to come.
    ("scheduled", "Scheduled"),
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
        if self.value() == "scheduled":
            return queryset.scheduled()
        if self.value() == Status.PENDING:
            # The queue: a re-post is decided with the album it repeats, under whose row it is
            # folded (the record admins annotate is_repost).
            return queryset.filter(status=Status.PENDING, is_repost=False)
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


class RelatedOnlyListFilter(admin.RelatedOnlyFieldListFilter):
    """Django's filter by the related objects the list's albums have (the brands of the
    runways), which reads those choices only when a page shows them: the queue of a record
    page (QueueChangeList) filters by it but shows nothing, and the choices' query reads
    the whole list."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        self.in_queue = getattr(request, "review_queue", False)
        super().__init__(field, request, params, model, model_admin, field_path)

    def field_choices(self, field, request, model_admin):
        return [] if self.in_queue else super().field_choices(field, request, model_admin)

    def has_output(self) -> bool:
        # The change list filters only by the filters it would show.
        return self.in_queue or super().has_output()


class NamedValuesFilter(admin.AllValuesFieldListFilter):
    """Django's filter by every value of a field, with the empty value named: the legacy
    archive's albums have no source, and a link without text is one no screen reader can
    announce."""

    def choices(self, changelist):
        for choice in super().choices(changelist):
            yield {**choice, "display": choice["display"] or "none (legacy)"}
