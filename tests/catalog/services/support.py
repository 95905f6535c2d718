"""Albums for the catalog services' tests, built by the album factories (tests.factories)."""

from tests.factories import RunwayFactory, StreetSnapFactory, images_of


def album(layout: str, status: str):
    """A runway of two images (`layout` "runway") or a street album of `layout` ("MdM": main,
    detail, main), in `status`; the album and its images."""
    if layout == "runway":
        record = RunwayFactory(images=2, status=status)
    else:
        record = StreetSnapFactory(images=layout, status=status)
    return record, images_of(record)
