"""How editors name an image: the same words in the grid, the compare view, the admin's
messages and the history (and in the ingest job's report, which counts the same way)."""

from __future__ import annotations

from catalog.models import RecordImage


def image_number(image: RecordImage) -> int:
    """An image's number in its album, the same in the ingest job's report, the grid and the
    compare view: its place in the list the crawler sent, counted from 1 (sort_order never
    changes once the image is stored, so neither does the number)."""
    return image.sort_order + 1


def image_name(image: RecordImage) -> str:
    return f"image {image_number(image)} (id {image.pk})"
