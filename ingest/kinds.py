"""The two kinds of album a crawler sends, runway and street snap: how each is named, looked up,
given a brand, and written to the catalog (catalog.services' create and reopen, with the
kind's content type)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

from catalog import selectors, services
from catalog.models import Brand, Runway, RunwayImage, StreetSnap, StreetSnapImage
from ingest.errors import JobEnd
from ingest.models import IngestJob
from ingest.serializers import instant

Status = IngestJob.Status
type Record = Runway | StreetSnap


class Write(Protocol):
    """Write an album's record with its images: create it (``record`` None) or reopen the
    rejected ``record``; ``brand`` is the runway's resolved brand (None for a street snap)."""

    def __call__(
        self,
        *,
        record: Record | None,
        brand: Brand | None,
        album: dict[str, Any],
        images: list[services.NewImage],
        ingest_job_id: int,
        content_checksum: str,
    ) -> Record: ...


@dataclass(frozen=True)
class Kind:
    name: str
    label: str
    image_model: type[RunwayImage] | type[StreetSnapImage]
    image_label: str
    entity_key_text: Callable[[dict[str, Any]], str]
    by_source_key: Callable[[dict[str, Any]], Record | None]
    brand: Callable[[dict[str, Any]], Brand | None]
    by_entity_key: Callable[[dict[str, Any], Brand | None], Record | None]
    write: Write


def _write_runway(
    *,
    record: Record | None,
    brand: Brand | None,
    album: dict[str, Any],
    images: list[services.NewImage],
    ingest_job_id: int,
    content_checksum: str,
) -> Runway:
    # A runway's: its brand was resolved (_runway_brand) and its record is a runway.
    content = services.RunwayContent(
        brand=cast(Brand, brand),
        season_code=album["season_code"],
        season=album["season"],
        year=album["year"],
        collection_type=album["collection_type"],
        title=album["title"],
        description=album["description"],
        source=album["source"],
        source_url=album["source_url"],
        ingest_job_id=ingest_job_id,
        content_checksum=content_checksum,
        go_live_at=instant(album.get("embargo_until")),
    )
    if record is None:
        return services.runway_create(content=content, images=images)
    return services.runway_reopen(runway=cast(Runway, record), content=content, images=images)


def _write_street_snap(
    *,
    record: Record | None,
    brand: Brand | None,
    album: dict[str, Any],
    images: list[services.NewImage],
    ingest_job_id: int,
    content_checksum: str,
) -> StreetSnap:
    content = services.StreetSnapContent(
        city=album["city"],
        year=album["year"],
        month=album["month"],
        title=album["title"],
        description=album["description"],
        source=album["source"],
        source_url=album["source_url"],
        ingest_job_id=ingest_job_id,
        content_checksum=content_checksum,
        go_live_at=instant(album.get("embargo_until")),
    )
    if record is None:
        return services.street_snap_create(content=content, images=images)
    street_snap = cast(StreetSnap, record)  # a street album's
    return services.street_snap_reopen(street_snap=street_snap, content=content, images=images)


def _runway_brand(album: dict[str, Any]) -> Brand:
    brand = selectors.brand_resolve(name=album["brand"])
    if brand is None:
        raise JobEnd(
            Status.FAILED,
            "unknown_brand",
            f"Unknown brand {album['brand']!r}: no brand has this slug or alias. Add the brand "
            "or an alias in the admin, then retry the job.",
        )
    return brand


KINDS: dict[str, Kind] = {
    IngestJob.Kind.RUNWAY: Kind(
        name=IngestJob.Kind.RUNWAY,
        label="runway",
        image_model=RunwayImage,
        image_label="runway image",
        entity_key_text=lambda a: (
            f"brand {a['brand']!r}, season code {a['season_code']}, {a['collection_type']}"
        ),
        by_source_key=lambda a: selectors.runway_by_source_key(
            source=a["source"], source_url=a["source_url"]
        ),
        brand=_runway_brand,
        by_entity_key=lambda a, brand: selectors.runway_by_entity_key(
            brand=cast(Brand, brand),  # resolved: _runway_brand refuses an unknown brand
            season_code=a["season_code"],
            collection_type=a["collection_type"],
        ),
        write=_write_runway,
    ),
    IngestJob.Kind.STREET: Kind(
        name=IngestJob.Kind.STREET,
        label="street snap",
        image_model=StreetSnapImage,
        image_label="street image",
        entity_key_text=lambda a: f"{a['city']}, {a['year']}-{a['month']:02d}, {a['title']!r}",
        by_source_key=lambda a: selectors.street_snap_by_source_key(
            source=a["source"], source_url=a["source_url"]
        ),
        brand=lambda a: None,
        by_entity_key=lambda a, brand: selectors.street_snap_by_entity_key(
            city=a["city"], year=a["year"], month=a["month"], title=a["title"]
        ),
        write=_write_street_snap,
    ),
}
