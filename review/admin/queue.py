"""The queue an editor came from: where an album stands in it, and the next album.

Django's admin carries the list's query string (tab, filters, search, order) to the record
page and back as `_changelist_filters`; the record page's decisions carry it on, so "next"
means the next album of that list, not of the unfiltered queue. Plain functions of the
record admin (`modeladmin`), as the views beside them are.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.db.models import Count, F, OrderBy, Q, QuerySet
from django.http import HttpResponse, HttpResponseRedirect, QueryDict

from catalog.models import Record
from review.admin.display import admin_url
from review.admin.filters import Status, status_tab
from review.selectors import claims_of_others
from review.services import claim_release, claim_take


def queue_filters(request) -> QueryDict:
    """The query string of the list the editor came from."""
    return QueryDict(request.GET.get("_changelist_filters", ""))


def queue_queryset(modeladmin, request) -> QuerySet:
    """The albums of the editor's list, in its order (not read yet)."""
    fake = copy.copy(request)
    fake.GET = queue_filters(request)
    fake.review_queue = True  # the record admin's get_changelist: a QueueChangeList
    try:
        changelist = modeladmin.get_changelist_instance(fake)
    except IncorrectLookupParameters:  # a hand-edited query: the plain pending queue
        fake.GET = QueryDict()
        changelist = modeladmin.get_changelist_instance(fake)
    return changelist.queryset


def queue_ids(modeladmin, request) -> list[int]:
    """The ids of the albums of the editor's list, in its order (one query): what a decision
    needs to find the next album (next_in_queue)."""
    return list(queue_queryset(modeladmin, request).values_list("pk", flat=True))


def queue_place(modeladmin, request, obj: Record) -> tuple[int | None, int]:
    """Where `obj` stands in the editor's list (None: not in it) and how many albums the
    list has, for "3 of 41", without reading the list: the albums before `obj` in its order
    are counted by the database, in the same query as the total (no sort, no ids sent). An
    order this cannot compare row by row reads the ids instead."""
    queryset = queue_queryset(modeladmin, request)
    keys = order_keys(queryset)
    if keys is None:
        queue = list(queryset.values_list("pk", flat=True))
        return (queue.index(obj.pk) + 1 if obj.pk in queue else None), len(queue)
    aliases = {f"queue_key_{n}": expression for n, (expression, _, _) in enumerate(keys)}
    keyed = queryset.annotate(**aliases)
    values = keyed.filter(pk=obj.pk).values_list(*aliases).first()
    if values is None:
        return None, queryset.count()
    # Before `obj`: equal on the first keys and before it on the next one, for some key.
    before, equal = NOTHING, Q()
    for alias, (_, descending, nulls_first), value in zip(aliases, keys, values, strict=True):
        earlier = comes_before(alias, value, descending=descending, nulls_first=nulls_first)
        before |= equal & earlier
        equal &= Q(**{f"{alias}__isnull": True}) if value is None else Q(**{alias: value})
    counts = keyed.aggregate(total=Count("pk"), before=Count("pk", filter=before))
    return counts["before"] + 1, counts["total"]


def queue_tab(request) -> str:
    return status_tab(queue_filters(request).get("status"))


def queue_is_narrowed(request) -> bool:
    """Whether the editor's list is a part of its tab: filtered or searched (its other keys
    only sort it, page it or show facets)."""
    return any(key not in {"status", "o", "p", "_facets"} for key in queue_filters(request))


def queue_label(request) -> str:
    """What the albums of the editor's list are, for "3 of 41 pending in this queue"."""
    tab = queue_tab(request)
    return "" if tab == "all" else f"{tab} "


def with_queue(modeladmin, request, url: str) -> str:
    """`url` carrying the list the editor came from."""
    preserved = modeladmin.get_preserved_filters(request)
    return f"{url}?{preserved}" if preserved else url


def changelist_url(modeladmin, request) -> str:
    """The list the editor came from."""
    filters = request.GET.get("_changelist_filters", "")
    url = admin_url(modeladmin.model, "changelist")
    return f"{url}?{filters}" if filters else url


def change_url(modeladmin, object_id) -> str:
    return admin_url(modeladmin.model, "change", unquote(str(object_id)))


def page_album(modeladmin, request, object_id, *, may: Callable[..., bool]) -> Record | None:
    """The album a button of its page acts on, or None when it is gone (the caller sends the
    editor to the index, as Django's admin does). PermissionDenied when `may`, one of the
    admin's has_*_permission, refuses it."""
    obj = modeladmin.get_object(request, unquote(object_id))
    if obj is not None and not may(request, obj):
        raise PermissionDenied
    return obj


