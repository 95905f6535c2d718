"""Cache tags of public responses (the ``Surrogate-Key`` header): the records, brands and
lists a response shows, so that one purge drops every cached page that showed a record.

- a record's tag (``runway:12``, ``street-snap:5``) on its detail and on every page listing it;
- a brand's (``brand:<slug>``) on its page and wherever a runway shows its name;
- a kind's (``runways``, ``street-snaps``, ``brands``) on every response that depends on which
  records of that kind are public: lists, facets, search, the index, brands, similar images.

The words are catalog.edge's (publicapi does not import catalog; tests/catalog/test_edge.py
checks both against a real Varnish): a change there purges what these name here.
"""

from collections.abc import Iterable, Mapping
from typing import Any

RUNWAYS, STREET_SNAPS, BRANDS = "runways", "street-snaps", "brands"
_RECORD = {"runway": "runway:{}", "street": "street-snap:{}"}


def runway_tags(runway: Mapping[str, Any]) -> list[str]:
    brand = runway.get("brand") or {}
    tags = [_RECORD["runway"].format(runway["id"])]
    if brand.get("slug"):
        tags.append(f"brand:{brand['slug']}")
    return tags


def street_snap_tags(snap: Mapping[str, Any]) -> list[str]:
    return [_RECORD["street"].format(snap["id"])]


def brand_tags(brand: Mapping[str, Any]) -> list[str]:
    return [f"brand:{brand['slug']}"]


def _each(items: Iterable[Mapping[str, Any]], tags_of) -> list[str]:
    return [tag for item in items for tag in tags_of(item)]


def response_tags(kind: str | None, action: str | None, data: Any) -> list[str]:
    """The tags of a successful response of a view of ``kind`` (its ``cache_kind``) and
    ``action`` (a viewset's list, retrieve, list_facets), from the JSON it sends."""
    if kind is None or not isinstance(data, Mapping):
        return []
    if kind in ("runway", "street"):
        tags_of, kind_tag = (
            (runway_tags, RUNWAYS) if kind == "runway" else (street_snap_tags, STREET_SNAPS)
        )
        if action == "retrieve":
            return tags_of(data)
        return [kind_tag, *_each(data.get("results") or [], tags_of)]
    if kind == "brand":
        if action == "retrieve":
            return [*brand_tags(data), RUNWAYS, *_each(data.get("runways") or [], runway_tags)]
        return [BRANDS, RUNWAYS, *_each(data.get("results") or [], brand_tags)]
    if kind == "index":
        return [
            RUNWAYS,
            STREET_SNAPS,
            BRANDS,
            *_each(data.get("latest_runways") or [], runway_tags),
            *_each(data.get("latest_street_snaps") or [], street_snap_tags),
            *_each(data.get("featured_brands") or [], brand_tags),
        ]
    if kind == "similar":
        # Images of other albums of either kind: which are public decides the list.
        shown = [
            _RECORD[result["kind"]].format(result["record_id"])
            for result in data.get("results") or []
            if result.get("kind") in _RECORD
        ]
        return [RUNWAYS, STREET_SNAPS, *shown]
    return []


def header_value(tags: Iterable[str]) -> str:
    """The tags once each, in the order first named."""
    return " ".join(dict.fromkeys(tags))
