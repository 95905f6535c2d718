"""The steps of one ingest job (docs/crawlers.md, "What the worker does"):

1. claim the job under a row lock (a finished job is a no-op);
2. find the record it concerns, by source key then entity key, and decide: create, reopen a
   rejected record whose content changed, or skip (nothing is downloaded for a skip);
3. resolve a runway's brand by slug or alias (unknown: failed, not retried);
4. download the images concurrently through the SSRF-safe fetcher, check and hash each, and
   store it under its content-addressed key;
5. flag near-duplicates through the indexed band lookup;
6. in one transaction, write the record, its images, cover and image_count, and finish the
   job; a unique violation there means another job won the race: skipped, never failed;
7. the report: counts that add up and a capped list of per-image issues.

Errors are sorted by whether trying again can help, and by what they concern. A transient
error of one image (a timeout, a 5xx) is retried inside the job, a few times with a short
backoff within the download budget; then that image is an issue and the job goes on with the
survivors, on its first attempt. Job-level transient errors (storage, database connection,
rq's job timeout, or every image of the album failing transiently: the site is down) release
the job and raise, so rq retries it with backoff; the images the attempt stored are kept on the
job row and not downloaded again. On the last attempt they end the job instead, with a report
of what was received, stored and refused. Permanent ones never raise to rq.
"""

import copy
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connections,
    transaction,
)
from rq.timeouts import BaseTimeoutException

from catalog import selectors, services
from catalog.models import Brand, Runway, RunwayImage, StreetSnap, StreetSnapImage
from catalog.models import Record as RecordBase
from catalog.storage import image_store, stored_objects_hold, stored_objects_renew
from ingest import joblog
from ingest.errors import JobEnd, LostRace, Transient, short
from ingest.fetching import FetchError, FetchPolicy, fetch
from ingest.hashing import (
    PHASH_ALGORITHM,
    AnalysedImage,
    ImageRefused,
    analyse_image,
    band_probes,
    hamming,
)
from ingest.memory import decode_budget
from ingest.models import IngestJob
from ingest.report import Report, image_name
from ingest.services import (
    Claim,
    Superseded,
    ingest_job_claim,
    ingest_job_finish,
    ingest_job_lock_claimed,
    ingest_job_release,
)

logger = logging.getLogger(__name__)

Status = IngestJob.Status
RecordStatus = RecordBase.Status
type Record = Runway | StreetSnap


# --- Entry point -----------------------------------------------------------------------------


def run_job(job_id: int, *, final_attempt: bool) -> str:
    """Run one job; returns what happened (for rq's result and logs).

    ``final_attempt`` says whether a transient error ends the job (True) or hands it back for
    a retry (False): the rq task knows from rq's retry budget, the in-process runner has no
    scheduler and always passes True.
    """
    claim = ingest_job_claim(job_id=job_id)
    if claim is None:
        return "nothing to do"
    report = Report(
        max_issues=settings.INGEST_REPORT_MAX_ISSUES,
        album_images=len(claim.payload.get("images", [])),
    )
    # What this attempt stored, by URL: handed back with the job for the next attempt.
    downloaded: dict[str, dict[str, Any]] = dict(claim.downloaded)
    try:
        return _run(claim, report, downloaded, final_attempt=final_attempt)
    except Superseded:
        return _superseded(claim)
    except JobEnd as end:
        return _end(claim, end, report)
    except (Transient, BaseTimeoutException) as exc:
        # rq's job timeout (INGEST_JOB_TIMEOUT) is raised in this thread wherever the job is; it
        # is an ordinary Exception, and no bug: a site too slow for one attempt. Retried like
        # any transient error (the download budget normally ends a job well before it).
        transient = exc if isinstance(exc, Transient) else _timed_out(exc)
        if final_attempt:
            return _end(claim, JobEnd(Status.FAILED, transient.reason, transient.error), report)
        try:
            _hand_back(claim, transient.error, downloaded)
        except Superseded:
            return _superseded(claim)  # another execution decides, and retries if need be
        except DatabaseError:
            # The database is still unreachable. rq still retries on the original error; the
            # row stays running and the retry's claim takes it over.
            logger.warning("ingest job %s: could not hand the job back", job_id, exc_info=True)
        raise
    except (OperationalError, InterfaceError) as exc:
        # The database went away (or deadlocked): retry like any transient error. Recording
        # that may fail too; then the row stays running, and the next attempt (rq's retry, or
        # reconcile's reclaim) takes it over.
        error = f"database error: {short(exc, 300)}"
        try:
            if final_attempt:
                _reconnect()
                return _end(claim, JobEnd(Status.FAILED, "database_error", error), report)
            _hand_back(claim, error, downloaded)
        except (DatabaseError, Superseded):
            pass
        raise
    except Exception as exc:
        # A bug, not the input: fail readably on the row (never retry a bug on a loop) and log
        # the traceback for us.
        logger.exception("ingest job %s failed unexpectedly", job_id)
        error = f"internal error: {type(exc).__name__}: {short(exc, 300)}"
        return _end(claim, JobEnd(Status.FAILED, "internal_error", error), report)


