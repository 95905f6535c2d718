"""What the record lists and record pages show of an album: the list's columns and the
page's read-only fields, as display functions (Django's list_display and readonly_fields
take them as they take a model admin's methods)."""

from __future__ import annotations

from django.contrib import admin
from django.template.defaultfilters import pluralize
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince
from django.utils.translation import ngettext

from catalog.models import Record, Runway, StreetSnap
from review.admin.display import (
    admin_datetime,
    admin_url,
    embargo_lines,
    ingest_job_url,
    rendition_note,
    thumbnail_is_original,
    thumbnail_url,
)


@admin.display(description="cover")
def cover_thumbnail(obj: Record) -> str:
    picture = _cover_picture(obj)
    url = getattr(obj, "queue_url", "")
    if not url:
        return picture
    # The title's link goes to the same page and is the one read out: this one is for the mouse.
    return format_html('<a href="{}" tabindex="-1" aria-hidden="true">{}</a>', url, picture)


def _cover_picture(obj: Record) -> str:
    if obj.cover is None:
        return format_html('<span class="review-nocover">{}</span>', "no cover")
    if not thumbnail_url(obj.cover):  # no rendition yet: never the original, which is large
        return format_html(
            '<span class="review-list-thumb review-placeholder" title="{}">{}</span>',
            rendition_note(obj.cover),
            "no thumbnail yet",
        )
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


def _album_cell(obj: Record, details: list[object]) -> str:
    """The album's title, linked to its page in the editor's queue (RecordChangeList sets
    `queue_url`), what identifies it in a line below, the album it repeats most if any, and
    the re-posts folded under it (RecordChangeList sets `reposts`): one column, so the list
    fits a 1280 px screen with both sidebars open."""
    url = getattr(obj, "queue_url", "")
    title = format_html('<a href="{}">{}</a>', url, obj) if url else format_html("{}", obj)
    lines = [
        format_html('<span class="review-album-title">{}</span>', title),
        format_html(
            '<span class="review-album-meta">{}</span>',
            " · ".join(str(part) for part in details if part),
        ),
    ]
    lines.extend(
        format_html('<span class="review-embargo-album">{}</span>', line)
        for line in embargo_lines(obj)
    )
    repeat = getattr(obj, "repeat", None)
    if repeat is not None:
        lines.append(
            format_html(
                '<span class="review-repeat-badge">{} of {} repeat “{}” ({})</span>',
                repeat.count,
                repeat.total,
                repeat.record,
                repeat.record.get_status_display().lower(),
            )
        )
    reposts = getattr(obj, "reposts", None)
    if reposts:
        lines.append(
            format_html(
                '<span class="review-reposts">Re-posted {} by {}, decided with it: {}</span>',
                ngettext("once", "%(n)d times", len(reposts)) % {"n": len(reposts)},
                obj.source,
                format_html_join(
                    ", ",
                    '<a href="{}">id {}</a>',
                    ((admin_url(repost, "change", repost.pk), repost.pk) for repost in reposts),
                ),
            )
        )
    return format_html_join("", "{}", ((line,) for line in lines))


@admin.display(description="album", ordering="title")
def runway_album_column(runway: Runway) -> str:
    return _album_cell(
        runway,
        [runway.brand, runway.season_code, runway.collection_type, runway.year],
    )


@admin.display(description="album", ordering="title")
def street_album_column(snap: StreetSnap) -> str:
    when = f"{snap.year}-{snap.month:02d}" if snap.month else snap.year
    return _album_cell(snap, [snap.city, when])


@admin.display(description="status", ordering="status_rank")
def status_column(obj: Record) -> str:
    return format_html(
        '<span class="review-status review-status-{}">{}</span>',
        obj.status,
        obj.get_status_display(),
    )


@admin.display(description="images", ordering="image_count")
def images_column(obj: Record) -> str:
    # Annotated by RecordAdmin.get_queryset.
    duplicates = obj.duplicate_count  # type: ignore[attr-defined]
    if not duplicates:
        return str(obj.image_count)
    # Short, for a narrow column; the whole word on hover.
    return format_html(
        '{}<br><span class="review-dup-count" title="{} near-duplicate{}">{} dup{}</span>',
        obj.image_count,
        duplicates,
        pluralize(duplicates),
        duplicates,
        pluralize(duplicates),
    )


@admin.display(description="received", ordering="created_at")
def received_column(obj: Record) -> str:
    return format_html(
        '<span title="{}" class="review-nowrap">{} ago</span>',
        admin_datetime(obj.created_at),
        timesince(obj.created_at, depth=1),
    )


@admin.display(description="status")
def status_display(obj: Record) -> str:
    return status_column(obj)


@admin.display(description="source URL")
def source_link(obj: Record) -> str:
    if not obj.source_url.startswith(("https://", "http://")):
        return obj.source_url or "–"  # never a javascript: or data: link
    return format_html(
        '<a href="{}" target="_blank" rel="noopener noreferrer">{}</a>',
        obj.source_url,
        obj.source_url,
    )


@admin.display(description="ingest job")
def ingest_job(obj: Record) -> str:
    if not obj.ingest_job_id:
        return "–"
    url = ingest_job_url(obj.ingest_job_id)
    if not url:
        return str(obj.ingest_job_id)
    return format_html('<a href="{}">job {}</a>', url, obj.ingest_job_id)
