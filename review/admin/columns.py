"""What the record lists and record pages show of an album: the list's columns and the
page's read-only fields, as display functions (Django's list_display and readonly_fields
take them as they take a model admin's methods)."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html
from django.utils.timesince import timesince

from catalog.models import Record, Runway
from review.admin.display import (
    ingest_job_url,
    rendition_note,
    thumbnail_is_original,
    thumbnail_url,
)


@admin.display(description="cover")
def cover_thumbnail(obj: Record) -> str:
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


@admin.display(description="title", ordering="title")
def title_column(obj: Record) -> str:
    return str(obj)


@admin.display(description="season", ordering="season_code")
def season_column(runway: Runway) -> str:
    return f"{runway.season_code} · {runway.collection_type}"


@admin.display(description="status", ordering="status_rank")
def status_column(obj: Record) -> str:
    return format_html(
        '<span class="review-status review-status-{}">{}</span>',
        obj.status,
        obj.get_status_display(),
    )


@admin.display(description="images", ordering="image_count")
def images_column(obj: Record) -> int:
    return obj.image_count


@admin.display(description="near-dups", ordering="duplicate_count")
def duplicates_column(obj: Record) -> str:
    # Annotated by RecordAdmin.get_queryset.
    if not obj.duplicate_count:  # type: ignore[attr-defined]
        return "–"
    return format_html('<span class="review-dup-count">{}</span>', obj.duplicate_count)  # type: ignore[attr-defined]


@admin.display(description="repeats")
def repeats_column(obj: Record) -> str:
    """The album this one repeats most (RecordChangeList reads them for the page)."""
    repeat = getattr(obj, "repeat", None)
    if repeat is None:
        return "–"
    return format_html(
        '<span class="review-repeat-badge">{} of {} repeat “{}”</span> ({})',
        repeat.count,
        repeat.total,
        repeat.record,
        repeat.record.get_status_display().lower(),
    )


@admin.display(description="received", ordering="created_at")
def received_column(obj: Record) -> str:
    return format_html(
        '<span title="{}">{} ago</span>',
        obj.created_at.strftime("%Y-%m-%d %H:%M"),
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
