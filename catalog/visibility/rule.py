"""The rule: an object (an original, or a rendition of it) is public exactly while a published,
live record shows its bytes through a live image. Objects are shared by content, so the rule is
per object, not per album: withdrawing album A keeps what album B still shows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from catalog import edge
from catalog.models import RECORD_MODELS, PublicObject, Record, public_q
from catalog.storage import sha1_of_rendition_key

PUBLISHED = Record.Status.PUBLISHED


def public_images(kind: str, now: datetime | None = None):
    """The live images of the records of one kind that are public now: published, live and
    inside their embargo."""
    image_model = RECORD_MODELS[kind].image_model()
    parent = image_model.record_field
    return image_model.objects.filter(public_q(now, prefix=f"{parent}__"), deleted_at__isnull=True)


def public_keys_among(keys: Iterable[str]) -> set[str]:
    """The keys among ``keys`` that a published, live record shows: originals by
    ``storage_key``, renditions by the sha1 of the bytes they were made from."""
    originals: list[str] = []
    renditions: dict[str, list[str]] = {}
    for key in keys:
        sha1 = sha1_of_rendition_key(key)
        if sha1 is None:
            originals.append(key)
        else:
            renditions.setdefault(sha1, []).append(key)
    found: set[str] = set()
    for kind in RECORD_MODELS:
        images = public_images(kind)
        if originals:
            found.update(
                images.filter(storage_key__in=originals).values_list("storage_key", flat=True)
            )
        if renditions:
            for sha1 in images.filter(sha1__in=list(renditions)).values_list("sha1", flat=True):
                found.update(renditions[sha1])
    return found


def key_is_public(key: str) -> bool:
    """The rule for one key: what the embedded mode's media route asks at each request."""
    return bool(public_keys_among([key]))


def records_showing(key: str) -> dict[tuple[str, int], datetime | None]:
    """The public records whose live images show ``key``'s bytes, as (kind, id), with each
    one's expiry: the albums an image response is tagged with, so that withdrawing any of them
    purges it, and the first time one of them leaves the public."""
    sha1 = sha1_of_rendition_key(key)
    found: dict[tuple[str, int], datetime | None] = {}
    for kind in RECORD_MODELS:
        images = public_images(kind)
        images = images.filter(sha1=sha1) if sha1 else images.filter(storage_key=key)
        parent = images.model.record_field
        rows = images.values_list(f"{parent}_id", f"{parent}__expires_at").distinct()
        found.update(((kind, pk), expires) for pk, expires in rows)
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class ImageResponse:
    """What a response serving a public object says of it to the edge."""

    tags: list[str]  # its image's and those of the albums that show it (catalog.edge)
    # When the last of those albums leaves the public (None: one never does): no cache may keep
    # the response past it.
    expires_at: datetime | None


def image_response(key: str) -> ImageResponse | None:
    """The edge's view of a response serving ``key``, or None when no public album shows it."""
    shown_by = records_showing(key)
    if not shown_by:
        return None
    tags = [edge.image_tag(key), *(t for kind, pk in shown_by for t in edge.record_tags(kind, pk))]
    expiries = [expires for expires in shown_by.values() if expires is not None]
    last = max(expiries) if len(expiries) == len(shown_by) else None
    return ImageResponse(tags, last)


def record_keys(kind: str, record_id: int) -> set[str]:
    """Every key a record's images name or named: originals, listed renditions, and what the
    ledger holds of their bytes (deleted images too: their keys may have to be withdrawn)."""
    return records_keys(kind, [record_id]).get(record_id, set())


def records_keys(kind: str, record_ids: Iterable[int]) -> dict[int, set[str]]:
    """:func:`record_keys` of many records of one kind at once: two queries."""
    image_model = RECORD_MODELS[kind].image_model()
    keys: dict[int, set[str]] = {}
    sha1s: dict[str, set[int]] = {}
    rows = image_model.objects.filter(**{f"{image_model.record_field}_id__in": list(record_ids)})
    fields = (f"{image_model.record_field}_id", "storage_key", "sha1", "renditions")
    for record_id, storage_key, sha1, renditions in rows.values_list(*fields):
        own = keys.setdefault(record_id, set())
        own.add(storage_key)
        own.update(r["key"] for r in renditions or [] if r.get("key"))
        if sha1:
            sha1s.setdefault(sha1, set()).add(record_id)
    if sha1s:
        ledger = PublicObject.objects.filter(sha1__in=list(sha1s)).values_list("sha1", "key")
        for sha1, key in ledger:
            for record_id in sha1s[sha1]:
                keys[record_id].add(key)
    return keys
