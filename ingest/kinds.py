"""The two kinds of album a crawler sends, runway and street snap, as ingest handles them: how
each is named in a job's report, looked up, given a brand, and written to the catalog
(catalog.services' create and reopen, with the kind's content type).

What the catalog knows of a kind (its word, its image model, its entity key) its model says
(catalog.models); what differs in an album's payload, its serializer (ingest.serializers). This
module is ingest's registry of the rest: `KINDS`, by the kind's word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, cast

from catalog import selectors, services
from catalog.models import Brand, Runway, RunwayImage, StreetSnap, StreetSnapImage
from ingest.errors import JobEnd
from ingest.models import IngestJob
from ingest.serializers import instant

Status = IngestJob.Status
type Record = Runway | StreetSnap

# What a content type holds besides the album's own fields: set by the job, not sent.
_NOT_SENT = frozenset({"brand", "ingest_job_id", "content_checksum", "go_live_at"})


@dataclass(frozen=True)
class Kind:
    record_model: type[Runway] | type[StreetSnap]
    label: str
    image_label: str
    content_type: type[services.RunwayContent] | type[services.StreetSnapContent]
    entity_key_text: Callable[[dict[str, Any]], str]
    brand: Callable[[dict[str, Any]], Brand | None]
    by_entity_key: Callable[[dict[str, Any], Brand | None], Record | None]

    @property
    def name(self) -> str:
        return self.record_model.kind

    @property
    def image_model(self) -> type[RunwayImage] | type[StreetSnapImage]:
        return self.record_model.image_model()

    def by_source_key(self, album: dict[str, Any]) -> Record | None:
        return selectors.record_by_source_key(
            model=self.record_model, source=album["source"], source_url=album["source_url"]
        )

    def write(
        self,
        *,
        record: Record | None,
        brand: Brand | None,
        album: dict[str, Any],
        images: list[services.NewImage],
        ingest_job_id: int,
        content_checksum: str,
    ) -> Record:
        """Write the album's record with its images: create it (``record`` None) or reopen
        the rejected ``record``; ``brand`` is a runway's resolved brand (None for a street
        snap)."""
        sent = {f.name for f in fields(self.content_type)} - _NOT_SENT
        values: dict[str, Any] = {name: album[name] for name in sent}
        if brand is not None:
            values["brand"] = brand
        content = self.content_type(
            **values,
            ingest_job_id=ingest_job_id,
            content_checksum=content_checksum,
            go_live_at=instant(album.get("embargo_until")),
        )
        if record is None:
            return services.record_create(model=self.record_model, content=content, images=images)
        return services.record_reopen(record=record, content=content, images=images)


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


_RUNWAY = Kind(
    record_model=Runway,
    label="runway",
    image_label="runway image",
    content_type=services.RunwayContent,
    entity_key_text=lambda a: (
        f"brand {a['brand']!r}, season code {a['season_code']}, {a['collection_type']}"
    ),
    brand=_runway_brand,
    by_entity_key=lambda a, brand: selectors.runway_by_entity_key(
        brand=cast(Brand, brand),  # resolved: _runway_brand refuses an unknown brand
        season_code=a["season_code"],
        collection_type=a["collection_type"],
    ),
)
_STREET = Kind(
    record_model=StreetSnap,
    label="street snap",
    image_label="street image",
    content_type=services.StreetSnapContent,
    entity_key_text=lambda a: f"{a['city']}, {a['year']}-{a['month']:02d}, {a['title']!r}",
    brand=lambda a: None,
    by_entity_key=lambda a, brand: selectors.street_snap_by_entity_key(
        city=a["city"], year=a["year"], month=a["month"], title=a["title"]
    ),
)
# By the kind's word (IngestJob.kind, the payload's "kind").
KINDS: dict[str, Kind] = {kind.name: kind for kind in (_RUNWAY, _STREET)}
