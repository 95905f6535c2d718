"""The content of an album, as the dedup rules see it (pure: no Django import).

``content_checksum`` is sha256 over a canonical JSON of the fields an editor reviews and the
image URLs in order. Two crawls of one article with the same content give the same checksum
whatever the key order or whitespace of the JSON they sent; any change to a content field, an
image URL or the image structure (looks, details) changes it. The source fields are not
content: they say where the album came from, not what it is.
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any

CONTENT_FIELDS = {
    "runway": ("brand", "season_code", "season", "collection_type", "year", "title", "description"),
    "street": ("city", "year", "month", "title", "description"),
}
IMAGE_FIELDS = {
    "runway": ("url", "look_index"),
    "street": ("url", "is_detail", "parent"),
}


def content_of(album: Mapping[str, Any]) -> dict[str, Any]:
    """The content fields and images of a validated album, nothing else."""
    kind = album["kind"]
    content: dict[str, Any] = {"kind": kind}
    for name in CONTENT_FIELDS[kind]:
        content[name] = album[name]
    content["images"] = [
        {name: image[name] for name in IMAGE_FIELDS[kind]} for image in album["images"]
    ]
    # Only when sent: an album without one keeps the checksum it always had. Validated, it is
    # one text per moment (ingest.serializers.InstantField).
    if album.get("embargo_until") is not None:
        content["embargo_until"] = album["embargo_until"]
    return content


def canonical_json(value: Any) -> str:
    # Sorted keys and no insignificant whitespace: one text per value. ensure_ascii=False keeps
    # non-ASCII as UTF-8 so "é" and "\u00e9" in the crawler's JSON hash alike.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_checksum(album: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(content_of(album)).encode()).hexdigest()
