"""Steps 2 and 3 of an ingest job: find the record an album concerns, by source key then entity
key, and decide: create, reopen a rejected record whose content changed, or skip (nothing is
downloaded for a skip). A runway's brand is resolved on the way (unknown: failed, not retried).
The job decides twice: before downloading, and again in its final transaction.
"""

from dataclasses import dataclass
from typing import Any

from catalog.models import Brand
from catalog.models import Record as RecordBase
from ingest.errors import JobEnd
from ingest.kinds import Kind, Record
from ingest.models import IngestJob

Status = IngestJob.Status
RecordStatus = RecordBase.Status


@dataclass(frozen=True)
class Plan:
    record: Record | None  # None: create; else the rejected record to reopen
    brand: Brand | None  # runways only


def plan_album(kind: Kind, album: dict[str, Any], checksum: str) -> Plan:
    brand = None
    record = kind.by_source_key(album)
    found_by_source_key = record is not None
    if not found_by_source_key:
        brand = kind.brand(album)
        record = kind.by_entity_key(album, brand)
    if record is None:
        return Plan(record=None, brand=brand)
    # Only the source key finds deleted rows (the entity key is unique among live ones).
    if record.deleted_at is not None:
        raise JobEnd(Status.SKIPPED, "deleted", record=record)
    if record.status == RecordStatus.PENDING:
        raise JobEnd(Status.SKIPPED, "exists_pending", record=record)
    if record.status == RecordStatus.PUBLISHED:
        raise JobEnd(Status.SKIPPED, "exists_published", record=record)
    if record.content_checksum == checksum:
        # Rejected, and nothing new since: do not put the same album in front of editors.
        raise JobEnd(Status.SKIPPED, "rejected_unchanged", record=record)
    if not found_by_source_key:
        return Plan(record=record, brand=brand)  # it holds the entity key itself
    brand = kind.brand(album)
    # Found by its source key, the rejected record is reopened with the album's entity key,
    # which the crawler may have corrected meanwhile (another season code, say). If a different
    # live record holds that key, the reopen could only break the entity-key constraint, on
    # every retry: that is no race, and the job says what it is.
    holder = kind.by_entity_key(album, brand)
    if holder is not None and holder.pk != record.pk:
        raise JobEnd(
            Status.SKIPPED,
            "entity_key_taken",
            f"{kind.label.capitalize()} {holder.pk} ({holder.status}) already has this album's "
            f"entity key ({kind.entity_key_text(album)}), so rejected {kind.label} "
            f"{record.pk}, which this source article created, cannot be reopened with it. "
            f"Nothing was written.",
            record=holder,
        )
    return Plan(record=record, brand=brand)
