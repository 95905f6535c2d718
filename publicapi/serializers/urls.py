"""Image URLs: what the storage gives for a key, always absolute.

With a bucket the storage gives an absolute URL already (the bucket or its CDN,
AWS_S3_CUSTOM_DOMAIN). The local media folder gives a path (`/media/...`), which is made
absolute with the request's scheme and host so a frontend on another origin can use it as it
is.
"""

import re
from urllib.parse import urlsplit

from django.core.files.storage import Storage, storages
from django.core.signals import setting_changed
from django.dispatch import receiver


def absolute_url(key: str, request) -> str:
    if request is None:
        return storage_url(key)
    base = request.__dict__.get("_public_url_base")
    if base is None:
        prefix = _plain_prefix(storages["public"])
        base = request._public_url_base = _absolute(prefix, request) if prefix else ""
    if base and _PLAIN_KEY.match(key):
        # The storage's prefix made absolute once per request, then each plain key after it:
        # an image has up to three URLs (the original and its renditions).
        return base + key
    return _absolute(storage_url(key), request)


def _absolute(url: str, request) -> str:
    if url.startswith("/") and not url.startswith("//") and "/." not in url:
        # What build_absolute_uri makes of a plain path: the request's scheme and host before
        # it, taken once per request rather than parsed again for every image of a page.
        prefix = getattr(request, "_public_url_prefix", None)
        if prefix is None:
            prefix = request._public_url_prefix = request.build_absolute_uri("/")[:-1]
        return prefix + url
    if urlsplit(url).netloc:
        return url
    return request.build_absolute_uri(url)


# A storage key whose URL is the storage's URL prefix followed by the key as it is: path
# segments of URL-safe characters, none starting with a dot (no "." or ".." to resolve, nothing
# to quote). Every key catalog.keys makes is one; a legacy key may not be.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*\Z")
_PROBE = "probe/0.webp"
_url_prefixes: dict[Storage, str] = {}  # "": this storage's URLs are not plain


def storage_url(key: str) -> str:
    """The public store's URL of ``key`` (``storages["public"]``: a copy of exactly the
    public bytes, or the media route that answers from the database), without asking the
    storage for each image of a page.

    The local media folder and a bucket or CDN with plain URLs give the same prefix before
    every key; it is worked out once per storage, from the URL of a probe key, and a plain
    key is appended to it (a sixth to a ninth of the time of a storage's url() per image in
    bench/public_api.py; a page has an original and its renditions for each image). Signed
    URLs (a query string that changes per key), and keys that are not plain, are asked of the
    storage each time.
    """
    storage = storages["public"]
    prefix = _plain_prefix(storage)
    if prefix and _PLAIN_KEY.match(key):
        return prefix + key
    return storage.url(key)


def _plain_prefix(storage: Storage) -> str:
    """What `storage` puts before a plain key, or "" if its URLs are not plain."""
    try:
        return _url_prefixes[storage]
    except KeyError:
        probe = storage.url(_PROBE)
        plain = probe.endswith(_PROBE) and "?" not in probe and "#" not in probe
        prefix = _url_prefixes[storage] = probe[: -len(_PROBE)] if plain else ""
        return prefix


@receiver(setting_changed)
def _forget_url_prefixes(**kwargs) -> None:
    # Tests change MEDIA_URL and STORAGES; a storage's URL settings are its own otherwise.
    _url_prefixes.clear()
