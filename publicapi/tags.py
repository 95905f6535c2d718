"""Cache tags of public responses (the ``Surrogate-Key`` header): the records, brands and
lists a response shows, so that one purge drops every cached page that showed a record.

- a record's tag (``runway:12``, ``street-snap:5``) on its detail and on every page listing it;
- a brand's (``brand:<slug>``) on its page and wherever a runway shows its name.

Nothing names a whole list: a new publication reaches the lists by their short ``s-maxage``
(publicapi.http), not by a purge of every list.

The words are catalog.edge's (publicapi does not import catalog; tests/catalog/test_edge.py
checks both against a real Varnish): a change there purges what these name here.
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

_SAFE = re.compile(r"[A-Za-z0-9:._~-]+")

RUNWAY_TAG, STREET_SNAP_TAG, BRAND_TAG = "runway:", "street-snap:", "brand:"  # + id or slug
_RECORD = {"runway": RUNWAY_TAG, "street": STREET_SNAP_TAG}


def runways_tags(runways: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each runway's tag, then its brand's, runway by runway."""
    tags = []
    for runway in runways:
        tags.append(f"{RUNWAY_TAG}{runway['id']}")
        brand = runway.get("brand")
        if brand and brand.get("slug"):
            tags.append(f"{BRAND_TAG}{brand['slug']}")
    return tags


def street_snaps_tags(snaps: Iterable[Mapping[str, Any]]) -> list[str]:
    return [f"{STREET_SNAP_TAG}{snap['id']}" for snap in snaps]


def brands_tags(brands: Iterable[Mapping[str, Any]]) -> list[str]:
    return [f"{BRAND_TAG}{brand['slug']}" for brand in brands]


def response_tags(kind: str | None, action: str | None, data: Any) -> list[str]:
    """The tags of a successful response of a view of ``kind`` (its ``cache_kind``) and
    ``action`` (a viewset's list, retrieve, list_facets), from the JSON it sends."""
    if kind is None or not isinstance(data, Mapping):
        return []
    if kind in ("runway", "street"):
        tags_of = runways_tags if kind == "runway" else street_snaps_tags
        if action == "retrieve":
            return tags_of([data])
        return tags_of(data.get("results") or [])
    if kind == "brand":
        if action == "retrieve":
            return [*brands_tags([data]), *runways_tags(data.get("runways") or [])]
        return brands_tags(data.get("results") or [])
    if kind == "index":
        return [
            *runways_tags(data.get("latest_runways") or []),
            *street_snaps_tags(data.get("latest_street_snaps") or []),
            *brands_tags(data.get("featured_brands") or []),
        ]
    if kind == "similar":
        return [
            f"{_RECORD[result['kind']]}{result['record_id']}"
            for result in data.get("results") or []
            if result.get("kind") in _RECORD
        ]
    return []


def header_value(tags: Iterable[str]) -> str:
    """The tags once each, in the order first named, each one token: percent-encoded unless
    it is URL-safe (a slug with a space, or beyond Latin-1), as catalog.edge encodes them."""
    return " ".join(dict.fromkeys(_encoded(tag) for tag in tags))


def _encoded(tag: str) -> str:
    return tag if _SAFE.fullmatch(tag) else quote(tag, safe=":._~-")
