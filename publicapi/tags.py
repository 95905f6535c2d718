"""Cache tags of public responses (the ``Surrogate-Key`` header): the records, brands and
lists a response shows, so that one purge drops every cached page that showed a record.

- a record's tag (``runway:12``, ``street-snap:5``) on its detail and on every page listing it;
- a brand's (``brand:<slug>``) on its page and wherever a runway shows its name.

Nothing names a whole list: a new publication reaches the lists by their short ``s-maxage``
(publicapi.http), not by a purge of every list.

The words are the view models' (``tag_word``, publicapi.models) and catalog.edge's, the same
on each side of the import contract (publicapi does not import catalog;
tests/catalog/test_edge.py checks both, and against a real Varnish): a change there purges
what these name here.
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from publicapi.models import PUBLIC_RECORDS, PublicBrand, PublicRunway, PublicStreetSnap

_SAFE = re.compile(r"[A-Za-z0-9:._~-]+")


def runways_tags(runways: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each runway's tag, then its brand's, runway by runway."""
    tags = []
    for runway in runways:
        tags.append(f"{PublicRunway.tag_word}{runway['id']}")
        brand = runway.get("brand")
        if brand and brand.get("slug"):
            tags.append(f"{PublicBrand.tag_word}{brand['slug']}")
    return tags


def street_snaps_tags(snaps: Iterable[Mapping[str, Any]]) -> list[str]:
    return [f"{PublicStreetSnap.tag_word}{snap['id']}" for snap in snaps]


def brands_tags(brands: Iterable[Mapping[str, Any]]) -> list[str]:
    return [f"{PublicBrand.tag_word}{brand['slug']}" for brand in brands]


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
            f"{PUBLIC_RECORDS[result['kind']].tag_word}{result['record_id']}"
            for result in data.get("results") or []
            if result.get("kind") in PUBLIC_RECORDS
        ]
    return []


def header_value(tags: Iterable[str]) -> str:
    """The tags once each, in the order first named, each one token: percent-encoded unless
    it is URL-safe (a slug with a space, or beyond Latin-1), as catalog.edge encodes them."""
    return " ".join(dict.fromkeys(_encoded(tag) for tag in tags))


def _encoded(tag: str) -> str:
    return tag if _SAFE.fullmatch(tag) else quote(tag, safe=":._~-")
