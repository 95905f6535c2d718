"""Steps 5 and 6 of an ingest job: flag near-duplicates through the indexed band lookup, then,
in one transaction, write the record, its images, cover and image_count, and finish the job. A
unique violation there means another job won the race: the pipeline ends the job as skipped,
never failed.
"""

import copy
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from catalog import selectors, services
from catalog.storage import stored_objects_hold
from ingest import planning
from ingest.downloads import StoredImage
from ingest.errors import JobRetry
from ingest.hashing import AnalysedImage, band_probes, hamming
from ingest.kinds import Kind
from ingest.models import IngestJob
from ingest.planning import Plan
from ingest.report import Report, sent_image_name
from ingest.services import Claim, ingest_job_finish, ingest_job_lock_claimed

Status = IngestJob.Status


class LostRace(Exception):
    """Another job wrote this album between our lookup and our insert."""

    def __init__(self, plan: Plan) -> None:
        super().__init__("lost the race for this album")
        self.plan = plan


def write_album(
    claim: Claim,
    kind: Kind,
    album: dict[str, Any],
    stored: list[StoredImage],
    report: Report,
    downloaded: dict[str, dict[str, Any]],
) -> str:
    # Near-duplicate notes go to a copy: if the transaction rolls back (a lost race), the job's
    # report must not count flags that were never written.
    final_report = copy.deepcopy(report)
    with transaction.atomic():
        ingest_job_lock_claimed(claim=claim)
        # Decide again: another job may have written this album while we downloaded.
        plan = planning.plan_album(kind, album, claim.payload_checksum)
        # Until this transaction ends, gc_media cannot delete the objects our rows will point
        # at; one already gone (a job that ran longer than the GC's grace) must be stored again.
        missing = stored_objects_hold(keys=[item.image.storage_key for item in stored])
        if missing:
            for url, entry in list(downloaded.items()):
                if entry["storage_key"] in missing:
                    del downloaded[url]  # to be downloaded and stored again
            raise JobRetry(
                "storage_error",
                f"{len(missing)} stored image(s) were deleted by gc_media before this job wrote "
                f"its rows (first {missing[0]}); they must be stored again",
            )
        new_images = _new_images(kind, stored, plan, final_report)
        try:
            record = kind.write(
                record=plan.record,
                brand=plan.brand,
                album=album,
                images=new_images,
                ingest_job_id=claim.job_id,
                content_checksum=claim.payload_checksum,
            )
        except IntegrityError as exc:
            if not _is_record_key_violation(exc):
                raise
            raise LostRace(plan) from exc
        except services.RecordStateError as exc:
            # The rejected record changed state between our lookup and our lock.
            raise LostRace(plan) from exc
        ingest_job_finish(
            claim=claim, status=Status.SUCCEEDED, report=final_report.as_dict(), record=record
        )
    return Status.SUCCEEDED


def _new_images(
    kind: Kind, stored: list[StoredImage], plan: Plan, report: Report
) -> list[services.NewImage]:
    max_distance = settings.INGEST_DUPLICATE_MAX_DISTANCE
    position_by_index: dict[int, int] = {}
    for position, item in enumerate(stored):
        position_by_index[item.index] = position
        for repeat in item.repeats:
            position_by_index[repeat] = position

    new_images = []
    for position, item in enumerate(stored):
        analysed = item.image.analysed
        dup = _nearest(kind, analysed, stored[:position], plan, max_distance)
        dup_of_id = dup_of_position = None
        if dup is not None:
            distance, existing_id, earlier = dup
            if existing_id is not None:
                dup_of_id = existing_id
                what = f"{kind.image_label} {existing_id}"
            else:
                dup_of_position = earlier
                what = f"{sent_image_name(stored[earlier].index)} of this album"
            report.image_duplicate(
                index=item.index,
                url=item.url,
                reason=f"near-duplicate of {what} (distance {distance})",
            )
        new_images.append(
            services.NewImage(
                storage_key=item.image.storage_key,
                sha1=analysed.sha1,
                width=analysed.width,
                height=analysed.height,
                byte_size=analysed.byte_size,
                mime_type=analysed.mime_type,
                original_url=item.url,
                sort_order=item.index,
                phash=analysed.phash_signed,
                phash_algorithm=analysed.phash_algorithm,
                dup_of_id=dup_of_id,
                dup_of_position=dup_of_position,
                look_index=item.album_image.get("look_index", 0),
                parent_position=None,
            )
        )
    if kind.image_model.has_details:
        new_images = _attach_details(stored, new_images, position_by_index, report)
    return new_images


