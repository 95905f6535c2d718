"""Albums with images laid out for the catalog services' tests."""

from catalog.models import Runway, RunwayImage, StreetSnap, StreetSnapImage
from tests.factories import (
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)


def runway_with(n: int) -> tuple[Runway, list[RunwayImage]]:
    runway = RunwayFactory()
    images = [RunwayImageFactory(runway=runway, sort_order=i) for i in range(n)]
    Runway.objects.filter(pk=runway.pk).update(cover=images[0], image_count=n)
    runway.refresh_from_db()
    return runway, images


def snap_with(layout: str) -> tuple[StreetSnap, list[StreetSnapImage]]:
    """`layout` like "MdMdd": M a main image, d a detail of the main before it."""
    snap = StreetSnapFactory()
    images: list[StreetSnapImage] = []
    main = None
    for i, kind in enumerate(layout):
        image = StreetSnapImageFactory(
            street_snap=snap, sort_order=i, parent=main if kind == "d" else None
        )
        if kind == "M":
            main = image
        images.append(image)
    StreetSnap.objects.filter(pk=snap.pk).update(cover=images[0], image_count=len(images))
    snap.refresh_from_db()
    return snap, images


def album(layout: str, status: str):
    """A runway of two images (`layout` "runway") or a street album of `layout`, in `status`."""
    record, images = runway_with(2) if layout == "runway" else snap_with(layout)
    type(record).objects.filter(pk=record.pk).update(status=status)
    record.refresh_from_db()
    return record, images