def _hand_back(claim: Claim, error: str, downloaded: dict[str, dict[str, Any]]) -> None:
    """Release the job for rq's retry, on a fresh connection if the error broke this one.

    A job left running because its hand-back failed looks, to the next claim, like one whose
    worker died; a dropped connection (a database restart, pg_terminate_backend) is usually
    followed at once by a working one, so one reconnect avoids that.
    """
    try:
        ingest_job_release(claim=claim, error=error, downloaded=downloaded)
    except (OperationalError, InterfaceError):
        _reconnect()
        ingest_job_release(claim=claim, error=error, downloaded=downloaded)


def _reconnect() -> None:
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.in_atomic_block:
        return  # a test's transaction: the connection is not ours to replace
    connection.close()


def _timed_out(exc: BaseTimeoutException) -> Transient:
    return Transient(
        "job_timeout",
        f"rq job timeout: {short(exc, 300)} (INGEST_JOB_TIMEOUT is {settings.INGEST_JOB_TIMEOUT}s)",
    )


def _end(claim: Claim, end: JobEnd, report: Report) -> str:
    try:
        _finish(claim, end, report)
    except Superseded:
        return _superseded(claim)
    return end.status


def _superseded(claim: Claim) -> str:
    # Reclaimed (stale) or claimed again while this execution ran: whatever it did was rolled
    # back or never written, and the owner of the job finishes it.
    logger.warning("ingest job %s attempt %s was superseded", claim.job_id, claim.attempt)
    return "superseded"


def _finish(claim: Claim, end: JobEnd, report: Report) -> None:
    record = end.record
    ingest_job_finish(
        claim=claim,
        status=end.status,
        reason=end.reason,
        error=end.error,
        report=report.as_dict(),
        runway=record if isinstance(record, Runway) else None,
        street_snap=record if isinstance(record, StreetSnap) else None,
    )


def _run(
    claim: Claim,
    report: Report,
    downloaded: dict[str, dict[str, Any]],
    *,
    final_attempt: bool,
) -> str:
    album = claim.payload
    kind = KINDS[claim.kind]
    # Steps 2 and 3: skips and unknown brands end here, before anything is downloaded.
    _plan(kind, album, claim.payload_checksum)

    # Step 4. Images an earlier attempt stored are not downloaded again.
    urls = [image["url"] for image in album["images"]]
    earlier = _earlier_downloads(downloaded)
    fresh = [url for url in dict.fromkeys(urls) if url not in earlier]
    with joblog.phase("download"):
        fetched = _download_all(fresh)
    by_url: dict[str, Outcome] = {**earlier, **dict(zip(fresh, fetched, strict=True))}
    outcomes = [by_url[url] for url in urls]
    downloaded.clear()
    downloaded.update(
        {url: _as_progress(o) for url, o in by_url.items() if isinstance(o, Downloaded)}
    )
    # The report counts what this attempt got, even if a storage error ends the job below.
    stored = _classify(album, outcomes, report)
    storage_failures = [o for o in outcomes if isinstance(o, StorageFailure)]
    if storage_failures:
        raise Transient("storage_error", f"storage error: {storage_failures[0].error}")
    transient = [o for o in outcomes if isinstance(o, Refusal) and o.transient]
    if not stored and transient and not final_attempt:
        # Not one image came through, some of them transiently: the site is down, not its
        # images, and a retry of the whole job in a while is what can help.
        first = album["images"][outcomes.index(transient[0])]["url"]
        raise Transient(
            "transient_error",
            f"all {len(outcomes)} images failed, {len(transient)} transiently, first {first}: "
            f"{transient[0].reason}",
        )
    if not stored:
        raise JobEnd(
            Status.FAILED,
            "no_images",
            f"None of the {len(outcomes)} images could be stored; see the report's issues.",
        )

    # Steps 5 and 6.
    try:
        with joblog.phase("write"):
            return _write(claim, kind, album, stored, report, downloaded)
    except LostRace as lost:
        winner = _race_winner(kind, album, lost.plan)
        raise JobEnd(Status.SKIPPED, "lost_race", record=winner) from None


