"""Purging the edge: the shared caches (Varnish, a CDN) in front of the public API and images.

Every cached response names what it shows in its cache tags (`Surrogate-Key`): public API
responses the records and brands they show (publicapi writes them), image responses their
object's tag and the tags of the albums that show it (config/media.py). So a purge names what
changed, never the pages or URLs that showed it: withdrawing an album purges its record tag,
which drops its detail, every list, search or index page that listed it, and every image of
it, whatever the URL's spelling or query string. A new publication purges nothing that lists
it: lists reach it when their short `s-maxage` runs out (the edge keeps serving the old page
meanwhile, in grace, and fetches the new one behind it: docs/operations.md, "The edge").

The tag words, the catalog's one definition of them (publicapi writes the same words on its
responses; tests/catalog/test_edge.py checks both against a real Varnish): a record's
``<edge_tag>:<id>``, each kind's word said by its model (``runway:<id>``, ``street-snap:<id>``:
catalog.models), a brand's ``brand:<slug>`` and an image's ``image:<sha1>`` here. A tag is sent
as it is when it is made of URL-safe characters, percent-encoded otherwise
(:func:`encode_tag`): a header of tags is split on spaces.

Two backends, off by default (EDGE_PURGE_BACKEND):

- ``http``: every cache in EDGE_PURGE_URLS gets ``PURGE`` requests whose ``xkey-purge`` header
  lists the tags (config/varnish.vcl hands them to varnish-modules' xkey, which drops every
  object carrying one of them and answers how many); as many requests as the header's size
  needs. A cache that does not confirm the purge (``X-Purged``) is an error.
- ``cloudfront``: one invalidation per batch (CreateInvalidation): CloudFront has no tags, so a
  record's or brand's tag becomes the paths of the endpoints that may show it, and an album's
  images their path prefixes.

Every error is a :class:`PurgeError`: the caller keeps the change and tries again.
"""

from __future__ import annotations

import logging
import re
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from urllib.parse import quote, urlsplit

from django.conf import settings
from django.utils import timezone

from catalog.models import RECORD_MODELS
from catalog.storage import IMAGE_PREFIX, RENDITION_PREFIX, sha1_of_rendition_key

logger = logging.getLogger(__name__)

BRAND_TAG = "brand:{slug}"
IMAGE_TAG = "image:{sha1}"

# Varnish refuses request headers past 8 KB by default (http_req_hdr_len).
_HEADER_MAX = 6000
# A CloudFront purge naming more image paths than this invalidates the whole media prefix:
# beyond the free thousand paths a month, each path is billed.
_CLOUDFRONT_IMAGE_PATHS_MAX = 1000
_SAFE = re.compile(r"[A-Za-z0-9:._~-]+")


class PurgeError(Exception):
    """The edge did not confirm the purge; try again later."""


def record_tags(kind: str, record_id: int) -> list[str]:
    """What a change of a record purges: its own tag (its detail, every page that listed it,
    its images)."""
    return [f"{RECORD_MODELS[kind].edge_tag}:{record_id}"]


def brand_tags(*slugs: str) -> list[str]:
    """What a change of a brand purges (its slug before and after an edit): its page and every
    page showing its name."""
    return [BRAND_TAG.format(slug=slug) for slug in slugs if slug]


def image_tag(key: str) -> str:
    """The tag of an image object and of every rendition of it: by the sha1 of its bytes when
    the key says it (every key ingest makes), else by the key itself (a legacy key)."""
    sha1 = sha1_of_rendition_key(key) or _sha1_of_original_key(key)
    return IMAGE_TAG.format(sha1=sha1 or key)


def image_tags(keys: Iterable[str]) -> list[str]:
    return sorted({image_tag(key) for key in keys})


def _sha1_of_original_key(key: str) -> str | None:
    parts = key.split("/")
    if len(parts) != 3 or parts[0] != IMAGE_PREFIX:
        return None
    sha1 = parts[2].partition(".")[0]
    if len(sha1) != 40 or any(c not in "0123456789abcdef" for c in sha1) or parts[1] != sha1[:2]:
        return None
    return sha1


def encode_tag(tag: str) -> str:
    """``tag`` as one token of a tags header: as it is when URL-safe, else percent-encoded
    (UTF-8), so a slug with a space or a letter outside Latin-1 is still one tag."""
    if _SAFE.fullmatch(tag):
        return tag
    return quote(tag, safe=":._~-")


def tags_header(tags: Iterable[str]) -> str:
    """The tags once each, in the order first named, encoded, space-separated."""
    return " ".join(dict.fromkeys(encode_tag(tag) for tag in tags))


def seconds_until(moment: datetime | None) -> int:
    """Whole seconds from now to ``moment`` (0 once it passed), for a cache lifetime that must
    end by then; more than any lifetime when there is no moment."""
    if moment is None:
        return 10**9
    return max(0, int((moment - timezone.now()).total_seconds()))


