"""The content of an album, as the dedup rules see it (pure: no Django import).

``content_checksum`` is sha256 over a canonical JSON of the fields an editor reviews and the
image URLs in order. Two crawls of one article with the same content give the same checksum
whatever the key order or whitespace of the JSON they sent; any change to a content field, an
image URL or the image structure (looks, details) changes it. The source fields are not
content: they say where the album came from, not what it is.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any


def content_of(
    album: Mapping[str, Any], *, fields: Sequence[str], image_fields: Sequence[str]
) -> dict[str, Any]:
    """The content fields (``fields``) and images (``image_fields`` of each) of a validated
    album, nothing else. Each kind's lists are its serializers' (ingest.serializers)."""
    content: dict[str, Any] = {"kind": album["kind"]}
    for name in fields:
        content[name] = album[name]
    content["images"] = [{name: image[name] for name in image_fields} for image in album["images"]]
    # Only when sent: an album without one keeps the checksum it always had. Validated, it is
    # one text per moment (ingest.serializers.InstantField).
    if album.get("embargo_until") is not None:
        content["embargo_until"] = album["embargo_until"]
    return content


def canonical_json(value: Any) -> str:
    # Sorted keys and no insignificant whitespace: one text per value. ensure_ascii=False keeps
    # non-ASCII as UTF-8 so "é" and "\u00e9" in the crawler's JSON hash alike.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_checksum(
    album: Mapping[str, Any], *, fields: Sequence[str], image_fields: Sequence[str]
) -> str:
    content = content_of(album, fields=fields, image_fields=image_fields)
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()
