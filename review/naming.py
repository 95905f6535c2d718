"""How editors name an image: the same words in the grid, the compare view, the admin's
messages and the history. (The ingest job's report names what the crawler sent as its JSON
does, `images[2]`, counted from 0: image 3 here; ingest.report.sent_image_name.)"""

from __future__ import annotations

from catalog.models import RecordImage


def image_number(image: RecordImage) -> int:
    """An image's number in its album, the same in the grid and the compare view: its place in
    the list the crawler sent, counted from 1 (sort_order never changes once the image is
    stored, so neither does the number)."""
    return image.sort_order + 1


def image_name(image: RecordImage) -> str:
    return f"image {image_number(image)} (id {image.pk})"