def purge_enabled() -> bool:
    return bool(settings.EDGE_PURGE_BACKEND)


def edge_purge(*, tags: Iterable[str]) -> None:
    """Drop every cached response carrying one of ``tags``, from every cache of the configured
    backend; nothing when purging is off."""
    tags = sorted(set(tags))
    backend = settings.EDGE_PURGE_BACKEND
    if not backend or not tags:
        return
    if backend == "http":
        _http_purge(tags)
    elif backend == "cloudfront":
        _cloudfront_purge(tags)
    else:
        raise PurgeError(f"unknown EDGE_PURGE_BACKEND {backend!r}")
    logger.info("edge purged: %s tag(s)", len(tags))


# --- HTTP: xkey purges of Varnish-like caches -------------------------------------------------


def tag_chunks(tags: Sequence[str]) -> list[str]:
    """The ``xkey-purge`` header values for ``tags``: each under the caches' header limit."""
    chunks: list[str] = []
    for tag in (encode_tag(tag) for tag in tags):
        if chunks and len(chunks[-1]) + 1 + len(tag) <= _HEADER_MAX:
            chunks[-1] += " " + tag
        else:
            chunks.append(tag)
    return chunks


def _http_purge(tags: list[str]) -> None:
    if not settings.EDGE_PURGE_URLS:
        raise PurgeError("EDGE_PURGE_BACKEND is http but EDGE_PURGE_URLS is empty")
    chunks = tag_chunks(tags)
    for base in settings.EDGE_PURGE_URLS:
        if urlsplit(base).scheme not in ("http", "https"):
            raise PurgeError(f"EDGE_PURGE_URLS: {base!r} is not an http(s) URL")
        for chunk in chunks:
            request = urllib.request.Request(  # noqa: S310 - checked above
                base, method="PURGE", headers={"xkey-purge": chunk}
            )
            try:
                with urllib.request.urlopen(request, timeout=settings.EDGE_PURGE_TIMEOUT) as answer:  # noqa: S310
                    answer.read()
                    confirmed = answer.headers.get("X-Purged")
            except urllib.error.HTTPError as exc:
                raise PurgeError(f"PURGE {base}: HTTP {exc.code} {exc.reason}") from exc
            except (OSError, urllib.error.URLError) as exc:
                raise PurgeError(f"PURGE {base}: {exc}") from exc
            if confirmed is None or not confirmed.isdigit():
                # A cache without the project's VCL answers 200 to anything it passes on.
                raise PurgeError(
                    f"PURGE {base}: the cache did not confirm it (no X-Purged header): is it "
                    "running config/varnish.vcl with varnish-modules' xkey?"
                )


# --- CloudFront: invalidations ----------------------------------------------------------------

_API = "/api/v1/"
# The endpoints a brand's tag may have been cached under (a record's: its model's public_paths).
_BRAND_PATHS = ("brands*", "runways*", "index*")


def cloudfront_paths(tags: Sequence[str]) -> list[str]:
    """The invalidation paths of a purge: each record's and brand's tag as the endpoints that
    may show it, and the path prefixes of the images of each record (every image of the
    media prefix when there are too many)."""
    found: dict[str, None] = {}
    images: set[str] = set()
    by_word = {model.edge_tag: model for model in RECORD_MODELS.values()}
    brand_word = BRAND_TAG.partition(":")[0]
    image_word = IMAGE_TAG.partition(":")[0]
    for tag in tags:
        word, _, value = tag.partition(":")
        model = by_word.get(word)
        if model is not None:
            found.update(dict.fromkeys(_API + pattern for pattern in model.public_paths))
        elif word == brand_word:
            found.update(dict.fromkeys(_API + pattern for pattern in _BRAND_PATHS))
        if word == image_word:
            images.add(value)
        elif model is not None and value.isdigit():
            image_model = model.image_model()
            rows = image_model.objects.filter(**{f"{image_model.record_field}_id": int(value)})
            images.update(sha1 for sha1 in rows.values_list("sha1", flat=True) if sha1)
    media = settings.MEDIA_URL if settings.MEDIA_URL.startswith("/") else "/media/"
    image_paths = [
        path
        for sha1 in sorted(images)
        for path in (
            f"{media}{IMAGE_PREFIX}/{sha1[:2]}/{sha1}*",
            f"{media}{RENDITION_PREFIX}/{sha1[:2]}/{sha1}/*",
        )
    ]
    if len(image_paths) > _CLOUDFRONT_IMAGE_PATHS_MAX:
        image_paths = [f"{media}*"]
    return [*found, *image_paths]


def _cloudfront_purge(tags: list[str]) -> None:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    if not settings.CLOUDFRONT_DISTRIBUTION_ID:
        raise PurgeError("EDGE_PURGE_BACKEND is cloudfront but CLOUDFRONT_DISTRIBUTION_ID is unset")
    items = cloudfront_paths(tags)
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
