"""Where image bytes live: content-addressed keys, in one place.

A key is derived from the bytes alone (`images/<sha1[:2]>/<sha1>.<ext>`), so the same image
stored twice - by a re-crawl, a retried job or two racing workers - lands on the same object:
re-uploads overwrite identical bytes and never leave orphans behind. The two-character fan-out
keeps directory listings (local media, `gc_media`) short.
"""

import os

from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage

IMAGE_PREFIX = "images"

_EXTENSION_BY_MIME = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/webp": "webp",
    "image/gif": "gif",
}


def image_key(*, sha1: str, mime_type: str) -> str:
    """The storage key of an image with these bytes (``sha1`` of the bytes, lowercase hex)."""
    if len(sha1) != 40 or any(c not in "0123456789abcdef" for c in sha1):
        raise ValueError(f"not a lowercase hex sha1: {sha1!r}")
    extension = _EXTENSION_BY_MIME.get(mime_type)
    if extension is None:
        raise ValueError(f"no storage extension for {mime_type!r}")
    return f"{IMAGE_PREFIX}/{sha1[:2]}/{sha1}.{extension}"


def image_store(*, data: bytes, sha1: str, mime_type: str, storage: Storage | None = None) -> str:
    """Store ``data`` under its content-addressed key and return the key.

    The caller computed ``sha1`` from ``data``; it is trusted (the worker hashes the bytes it
    downloaded). Storage errors propagate: the pipeline treats them as transient and retries.

    The object is written even when it exists. Besides being idempotent, that renews its age,
    which `gc_media` relies on: it deletes only unreferenced objects older than a grace period,
    so an old orphan that a running job is about to reference again must look young.
    """
    storage = storage or default_storage
    key = image_key(sha1=sha1, mime_type=mime_type)
    saved = storage.save(key, ContentFile(data))  # S3 with file_overwrite: overwritten in place
    if saved != key:
        # A storage that never overwrites (the local file system) chose another name because
        # the key exists - with identical bytes, by construction. Keep the original, renew it.
        storage.delete(saved)
        _touch(storage, key)
    return key


def _touch(storage: Storage, key: str) -> None:
    try:
        path = storage.path(key)
    except NotImplementedError:  # pragma: no cover - only local storages get another name
        return
    os.utime(path)