def back_to_page(modeladmin, request, object_id, anchor: str = "") -> HttpResponseRedirect:
    """Back to the album's page in the editor's queue (after a refusal, too: the page's
    "N of M" and its next album stay those of the list they came from)."""
    return HttpResponseRedirect(
        with_queue(modeladmin, request, change_url(modeladmin, object_id)) + anchor
    )


def next_in_queue(modeladmin, request, obj: Record) -> HttpResponse:
    """After a decision or a skip, on to the next album of the editor's list (its tab,
    filters, search and order) that no other editor has open, or back to the list.

    "Next" is by the list as it was just before the decision (request.review_queue_before),
    since a decided album leaves a pending list: the albums after this one, then those
    before it, that are still in the list now. The next album is claimed here, so two
    editors deciding at the same moment are not both sent to it."""
    model = modeladmin.model
    claim_release(record=obj, user=request.user)
    before = getattr(request, "review_queue_before", None)
    now = queue_ids(modeladmin, request)
    if before is None:
        before = now
    at = before.index(obj.pk) if obj.pk in before else -1
    still, seen = set(now), set(before)
    candidates = [pk for pk in before[at + 1 :] + before[: max(at, 0)] if pk in still]
    candidates += [pk for pk in now if pk not in seen]  # arrived meanwhile
    taken = claims_of_others(model=model, user=request.user)
    for pk in candidates:
        if pk != obj.pk and pk not in taken and claim_take(record=model(pk=pk), user=request.user):
            return HttpResponseRedirect(
                with_queue(modeladmin, request, admin_url(model, "change", pk))
            )
    if any(pk != obj.pk for pk in candidates):
        modeladmin.message_user(
            request, "Every other album of this queue is open by another editor.", messages.INFO
        )
    elif obj.pk not in now and queue_tab(request) == Status.PENDING:
        # Decided, and nothing of the editor's list is left: the whole pending queue only
        # when the list was not narrowed down (other brands may still wait).
        if queue_is_narrowed(request):
            modeladmin.message_user(
                request, "This queue is done: no pending album is left in it.", messages.INFO
            )
        else:
            modeladmin.message_user(request, "The pending queue is empty.", messages.INFO)
    else:  # a skip of the last album (still in the list), or a list of decided ones
        modeladmin.message_user(request, "No other album in this queue.", messages.INFO)
    return HttpResponseRedirect(changelist_url(modeladmin, request))


# A condition no row meets (an id is never NULL), which every database compiles.
NOTHING = Q(pk__isnull=True)


def order_keys(queryset: QuerySet) -> list[tuple[Any, bool, bool]] | None:
    """The list's order as (expression, descending, NULLs first) per term, or None when a
    term cannot be compared row by row here: a related field (Django orders a foreign key
    by the related model's ordering), a random order, or a nullable value whose NULLs'
    place is the database's default (PostgreSQL and SQLite put them at opposite ends)."""
    model, keys = queryset.model, []
    for term in queryset.query.order_by:
        expression: Any  # an F, or an expression of the list's own
        if isinstance(term, str):
            descending, name = term.startswith("-"), term.removeprefix("-")
            expression, nulls_first, nulls_last = F(name), False, False
        elif isinstance(term, OrderBy):
            expression, descending = term.expression, term.descending
            nulls_first, nulls_last = bool(term.nulls_first), bool(term.nulls_last)
        else:
            return None
        if isinstance(expression, F):
            name = expression.name  # type: ignore[attr-defined]  # the stubs leave F.name out
            if name in queryset.query.annotations:
                nullable = queryset.query.annotations[name].output_field.null
            elif name == "pk":
                nullable = False
            else:
                try:
                    field = model._meta.get_field(name)
                except FieldDoesNotExist:
                    return None  # a lookup across a relation, or "?"
                if field.is_relation:
                    return None
                nullable = field.null
        else:
            # An expression of the list's own (the status rank): its output field says
            # whether it can be NULL.
            nullable = expression.output_field.null
        if nullable and not (nulls_first or nulls_last):
            return None
        keys.append((expression, descending, nulls_first))
    return keys


def comes_before(alias: str, value: Any, *, descending: bool, nulls_first: bool) -> Q:
    """The rows whose key `alias` comes strictly before `value` in the list's order."""
    if value is None:  # NULLs first: nothing comes before; NULLs last: every value does
        return NOTHING if nulls_first else Q(**{f"{alias}__isnull": False})
    beyond = Q(**{f"{alias}__gt" if descending else f"{alias}__lt": value})
    return beyond | Q(**{f"{alias}__isnull": True}) if nulls_first else beyond
