"""The press preview page (/preview/<token>/) and its pictures: read-only, no login, for
whoever holds a link an editor made (review.services.previews).

Nothing here may outlive the link: the page and every picture answer `Cache-Control: private,
no-store` and `X-Robots-Tag: noindex`, and each request checks the link again, so a revoked or
expired link shows nothing from the next request on (404, as an unknown one). The pictures are
the album's renditions, read from the private store and streamed (never copied to the public
one: the album is not public), behind URLs signed for a few minutes and for one link, one
picture and one size (a forwarded picture URL dies with its link, or sooner).

The page is a handful of queries whatever the album's size: the link with its album, the
view's count, the pictures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.http import FileResponse, HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.utils import formats, timezone
from django.views.decorators.http import require_safe

from catalog.imaging import WIDTHS
from catalog.models import THUMBNAIL_WIDTH, Record, RecordImage
from review.services import preview_link_find, preview_link_open

# How long a picture's URL is good for (never past its link's expiry: every request checks
# the link). The page is never cached, so reloading it gives fresh URLs.
PREVIEW_IMAGE_SECONDS = 15 * 60
# The widest rendition the page links to (catalog.imaging.WIDTHS has them all).
PREVIEW_WIDTH = 1200
_SIGNER_SALT = "review.previews.image"
_ORIGINAL = "original"
_PLACEHOLDER = "0.0.x"


def _never_kept(response: HttpResponseBase) -> HttpResponseBase:
    # Exactly these words: no browser, proxy or CDN keeps a preview, no search engine lists it.
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex"
    return response


def _not_found(request) -> HttpResponseBase:
    # The same answer for unknown, revoked and expired links: a guess learns nothing.
    response = render(request, "review/preview_gone.html", status=404)
    return _never_kept(response)


@require_safe
def preview_page(request, token: str) -> HttpResponseBase:
    link = preview_link_open(token=token)
    if link is None:
        return _not_found(request)
    record = link.record
    images = list(_album_images(record))
    url = reverse("preview-image", args=[_PLACEHOLDER])
    signer = signing.TimestampSigner(salt=_SIGNER_SALT)

    def signed(image: RecordImage, size: str) -> str:
        return url.replace(_PLACEHOLDER, signer.sign(f"{link.pk}.{image.pk}.{size}"))

    context = {
        "record": record,
        "facts": _facts(record),
        "groups": [
            {"label": label, "pictures": [_picture(image, alt, signed) for image, alt in shots]}
            for label, shots in _groups(record, images)
        ],
        "picture_total": len(images),
        "expires": _when(link.expires_at),
    }
    return _never_kept(render(request, "review/preview.html", context))


@require_safe
def preview_image(request, signed: str) -> HttpResponseBase:
    try:
        value = signing.TimestampSigner(salt=_SIGNER_SALT).unsign(
            signed, max_age=PREVIEW_IMAGE_SECONDS
        )
        link_id, image_id, size = value.split(".")
        link = preview_link_find(pk=int(link_id))
    except (signing.BadSignature, ValueError):  # tampered, too old, or not ours at all
        link = None
    if link is None:
        return _not_found(request)
    record = link.record
    image = _album_images(record).filter(pk=int(image_id)).first()
    stored = _stored(image, size) if image is not None else None
    if stored is None:
        return _not_found(request)
    key, content_type = stored
    try:
        # The private store, local or a bucket: streamed, never published.
        response = FileResponse(default_storage.open(key, "rb"), content_type=content_type)
    except FileNotFoundError:
        return _not_found(request)
    return _never_kept(response)


def _album_images(record: Record):
    """The album's live pictures, in look order for a kind with looks, else the crawler's."""
    image_model = record.image_model()
    order = ["look_index"] if image_model.has_looks else []
    return (
        image_model.objects.live()
        .filter(**{image_model.record_field: record.pk})
        .order_by(*order, "sort_order", "pk")
    )


def _stored(image: RecordImage, size: str) -> tuple[str, str] | None:
    """The key and content type of the picture's `size` ("400", "1200", "original"), if the
    page may show it: a rendition, or the original where it is the small picture (renditions
    made, none 400 wide), as the admin's grid shows it."""
    if size == _ORIGINAL:
        if _shown_as_original(image):
            return image.storage_key, image.mime_type or "application/octet-stream"
        return None
    found = image.rendition(int(size)) if size.isdigit() else None
    return (found["key"], "image/webp") if found is not None else None


