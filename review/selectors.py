"""Reads for the review admin: a record's review history as the record page shows it, the
albums a record repeats, and who has an album open."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Count, Exists, F, Min, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.text import capfirst

from catalog.models import Record
from review.models import ReviewClaim

Status = Record.Status


@dataclass(frozen=True)
class HistoryLine:
    """One line of a record's review history: a transition from the append-only history,
    or a re-crawl that reopened the record (`recrawl`), which no history row records."""

    at: datetime | None
    who: str
    action: str
    from_status: str
    to_status: str
    reason: str = ""
    # The field edits, old and new, by the field's name as the admin shows it ("Go live at").
    changes: dict[str, list[str]] = field(default_factory=dict)
    recrawl: bool = False
    ingest_job_id: int | None = None
    # The history row's own (None for a re-crawl line): which row an undo names.
    event_id: int | None = None
    action_code: str = ""
    record_version: int | None = None


def record_review_history(*, record: Record) -> list[HistoryLine]:
    """The record's transitions in order, with the re-crawls that reopened it merged in.

    Editors' transitions are rows of the review history. The only other way a status changes
    is the ingest pipeline reopening a rejected record with new content (rejected ->
    pending), and ingest cannot write review's history (the apps do not import each other).
    Such a reopen shows as a gap: a row that ends in rejected, then a row that starts from
    pending, or nothing more while the record is pending. Each gap becomes a "re-crawled"
    line. Its time is when the re-crawl's images were written (a reopen always adds images,
    in the same transaction as the status, and nothing else adds images to an existing
    record); its job is named for the latest reopen only, the one `ingest_job_id` still
    holds. Rows come in the record's version order (ReviewEvent.record_version), which a
    re-crawl also follows: it bumps the version between the rejection and the next row. Only
    the re-crawl's time is read off clocks (the rows' `at` bound the window its images were
    written in); if two servers' clocks disagree so much that the window is empty, the line
    stays in its place, undated. Two queries, whatever the history's length.
    """
    # In version order, not by `at`: see ReviewEvent.record_version.
    # Each kind has review_events; the abstract Record cannot name it (catalog imports no app).
    events = list(record.review_events.select_related("actor").order_by("record_version", "pk"))  # type: ignore[attr-defined]
    gaps = []  # indexes of the rows after which a re-crawl reopened the record
    for index, event in enumerate(events):
        if event.to_status != Status.REJECTED:
            continue
        following = events[index + 1] if index + 1 < len(events) else None
        reopened = (
            following.from_status == Status.PENDING
            if following is not None
            else record.status == Status.PENDING
        )
        if reopened:
            gaps.append(index)

    written_at = {}
    if gaps:
        windows = {}
        for index in gaps:
            window = Q(created_at__gt=events[index].at)
            if index + 1 < len(events):
                window &= Q(created_at__lte=events[index + 1].at)
            windows[f"gap_{index}"] = Min("created_at", filter=window)
        # Soft-deleted images count: a later reopen or an editor may have deleted them.
        written_at = record.images.aggregate(**windows)

    lines = []
    for index, event in enumerate(events):
        lines.append(
            HistoryLine(
                at=event.at,
                who=event.who,
                action=event.get_action_display(),
                from_status=event.from_status,
                to_status=event.to_status,
                reason=event.reason,
                changes={_field_label(record, name): edit for name, edit in event.changes.items()},
                event_id=event.pk,
                action_code=event.action,
                record_version=event.record_version,
            )
        )
        if index in gaps:
            job = record.ingest_job_id if index == gaps[-1] else None
            lines.append(
                HistoryLine(
                    at=written_at[f"gap_{index}"],
                    who=f"ingest job {job}" if job else "ingest",
                    action="Re-crawled",
                    from_status=Status.REJECTED,
                    to_status=Status.PENDING,
                    reason="New content from the crawler replaced its fields and images; "
                    "back in the review queue.",
                    recrawl=True,
                    ingest_job_id=job,
                )
            )
    return lines


def _field_label(record: Record, name: str) -> str:
    """The field's verbose name, capitalised as the admin's labels are; the stored name for
    a field the model no longer has (the history outlives a renamed or dropped field)."""
    try:
        found = record._meta.get_field(name)
    except FieldDoesNotExist:
        return name
    # A relation seen from its other side (an album's images) has no verbose name.
    return str(capfirst(getattr(found, "verbose_name", name)))


def claims_of_others(*, model: type[Record], user, record_ids=None) -> dict[int, str]:
    """The albums of `model` another editor has open (a claim that has not lapsed): record
    id -> their username. All of them (a handful: one per editor at work), or those of
    `record_ids`."""
    lapsed = timezone.now() - timedelta(seconds=settings.REVIEW_CLAIM_SECONDS)
    claims = ReviewClaim.objects.filter(
        kind=model._meta.model_name, touched_at__gte=lapsed
    ).exclude(user=user)
    if record_ids is not None:
        claims = claims.filter(record_id__in=record_ids)
    return dict(claims.values_list("record_id", "user__username"))


@dataclass(frozen=True)
class Repeat:
    """Another live album of the same kind that `count` of a record's `total` live images
    repeat (flagged near-duplicates of its live images): most likely the same show crawled
    under another entity key (FW24 and AW24)."""

    record: Record
    count: int
    total: int


def _repeat_counts(model: type[Record], *conditions: Q, **lookups: Any) -> QuerySet:
    """(album, the album it repeats, how many of its live images repeat that one's), for the
    images of `model`'s albums flagged as near-duplicates of another album's, under
    `conditions` and `lookups`: what the repeats and the re-posts are both read from."""
    fk = model.image_model().record_field
    return (
        model.image_model()
        .objects.live()
        .filter(*conditions, is_duplicate=True, **lookups)
        .exclude(**{f"dup_of__{fk}": F(fk)})
        .order_by()
        .values_list(fk, f"dup_of__{fk}")
        .annotate(n=Count("pk"))
    )


def records_repeats(*, records: list[Record]) -> dict[int, list[Repeat]]:
    """The albums each of `records` (of one kind) repeats, most repeated first: record id ->
    repeats. Two queries, however many records."""
    if not records:
        return {}
    model = type(records[0])
    fk = model.image_model().record_field
    rows = list(
        _repeat_counts(
            model,
            **{f"{fk}_id__in": [record.pk for record in records]},
            dup_of__deleted_at=None,
            **{f"dup_of__{fk}__deleted_at": None},
        )
    )
    others = model.objects.in_bulk({other for _, other, _ in rows})
    totals = {record.pk: record.image_count for record in records}
    repeats: dict[int, list[Repeat]] = {}
    for record_id, other, count in sorted(rows, key=lambda row: (-row[2], row[1])):
        repeats.setdefault(record_id, []).append(
            Repeat(record=others[other], count=count, total=totals[record_id])
        )
    return repeats


def record_published_repeat(*, record: Record) -> Repeat | None:
    """The published album `record` repeats most, or None (the bulk reject of repeats acts
    on an album only against an album the public already has)."""
    published = [
        repeat
        for repeat in records_repeats(records=[record]).get(record.pk, [])
        if repeat.record.status == Status.PUBLISHED
    ]
    return published[0] if published else None


# --- Re-posts: a source that repeats itself ------------------------------------------------
#
# A crawler that re-posts a show under a new URL sends the same pictures as a new album (a new
# source key), which ingest flags image by image as near-duplicates of the first. Such an album
# is decided with the first one: the queue folds it under it (RecordAdmin), and deciding the
# first rejects it as a duplicate (review.services.record_reposts_reject). Nothing is stored:
# it is read off the flags, the statuses and the sources.


def repost_condition(model: type[Record], *, of_decided: bool = False) -> Q:
    """The albums of `model` that are re-posts: pending, from a source, with live images,
    every one of which repeats a live image of an older pending album of the same source.
    `of_decided`: whatever the status of that older album (it was decided a moment ago, and
    its re-posts are being decided with it)."""
    fk = model.image_model().record_field
    target = f"dup_of__{fk}"
    images = model.image_model().objects.filter(**{fk: OuterRef("pk")}, deleted_at=None)
    repeats_own_source = Q(
        is_duplicate=True,
        dup_of__deleted_at=None,
        **{
            f"{target}__deleted_at": None,
            f"{target}__source": OuterRef("source"),
            f"{target}__created_at__lt": OuterRef("created_at"),
        },
    )
    if not of_decided:
        repeats_own_source &= Q(**{f"{target}__status": Status.PENDING})
    return (
        Q(status=Status.PENDING)
        & ~Q(source="")
        & Exists(images)
        & ~Exists(images.exclude(repeats_own_source))
    )


def records_reposts(*, records: list[Record], decided: bool = False) -> dict[int, list[Record]]:
    """The re-posts folded under each of `records` (of one kind): record id -> its re-posts,
    oldest first. A re-post goes under the album its images repeat most; a re-post of a
    re-post goes under the first album of the chain. `decided`: `records` were just decided
    (they are no longer pending), and their re-posts are to be decided with them. A few
    queries a level of the chain."""
    if not records:
        return {}
    model = type(records[0])
    fk = model.image_model().record_field
    reposts = model.objects.filter(repost_condition(model, of_decided=decided), deleted_at=None)
    head_of = {record.pk: record.pk for record in records}  # album -> the head it folds under
    frontier = set(head_of)
    while frontier:
        rows = _repeat_counts(
            model,
            ~Q(**{f"{fk}__in": list(head_of)}),
            **{f"dup_of__{fk}__in": frontier, f"{fk}__in": reposts.values("pk")},
        )
        # Each re-post under the album it repeats most; of two equally, the older one.
        best: dict[int, tuple[int, int]] = {}
        for repost, target, count in rows:
            if repost not in best or (-count, target) < (-best[repost][1], best[repost][0]):
                best[repost] = (target, count)
        for repost, (target, _) in best.items():
            head_of[repost] = head_of[target]
        frontier = set(best)
    found = model.objects.in_bulk([pk for pk, head in head_of.items() if pk != head])
    folded: dict[int, list[Record]] = {}
    for repost in sorted(found.values(), key=lambda album: (album.created_at, album.pk)):
        folded.setdefault(head_of[repost.pk], []).append(repost)
    return folded
