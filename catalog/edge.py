"""Purging the edge: the shared caches (Varnish, a CDN) in front of the public API and images.

Public API responses carry cache tags (`Surrogate-Key`, set by publicapi): the records they
show, the brands, and a tag per kind for everything that depends on which records of that kind
are public (lists, facets, search, similar images, brands, the index). A change purges the
tags :func:`record_tags` names and the URLs of the image objects whose visibility it changed;
catalog.visibility runs it after the change committed and after the bytes moved.

Two backends, off by default (EDGE_PURGE_BACKEND):

- ``http``: every cache in EDGE_PURGE_URLS gets one ``BAN`` request per batch, carrying a
  regular expression over the tags (``X-Ban-Tags``) and one over the image paths
  (``X-Ban-Paths``); config/varnish.vcl turns them into bans. Bans, not PURGE: a purge drops
  one URL, and a tag names every list page that showed a record, whatever its query string.
- ``cloudfront``: one invalidation per batch (CreateInvalidation): CloudFront has no tags, so
  a kind's tag becomes the path patterns of that kind's endpoints, and images their paths.

Every error is a :class:`PurgeError`: the caller keeps the change and tries again.
"""

from __future__ import annotations

import logging
import re
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from django.conf import settings

logger = logging.getLogger(__name__)

# The tag names; publicapi writes the same words on its responses (tests/catalog/test_edge.py
# checks both against a real Varnish).
KIND_TAGS = {"runway": "runways", "street": "street-snaps"}
RECORD_TAG = {"runway": "runway:{id}", "street": "street-snap:{id}"}
BRAND_TAG = "brand:{slug}"
BRANDS_TAG = "brands"

# CloudFront paths per tag prefix: a kind's change drops its endpoints and those that
# depend on it (the index, brands, similar images).
_API = "/api/v1/"
_CLOUDFRONT_PATHS = {
    "runway": ["runways*", "runway-images*", "index*", "brands*"],
    "street": ["street-snaps*", "street-snap-images*", "index*"],
    "brand": ["brands*", "runways*", "index*"],
}
# Varnish refuses request headers past 8 KB by default (http_req_hdr_len).
_HEADER_MAX = 6000


class PurgeError(Exception):
    """The edge did not confirm the purge; try again later."""


def record_tags(kind: str, record_id: int) -> list[str]:
    """What a change of a record purges: its own tag (its detail, and every page showing it)
    and its kind's (every page that depends on which records of the kind are public)."""
    return [RECORD_TAG[kind].format(id=record_id), KIND_TAGS[kind]]


def brand_tags(*slugs: str) -> list[str]:
    """What a change of a brand purges (its slug before and after an edit): its page and
    every runway page that shows its name; the lists of brands and runways, and the index."""
    return [
        *(BRAND_TAG.format(slug=slug) for slug in slugs if slug),
        BRANDS_TAG,
        KIND_TAGS["runway"],
    ]


def purge_enabled() -> bool:
    return bool(settings.EDGE_PURGE_BACKEND)


def edge_purge(*, tags: Iterable[str], urls: Iterable[str]) -> None:
    """Drop every cached response tagged with one of ``tags`` and the images at ``urls``,
    from every cache of the configured backend; nothing when purging is off."""
    tags, paths = sorted(set(tags)), sorted({_path(url) for url in urls})
    backend = settings.EDGE_PURGE_BACKEND
    if not backend or not (tags or paths):
        return
    if backend == "http":
        _http_purge(tags, paths)
    elif backend == "cloudfront":
        _cloudfront_purge(tags, paths)
    else:
        raise PurgeError(f"unknown EDGE_PURGE_BACKEND {backend!r}")
    logger.info("edge purged: %s tag(s), %s image path(s)", len(tags), len(paths))


def _path(url: str) -> str:
    return urlsplit(url).path or "/"


# --- HTTP: BAN requests to Varnish-like caches -----------------------------------------------