def _shown_as_original(image: RecordImage) -> bool:
    return (
        image.rendition_status == RecordImage.RenditionStatus.DONE
        and image.rendition(THUMBNAIL_WIDTH) is None
    )


def _picture(image: RecordImage, alt: str, signed) -> dict[str, Any]:
    """One picture of the page: its small URL, its larger ones (srcset), its size."""
    sizes = [
        r for r in image.renditions if r.get("width") in WIDTHS and r["width"] <= PREVIEW_WIDTH
    ]
    if sizes:
        small = next((r for r in sizes if r["width"] == THUMBNAIL_WIDTH), sizes[0])
        return {
            "alt": alt,
            "src": signed(image, str(small["width"])),
            "srcset": ", ".join(f"{signed(image, str(r['width']))} {r['width']}w" for r in sizes),
            "full": signed(image, str(sizes[-1]["width"])),
            "width": small["width"],
            "height": small.get("height"),
        }
    if _shown_as_original(image):
        url = signed(image, _ORIGINAL)
        return {"alt": alt, "src": url, "srcset": "", "full": url, "width": image.width,
                "height": image.height}  # fmt: skip
    return {"alt": alt, "src": ""}  # renditions not made yet, or failed: said, not shown


def _groups(record: Record, images: list[Any]) -> list[tuple[str, list[tuple[Any, str]]]]:
    """The pictures as the album groups them, each with its alternative text: looks (a
    runway), or a main picture with its details (a street album), as the model says."""
    image_model = record.image_model()
    if image_model.has_looks:
        looks: dict[int, list] = {}
        for image in images:
            looks.setdefault(image.look_index, []).append(image)
        named = {look: f"Look {look}" if look else "Without a look" for look in looks}
        return [(named[look], _named(named[look], shots)) for look, shots in looks.items()]
    if image_model.has_details:
        mains = [image for image in images if not image.is_detail]
        main_ids = {image.pk for image in mains}
        details: dict[int, list] = {}
        for image in images:
            if image.is_detail and image.parent_id in main_ids:
                details.setdefault(image.parent_id, []).append(image)
        # A detail whose main picture is gone is shown on its own, as the public API does.
        groups = [
            [image, *details.get(image.pk, [])]
            for image in images
            if not image.is_detail or image.parent_id not in main_ids
        ]
        return [
            (f"Picture {n}", _named(f"Picture {n}", group, detail=True))
            for n, group in enumerate(groups, start=1)
        ]
    return [("", _named("Picture", images))]


def _named(label: str, shots: Iterable, *, detail: bool = False) -> list[tuple[Any, str]]:
    shots = list(shots)
    if len(shots) == 1:
        return [(shots[0], label)]
    if detail:
        return [(s, label if n == 0 else f"{label}, detail {n}") for n, s in enumerate(shots)]
    return [(s, f"{label}, picture {n} of {len(shots)}") for n, s in enumerate(shots, start=1)]


def _facts(record: Record) -> list[tuple[str, str]]:
    """What the album is, as its editors filled it in (its model's editable fields, title and
    description aside): a runway's brand and season, a street album's city and month."""
    facts = []
    for name in record.editable_fields:
        if name in ("title", "description"):
            continue
        value = getattr(record, name)
        if value in (None, "", 0):
            continue
        label = str(getattr(record._meta.get_field(name), "verbose_name", name))
        facts.append((label[:1].upper() + label[1:], str(value)))
    return facts


def _when(moment) -> str:
    with timezone.override(settings.EDITORS_TIME_ZONE):
        local = timezone.localtime(moment)
        return f"{formats.date_format(local, 'DATETIME_FORMAT')} ({local.tzname()})"
