"""How an album's images are grouped on its public detail page. Pure: no Django import, so
property tests can hammer it (tests/publicapi/test_grouping.py).

Both functions take the album's images in album order (sort_order, then id) and return every
image exactly once, keeping that order inside each group.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


class RunwayImageLike(Protocol):
    look_index: int


class StreetImageLike(Protocol):
    id: int
    parent_id: int | None


@dataclass(frozen=True)
class Look[I: RunwayImageLike]:
    look_index: int
    images: list[I] = field(default_factory=list)


@dataclass(frozen=True)
class Group[I: StreetImageLike]:
    main: I
    details: list[I] = field(default_factory=list)


def group_looks[I: RunwayImageLike](images: Sequence[I]) -> list[Look[I]]:
    """Looks in look_index order; a look's images (the look and its detail shots, which share
    its index) in album order."""
    looks: dict[int, list[I]] = {}
    for image in images:
        looks.setdefault(image.look_index, []).append(image)
    return [Look(look_index=index, images=looks[index]) for index in sorted(looks)]


def group_details[I: StreetImageLike](images: Sequence[I]) -> list[Group[I]]:
    """Main images in album order, each with its details in album order.

    A detail stays under its parent only while the parent is a main image of this list; any
    other image stands as a main of its own. The public view already turns a detail whose
    parent is gone into a main image, so this is the same rule applied once more: it keeps
    every image on the page even if handed something the view would not produce.
    """
    main_ids = {image.id for image in images if image.parent_id is None}
    details: dict[int, list[I]] = {}
    mains: list[I] = []
    for image in images:
        if image.parent_id is not None and image.parent_id in main_ids:
            details.setdefault(image.parent_id, []).append(image)
        else:
            mains.append(image)
    return [Group(main=main, details=details.get(main.id, [])) for main in mains]