def tags_pattern(tags: Sequence[str]) -> str:
    """The regular expression matching a Surrogate-Key header that holds one of ``tags``."""
    return r"(^|\s)(" + "|".join(re.escape(tag) for tag in tags) + r")(\s|$)"


def paths_pattern(paths: Sequence[str]) -> str:
    """The regular expression matching a URL (query string or not) at one of ``paths``."""
    return r"^(" + "|".join(re.escape(path) for path in paths) + r")(\?.*)?$"


def _chunks(items: Sequence[str], pattern) -> list[list[str]]:
    chunks: list[list[str]] = []
    for item in items:
        if chunks and len(pattern([*chunks[-1], item])) <= _HEADER_MAX:
            chunks[-1].append(item)
        else:
            chunks.append([item])
    return chunks


def _http_purge(tags: list[str], paths: list[str]) -> None:
    if not settings.EDGE_PURGE_URLS:
        raise PurgeError("EDGE_PURGE_BACKEND is http but EDGE_PURGE_URLS is empty")
    requests_headers = [
        {"X-Ban-Tags": tags_pattern(chunk)} for chunk in _chunks(tags, tags_pattern)
    ]
    requests_headers += [
        {"X-Ban-Paths": paths_pattern(chunk)} for chunk in _chunks(paths, paths_pattern)
    ]
    for base in settings.EDGE_PURGE_URLS:
        if urlsplit(base).scheme not in ("http", "https"):
            raise PurgeError(f"EDGE_PURGE_URLS: {base!r} is not an http(s) URL")
        for headers in requests_headers:
            request = urllib.request.Request(base, method="BAN", headers=headers)  # noqa: S310 - checked above
            try:
                with urllib.request.urlopen(request, timeout=settings.EDGE_PURGE_TIMEOUT) as answer:  # noqa: S310
                    answer.read()
            except urllib.error.HTTPError as exc:
                raise PurgeError(f"BAN {base}: HTTP {exc.code} {exc.reason}") from exc
            except (OSError, urllib.error.URLError) as exc:
                raise PurgeError(f"BAN {base}: {exc}") from exc


# --- CloudFront: invalidations ----------------------------------------------------------------


def cloudfront_paths(tags: Sequence[str], paths: Sequence[str]) -> list[str]:
    """The invalidation paths of a purge: image paths as they are, each tag as the path
    patterns of the endpoints it stands for."""
    found: dict[str, None] = {}
    for tag in tags:
        prefix = tag.partition(":")[0]
        kind = {"runways": "runway", "street-snaps": "street", "street-snap": "street"}.get(
            prefix, prefix.removesuffix("s")
        )
        for pattern in _CLOUDFRONT_PATHS.get(kind, ["*"]):
            found[_API + pattern] = None
    for path in paths:
        found[path] = None
    return list(found)


def _cloudfront_purge(tags: list[str], paths: list[str]) -> None:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    if not settings.CLOUDFRONT_DISTRIBUTION_ID:
        raise PurgeError("EDGE_PURGE_BACKEND is cloudfront but CLOUDFRONT_DISTRIBUTION_ID is unset")
    items = cloudfront_paths(tags, paths)
    client = boto3.client("cloudfront", endpoint_url=settings.CLOUDFRONT_ENDPOINT_URL)
    # CloudFront takes up to 3,000 paths in one invalidation.
    for start in range(0, len(items), 3000):
        batch = items[start : start + 3000]
        try:
            client.create_invalidation(
                DistributionId=settings.CLOUDFRONT_DISTRIBUTION_ID,
                InvalidationBatch={
                    "Paths": {"Quantity": len(batch), "Items": batch},
                    "CallerReference": uuid.uuid4().hex,
                },
            )
        except (BotoCoreError, ClientError) as exc:
            raise PurgeError(f"CloudFront invalidation: {exc}") from exc
