"""How the editors' admin shows albums and images: admin URLs, thumbnails and the notes
beside them, near-duplicate distances. (Image names and numbers: review.naming.)"""

from __future__ import annotations

from datetime import datetime

from django.core.files.storage import default_storage
from django.urls import NoReverseMatch, reverse
from django.utils import formats, timezone
from django.utils.timesince import timesince, timeuntil

from catalog.imaging import WIDTHS as RENDITION_WIDTHS
from catalog.models import THUMBNAIL_WIDTH, RecordImage

# The compare view's and the full-size view's picture: at most this wide.
PREVIEW_WIDTH = 1200


def admin_datetime(value: datetime | None) -> str:
    """A time as every admin page shows one: the locale's DATETIME_FORMAT, in the current time
    zone (the `|date:"DATETIME_FORMAT"` of the templates, and Django's own read-only fields)."""
    if value is None:
        return "—"
    return formats.date_format(timezone.localtime(value), "DATETIME_FORMAT")


def admin_url(model, view: str, *args) -> str:
    """The URL of one of the admin's pages for `model` (a class or an instance)."""
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def original_url(image: RecordImage | None) -> str:
    # Keys are content-addressed and public; the URL is computed, no request to the storage.
    return default_storage.url(image.storage_key) if image is not None else ""


def thumbnail_url(image: RecordImage | None) -> str:
    """The image's 400 px rendition; its original only where that is the small picture
    (narrower than 400: renditions made, none that wide); '' while it has no rendition (not
    made yet, or failed): the page shows a placeholder then, never a large original (a
    60-photo show right after ingest would otherwise load some 40 MB).

    Keys are content-addressed and public; the URL is computed, no request to the storage.
    """
    if image is None:
        return ""
    url = image.rendition_url(THUMBNAIL_WIDTH)
    if url is None and thumbnail_is_original(image):
        return original_url(image)
    return url or ""


def preview_url(image: RecordImage | None) -> str:
    """The largest rendition up to 1200 px (the compare view, the full-size view of the
    grid); the original only where it is narrower than 400; '' while it has no rendition."""
    if image is None:
        return ""
    for width in sorted((w for w in RENDITION_WIDTHS if w <= PREVIEW_WIDTH), reverse=True):
        url = image.rendition_url(width)
        if url is not None:
            return url
    return original_url(image) if thumbnail_is_original(image) else ""


def thumbnail_is_original(image: RecordImage | None) -> bool:
    """Whether the image is shown as it is: its renditions are made and none is 400 wide."""
    return (
        image is not None
        and image.rendition_status == RecordImage.RenditionStatus.DONE
        and image.rendition(THUMBNAIL_WIDTH) is None
    )


def rendition_note(image: RecordImage) -> str:
    """Why an image shows no 400 px rendition ('' when it does)."""
    if image.rendition(THUMBNAIL_WIDTH) is not None:
        return ""
    status = image.rendition_status
    if status == RecordImage.RenditionStatus.FAILED:
        return f"no renditions: {image.rendition_error or 'they failed'}"
    if status == RecordImage.RenditionStatus.PENDING:
        return "renditions not made yet"
    return f"narrower than {THUMBNAIL_WIDTH} px: shown as it is"


# A stand-in image id in a URL reversed once and filled in per tile.
IMAGE_ID = 987654321


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


def zone_name(moment: datetime) -> str:
    """The editors' time zone as a banner names it: its city ("Paris" for Europe/Paris), or
    its abbreviation for a zone named after no city (UTC)."""
    zone = timezone.get_current_timezone()
    key = getattr(zone, "key", "")
    if "/" in key and not key.startswith("Etc/"):
        return key.rsplit("/", 1)[-1].replace("_", " ")
    return timezone.localtime(moment).tzname() or key


def embargo_time(moment: datetime, now: datetime) -> str:
    """A go-live or expiry as the editors read it, in their time zone, and how far it is:
    "Tue 3 Mar 20:30 Paris, in 2 days" (the year when it is not this one's)."""
    local = timezone.localtime(moment)
    shape = "D j M H:i" if local.year == timezone.localtime(now).year else "D j M Y H:i"
    when = f"{formats.date_format(local, shape)} {zone_name(moment)}"
    if moment > now:
        return f"{when}, in {timeuntil(moment, now, depth=1)}"
    return f"{when}, {timesince(moment, now, depth=1)} ago"


def embargo_lines(record, now: datetime | None = None) -> list[str]:
    """What an album's go-live and expiry mean now, a sentence each (the record page's banner,
    the list's album cell); none for an album without either."""
    now = now or timezone.now()
    published = record.status == record.Status.PUBLISHED
    lines = []
    if record.go_live_at is not None:
        if record.go_live_at > now:
            verb = "Goes live" if published else "Would go live, once approved,"
        else:
            verb = "Went live" if published else "Go-live was"
        lines.append(f"{verb} {embargo_time(record.go_live_at, now)}")
    if record.expires_at is not None:
        verb = "Expires" if record.expires_at > now else "Expired"
        lines.append(f"{verb} {embargo_time(record.expires_at, now)}")
    return lines


def approved_message(record) -> str:
    """The message after an approve: an album with a go-live to come (a crawler's embargo)
    is scheduled, not on the site yet, and the message says until when."""
    now = timezone.now()
    if record.go_live_at is None or record.go_live_at <= now:
        return f"Approved and published “{record}”."
    return f"Approved “{record}”: scheduled, it goes live {embargo_time(record.go_live_at, now)}."