def _race_winner(kind: "Kind", album: dict[str, Any], plan: "Plan") -> Record | None:
    """The record that took what this job was about to write (looked up after the rollback)."""
    by_source = kind.by_source_key(album)
    by_entity = kind.by_entity_key(album, plan.brand)
    if plan.record is not None:
        # Reopening: the source key is our own row's. Another live record took the album's
        # entity key since we planned, or else our row itself changed state meanwhile.
        if by_entity is not None and by_entity.pk != plan.record.pk:
            return by_entity
        return by_source
    # Creating: the winner holds the source key, or (another article of the same album) the
    # entity key.
    return by_source or by_entity


# --- Steps 2 and 3: find the record, decide ----------------------------------------------------


@dataclass(frozen=True)
class Plan:
    record: Record | None  # None: create; else the rejected record to reopen
    brand: Brand | None  # runways only


def _plan(kind: "Kind", album: dict[str, Any], checksum: str) -> Plan:
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


# --- Step 4: download, check, hash, store ------------------------------------------------------


@dataclass(frozen=True)
class Downloaded:
    analysed: AnalysedImage
    storage_key: str


@dataclass(frozen=True)
class Refusal:
    reason: str
    transient: bool


@dataclass(frozen=True)
class StorageFailure:
    error: str


type Outcome = Downloaded | Refusal | StorageFailure


def _as_progress(downloaded: Downloaded) -> dict[str, Any]:
    return {"storage_key": downloaded.storage_key, **dataclasses.asdict(downloaded.analysed)}


def _earlier_downloads(progress: dict[str, dict[str, Any]]) -> dict[str, Outcome]:
    """The images an earlier attempt stored whose objects are still there (renewed for the GC).

    An entry of another hash algorithm, or one this code no longer reads, is downloaded again.
    """
    analysed: dict[str, tuple[str, AnalysedImage]] = {}
    for url, entry in progress.items():
        fields = {k: v for k, v in entry.items() if k != "storage_key"}
        if fields.get("phash_algorithm") != PHASH_ALGORITHM:
            continue
        try:
            analysed[url] = (entry["storage_key"], AnalysedImage(**fields))
        except (KeyError, TypeError):
            continue
    present = stored_objects_renew(keys=[key for key, _ in analysed.values()])
    return {
        url: Downloaded(analysed=image, storage_key=key)
        for url, (key, image) in analysed.items()
        if key in present
    }


def fetch_policy() -> FetchPolicy:
    return FetchPolicy(
        allowed_hosts=frozenset(h.strip().lower() for h in settings.INGEST_FETCH_ALLOWED_HOSTS),
        connect_timeout=settings.INGEST_CONNECT_TIMEOUT,
        read_timeout=settings.INGEST_READ_TIMEOUT,
        total_deadline=settings.INGEST_IMAGE_DEADLINE,
        max_bytes=settings.INGEST_MAX_IMAGE_BYTES,
        max_redirects=settings.INGEST_MAX_REDIRECTS,
    )