def _nearest(
    kind: Kind,
    analysed: AnalysedImage,
    earlier: list[StoredImage],
    plan: Plan,
    max_distance: int,
) -> tuple[int, int | None, int] | None:
    """The closest image within ``max_distance``: (distance, existing id or None, position).

    Existing images come from the indexed band lookup (the record being reopened excluded: its
    old images are about to be soft-deleted). Earlier images of this album are compared in
    memory. Ties go to the existing image, then the lowest id or position.
    """
    best: tuple[int, int, int] | None = None
    best_existing: int | None = None
    candidates = selectors.image_near_duplicate_candidates(
        image_model=kind.image_model,
        probes=band_probes(analysed.phash, max_distance),
        # Hashes of another algorithm are not comparable bit for bit: the query leaves them out.
        phash_algorithm=analysed.phash_algorithm,
        exclude_record_id=plan.record.pk if plan.record is not None else None,
        # Not the pictures an editor said this one is not a duplicate of.
        sha1=analysed.sha1,
        phash=analysed.phash,
        max_distance=max_distance,
    )
    for image_id, phash in candidates:
        distance = hamming(phash, analysed.phash)
        if distance <= max_distance and (best is None or (distance, 0, image_id) < best):
            best, best_existing = (distance, 0, image_id), image_id
    for position, item in enumerate(earlier):
        distance = hamming(item.image.analysed.phash, analysed.phash)
        if distance <= max_distance and (best is None or (distance, 1, position) < best):
            best, best_existing = (distance, 1, position), None
    if best is None:
        return None
    return best[0], best_existing, best[2]


def _attach_details(
    stored: list[StoredImage],
    new_images: list[services.NewImage],
    position_by_index: dict[int, int],
    report: Report,
) -> list[services.NewImage]:
    """Point each stored detail at the stored image of its parent.

    The album's parent index may name an image that was refused (the detail becomes a main
    image: no parent to hang it on), or bytes stored under another index (a repeat: the first
    copy is the parent). A parent that ended up a detail itself is refused the same way: never
    a detail of a detail.
    """
    wanted = {
        position: position_by_index.get(item.album_image["parent"])
        for position, item in enumerate(stored)
        if item.album_image.get("is_detail")
    }
    attached = []
    for position, image in enumerate(new_images):
        item = stored[position]
        if position not in wanted:
            attached.append(image)
            continue
        parent = wanted[position]
        parent_is_main = parent is not None and parent != position and parent not in wanted
        if not parent_is_main:
            report.issue(
                index=item.index,
                url=item.url,
                reason="stored as a main image: its parent "
                f"({sent_image_name(item.album_image['parent'])}) was not stored as a main image",
            )
            attached.append(image)
            continue
        attached.append(replace(image, parent_position=parent))
    return attached


def _is_record_key_violation(exc: IntegrityError) -> bool:
    """Whether ``exc`` is the entity or source key of a record (a lost race), not a bug."""
    diag = getattr(exc.__cause__, "diag", None)
    constraint = getattr(diag, "constraint_name", None)
    if constraint:
        return constraint.endswith(("_entity_key_live", "_source_key"))
    # SQLite names the columns, not the constraint; its record tables have no other unique
    # constraint, and image tables none at all.
    return "UNIQUE constraint failed" in str(exc)
