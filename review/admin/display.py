"""How the editors' admin shows albums and images: admin URLs, thumbnails and the notes
beside them, near-duplicate distances. (Image names and numbers: review.naming.)"""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.urls import NoReverseMatch, reverse

from catalog.models import THUMBNAIL_WIDTH, RecordImage


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