@dataclass(frozen=True)
class DownloadBudget:
    """INGEST_DOWNLOAD_BUDGET seconds for all of a job's downloads, from their start.

    rq kills a job at INGEST_JOB_TIMEOUT wherever it is; left to per-image deadlines alone, a
    slow site could make 500 images take 500 / 8 workers x 30 s = 1875 s. Within the budget,
    the job always reaches its decision: what the budget leaves undone is a transient refusal.
    """

    seconds: float
    ends_at: float  # time.monotonic()

    @classmethod
    def start(cls, seconds: float) -> "DownloadBudget":
        return cls(seconds=seconds, ends_at=time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.ends_at - time.monotonic()

    @property
    def reason(self) -> str:
        return f"the job's download budget of {self.seconds:g}s ran out"


@dataclass(frozen=True)
class ImageRetry:
    """How often a transient failure of one image is tried again inside the job."""

    tries: int  # in all, the first included
    backoff: float  # seconds before the second try, doubled before each further one

    @classmethod
    def from_settings(cls) -> "ImageRetry":
        return cls(
            tries=max(1, settings.INGEST_IMAGE_TRIES),
            backoff=max(0.0, settings.INGEST_IMAGE_RETRY_BACKOFF),
        )


def _download_all(urls: list[str]) -> list[Outcome]:
    """One outcome per URL, in order. Each distinct URL is fetched once; at most
    INGEST_DOWNLOAD_WORKERS at a time, so one album cannot flood a site or the worker; and all
    within the job's download budget.

    The download threads share this thread's database connection (`image_store` records each
    object before putting it), one statement at a time through ``db_lock``: a job opens no
    extra connections, and the rows are written where the job's own are (in a test, inside
    its transaction). This thread only waits meanwhile.
    """
    policy = fetch_policy()
    max_pixels = settings.INGEST_MAX_IMAGE_PIXELS
    budget = DownloadBudget.start(settings.INGEST_DOWNLOAD_BUDGET)
    retry = ImageRetry.from_settings()
    distinct = list(dict.fromkeys(urls))
    workers = max(1, min(settings.INGEST_DOWNLOAD_WORKERS, len(distinct)))
    todo = iter(distinct)
    todo_lock, db_lock, stop = threading.Lock(), threading.Lock(), threading.Event()
    results: dict[str, Outcome] = {}
    connection = connections[DEFAULT_DB_ALIAS]

    def work() -> None:
        connections[DEFAULT_DB_ALIAS] = connection
        while not stop.is_set():
            with todo_lock:
                url = next(todo, None)
            if url is None:
                return
            results[url] = _download_tries(url, policy, max_pixels, budget, db_lock, retry, stop)

    connection.inc_thread_sharing()
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest-fetch") as pool:
            futures = [pool.submit(work) for _ in range(workers)]
            try:
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
                for future in done:
                    future.result()  # the first error, if any
            finally:
                # Whatever interrupted us - an error, or rq's job timeout raised in this
                # thread - the threads finish the image in hand and start no other.
                stop.set()
    finally:
        connection.dec_thread_sharing()
    return [results[url] for url in urls]


def _download_tries(
    url: str,
    policy: FetchPolicy,
    max_pixels: int,
    budget: DownloadBudget,
    db_lock: threading.Lock,
    retry: ImageRetry,
    stop: threading.Event,
) -> Outcome:
    """One image, tried again after a transient failure while tries and the budget last."""
    pause = retry.backoff
    for attempt in range(1, retry.tries + 1):
        outcome = _download_one(url, policy, max_pixels, budget, db_lock)
        if not (isinstance(outcome, Refusal) and outcome.transient):
            return outcome
        if attempt == retry.tries or budget.remaining() <= pause or stop.wait(pause):
            break
        pause *= 2
    if attempt > 1:
        return Refusal(f"{outcome.reason} ({attempt} tries)", transient=True)
    return outcome


def _download_one(
    url: str,
    policy: FetchPolicy,
    max_pixels: int,
    budget: DownloadBudget,
    db_lock: threading.Lock,
) -> Outcome:
    remaining = budget.remaining()
    if remaining <= 0:
        return Refusal(f"not downloaded: {budget.reason}", transient=True)
    capped = remaining < policy.total_deadline
    try:
        # An image started near the end gets what is left of the budget, not its full deadline.
        fetched = fetch(url, policy=replace(policy, total_deadline=remaining) if capped else policy)
    except FetchError as exc:
        if capped and exc.transient and budget.remaining() <= 0:
            return Refusal(f"download cut off: {budget.reason}", transient=True)
        return Refusal(exc.reason, exc.transient)
    try:
        # Only the bytes decide what this is; the Content-Type the server claimed does not.
        analysed = analyse_image(fetched.body, max_pixels=max_pixels, memory=decode_budget())
    except ImageRefused as exc:
        return Refusal(exc.reason, transient=False)
    try:
        key = image_store(
            data=fetched.body, sha1=analysed.sha1, mime_type=analysed.mime_type, db_lock=db_lock
        )
    except DatabaseError:
        raise  # recording the object failed: the job's database error, not the storage's
    except Exception as exc:  # noqa: BLE001 - boto3, OSError, ...: any storage error is retried
        return StorageFailure(f"{type(exc).__name__}: {short(exc, 300)}")
    return Downloaded(analysed=analysed, storage_key=key)


@dataclass
class StoredImage:
    index: int  # in the album
    url: str
    image: Downloaded
    album_image: dict[str, Any]
    repeats: list[int] = field(default_factory=list)  # album indexes with the same bytes


def _classify(album: dict[str, Any], outcomes: list[Outcome], report: Report) -> list[StoredImage]:
    stored: list[StoredImage] = []
    first_by_sha1: dict[str, StoredImage] = {}
    for index, (album_image, outcome) in enumerate(zip(album["images"], outcomes, strict=True)):
        url = album_image["url"]
        if isinstance(outcome, Refusal):
            report.image_refused(index=index, url=url, reason=outcome.reason)
            continue
        if isinstance(outcome, StorageFailure):
            # The job is retried (or fails) on it; its report still says what happened.
            report.image_refused(index=index, url=url, reason=f"storage error: {outcome.error}")
            continue
        first = first_by_sha1.get(outcome.analysed.sha1)
        if first is not None:
            report.image_repeated(index=index, url=url, first_index=first.index)
            first.repeats.append(index)
            continue
        report.image_stored()
        item = StoredImage(index=index, url=url, image=outcome, album_image=album_image)
        first_by_sha1[outcome.analysed.sha1] = item
        stored.append(item)
    return stored


# --- Steps 5 and 6: near-duplicates and the one transaction ------------------------------------


def _write(
    claim: Claim,
    kind: "Kind",
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
        plan = _plan(kind, album, claim.payload_checksum)
        # Until this transaction ends, gc_media cannot delete the objects our rows will point
        # at; one already gone (a job that ran longer than the GC's grace) must be stored again.
        missing = stored_objects_hold(keys=[item.image.storage_key for item in stored])
        if missing:
            for url, entry in list(downloaded.items()):
                if entry["storage_key"] in missing:
                    del downloaded[url]  # to be downloaded and stored again
            raise Transient(
                "storage_error",
                f"{len(missing)} stored image(s) were deleted by gc_media before this job wrote "
                f"its rows (first {missing[0]}); they must be stored again",
            )
        new_images = _new_images(kind, stored, plan, final_report)
        try:
            record = kind.write(plan, album, new_images, claim)
        except IntegrityError as exc:
            if not _is_record_key_violation(exc):
                raise
            raise LostRace(plan) from exc
        except services.RecordStateError as exc:
            # The rejected record changed state between our lookup and our lock.
            raise LostRace(plan) from exc
        _finish(claim, JobEnd(Status.SUCCEEDED, "", record=record), final_report)
    return Status.SUCCEEDED


def _new_images(
    kind: "Kind", stored: list[StoredImage], plan: Plan, report: Report
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
                what = f"{image_name(stored[earlier].index)} of this album"
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
    if kind.name == IngestJob.Kind.STREET:
        new_images = _attach_details(stored, new_images, position_by_index, report)
    return new_images


def _nearest(
    kind: "Kind",
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
                f"({image_name(item.album_image['parent'])}) was not stored as a main image",
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


# --- The two kinds -----------------------------------------------------------------------------


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
    write: Callable[[Plan, dict[str, Any], list[services.NewImage], Claim], Record]


def _write_runway(
    plan: Plan, album: dict[str, Any], images: list[services.NewImage], claim: Claim
) -> Runway:
    content = services.RunwayContent(
        brand=plan.brand,
        season_code=album["season_code"],
        season=album["season"],
        year=album["year"],
        collection_type=album["collection_type"],
        title=album["title"],
        description=album["description"],
        source=album["source"],
        source_url=album["source_url"],
        ingest_job_id=claim.job_id,
        content_checksum=claim.payload_checksum,
    )
    if plan.record is None:
        return services.runway_create(content=content, images=images)
    return services.runway_reopen(runway=plan.record, content=content, images=images)


def _write_street_snap(
    plan: Plan, album: dict[str, Any], images: list[services.NewImage], claim: Claim
) -> StreetSnap:
    content = services.StreetSnapContent(
        city=album["city"],
        year=album["year"],
        month=album["month"],
        title=album["title"],
        description=album["description"],
        source=album["source"],
        source_url=album["source_url"],
        ingest_job_id=claim.job_id,
        content_checksum=claim.payload_checksum,
    )
    if plan.record is None:
        return services.street_snap_create(content=content, images=images)
    return services.street_snap_reopen(street_snap=plan.record, content=content, images=images)


KINDS = {
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
            brand=brand, season_code=a["season_code"], collection_type=a["collection_type"]
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
