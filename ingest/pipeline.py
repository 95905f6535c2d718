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
job row and not downloaded again; a release the database is away for waits for its return (as
long as the job's lease lives), so that rq's retry finds the job released. On the last attempt
they end the job instead, with a report of what was received, stored and refused. Permanent
ones never raise to rq.

This module runs a job and sorts its errors; the steps live beside it: `planning` (2, 3, with
the two kinds in `kinds`), `downloads` (4), `writing` (5, 6). The job's exceptions are in
`errors`. `planning.plan_album`, `downloads.download_all` and `writing.write_album` are called
through their modules, so a test can stand in for one step.
"""

import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, InterfaceError, OperationalError, connections
from rq.timeouts import BaseTimeoutException

from catalog.text import truncate
from ingest import downloads, joblog, planning, writing
from ingest.downloads import (
    Outcome,
    Refusal,
    StorageFailure,
    as_progress,
    classify,
    earlier_downloads,
)
from ingest.errors import JobEnd, JobRetry
from ingest.kinds import KINDS, Kind, Record
from ingest.lease import renewing
from ingest.models import IngestJob
from ingest.planning import Plan
from ingest.report import Report
from ingest.services import (
    Claim,
    Superseded,
    ingest_job_claim,
    ingest_job_finish,
    ingest_job_release,
)
from ingest.writing import LostRace

logger = logging.getLogger(__name__)

Status = IngestJob.Status

# The longest pause between two tries to reach a database that went away.
DATABASE_BACK_PAUSE = 1.0


# --- Entry point -----------------------------------------------------------------------------


def run_job(job_id: int, *, final_attempt: bool, lease: bool = False) -> str:
    """Run one job; returns what happened (for rq's result and logs).

    ``final_attempt`` says whether a transient error ends the job (True) or hands it back for
    a retry (False): the rq task knows from rq's retry budget, the in-process runner has no
    scheduler and always passes True. ``lease``: renew the job's lease while it runs (rq's work
    horses do: reconcile and a second delivery of the job judge the execution alive by it).
    """
    claim = ingest_job_claim(job_id=job_id, lease=lease)
    if claim is None:
        return "nothing to do"
    with renewing(claim) if lease else nullcontext():
        return _attempt(claim, final_attempt=final_attempt)


def _attempt(claim: Claim, *, final_attempt: bool) -> str:
    """One attempt at a claimed job: its steps, and what each kind of error makes of it."""
    job_id = claim.job_id
    report = Report(
        max_issues=settings.INGEST_REPORT_MAX_ISSUES,
        album_images=len(claim.payload.get("images", [])),
    )
    # What this attempt stored, by URL: handed back with the job for the next attempt.
    downloaded: dict[str, dict[str, Any]] = dict(claim.downloaded)
    try:
        return _steps(claim, report, downloaded, final_attempt=final_attempt)
    except Superseded:
        return _superseded(claim)
    except JobEnd as end:
        return _end(claim, end, report)
    except (JobRetry, BaseTimeoutException) as exc:
        # rq's job timeout (INGEST_JOB_TIMEOUT) is raised in this thread wherever the job is; it
        # is an ordinary Exception, and no bug: a site too slow for one attempt. Retried like
        # any transient error (the download budget normally ends a job well before it).
        retry = exc if isinstance(exc, JobRetry) else _timed_out(exc)
        if final_attempt:
            return _end(claim, JobEnd(Status.FAILED, retry.reason, retry.error), report)
        try:
            _hand_back(claim, retry.error, downloaded)
        except Superseded:
            return _superseded(claim)  # another execution decides, and retries if need be
        except DatabaseError:
            # The database stayed away longer than the lease lives: rq still retries on the
            # original error, and the retry's claim takes over the silent lease.
            logger.warning("ingest job %s: could not hand the job back", job_id, exc_info=True)
        raise
    except (OperationalError, InterfaceError) as exc:
        # The database went away (or deadlocked): retry like any transient error, once the
        # job is handed back (_once_the_database_answers). If the database stays away longer
        # than the lease lives, the row stays running, and the next attempt (rq's retry, or
        # reconcile's reclaim) takes it over.
        error = f"database error: {truncate(exc, 300)}"
        try:
            if final_attempt:
                return _once_the_database_answers(
                    claim,
                    lambda: _end(claim, JobEnd(Status.FAILED, "database_error", error), report),
                )
            _hand_back(claim, error, downloaded)
        except Superseded:
            pass  # another execution owns the job
        except DatabaseError:
            logger.warning("ingest job %s: could not record the database error", job_id)
        raise
    except Exception as exc:
        # A bug, not the input: fail readably on the row (never retry a bug on a loop) and log
        # the traceback for us.
        logger.exception("ingest job %s failed unexpectedly", job_id)
        error = f"internal error: {type(exc).__name__}: {truncate(exc, 300)}"
        return _end(claim, JobEnd(Status.FAILED, "internal_error", error), report)


def _hand_back(claim: Claim, error: str, downloaded: dict[str, dict[str, Any]]) -> None:
    """Release the job (and so its lease) for rq's retry, once the database answers."""
    _once_the_database_answers(
        claim, lambda: ingest_job_release(claim=claim, error=error, downloaded=downloaded)
    )


def _once_the_database_answers[T](claim: Claim, write: Callable[[], T]) -> T:
    """Run ``write``, the end of an execution (its hand-back, or its end as failed), as soon
    as the database answers: at once, usually; on a fresh connection if the error broke this
    one (a database restart, pg_terminate_backend); or, while the database is away (a
    failover, a network blip), once it is back, for as long as the job's lease lives.

    An execution that gives up leaves its job running under a live lease: rq's retry would
    find it "already running", do nothing, and the job would wait for reconcile to reclaim it
    as a dead worker's, a lost execution (three fail it as worker_died). Waiting here makes a
    blip cost one retry. Past the lease's life (3 heartbeat intervals without a renewal: the
    renewals fail as well) the lease is silent, and the retry's claim takes the job over.
    """
    patience = 3 * settings.INGEST_WORKER_HEARTBEAT_SECONDS
    deadline = time.monotonic() + patience
    tries = 0
    while True:
        try:
            return write()
        except (OperationalError, InterfaceError):
            # At once on a fresh connection, then every 0.25, 0.5, 1, 1... seconds.
            pause = min(0.25 * 2 ** (tries - 1), DATABASE_BACK_PAUSE) if tries else 0.0
            if time.monotonic() + pause > deadline:
                raise
            if tries == 1:  # a fresh connection failed too: the database is away
                logger.warning(
                    "ingest job %s: database unavailable; recording how the attempt ended "
                    "once it is back (trying for up to %ss)",
                    claim.job_id,
                    patience,
                )
            _reconnect()
            time.sleep(pause)
            tries += 1


def _reconnect() -> None:
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.in_atomic_block:
        return  # a test's transaction: the connection is not ours to replace
    connection.close()


def _timed_out(exc: BaseTimeoutException) -> JobRetry:
    return JobRetry(
        "job_timeout",
        f"rq job timeout: {truncate(exc, 300)} "
        f"(INGEST_JOB_TIMEOUT is {settings.INGEST_JOB_TIMEOUT}s)",
    )


def _end(claim: Claim, end: JobEnd, report: Report) -> str:
    try:
        ingest_job_finish(
            claim=claim,
            status=end.status,
            reason=end.reason,
            error=end.error,
            report=report.as_dict(),
            record=end.record,
        )
    except Superseded:
        return _superseded(claim)
    return end.status


def _superseded(claim: Claim) -> str:
    # Reclaimed (stale) or claimed again while this execution ran: whatever it did was rolled
    # back or never written, and the owner of the job finishes it.
    logger.warning("ingest job %s attempt %s was superseded", claim.job_id, claim.attempt)
    return "superseded"


def _steps(
    claim: Claim,
    report: Report,
    downloaded: dict[str, dict[str, Any]],
    *,
    final_attempt: bool,
) -> str:
    album = claim.payload
    kind = KINDS[claim.kind]
    # Steps 2 and 3: skips and unknown brands end here, before anything is downloaded.
    planning.plan_album(kind, album, claim.payload_checksum)

    # Step 4. Images an earlier attempt stored are not downloaded again.
    urls = [image["url"] for image in album["images"]]
    earlier = earlier_downloads(downloaded)
    fresh = [url for url in dict.fromkeys(urls) if url not in earlier]
    downloaded.clear()
    downloaded.update({url: as_progress(o) for url, o in earlier.items()})
    with joblog.phase("download"):
        # Each image is recorded in ``downloaded`` as soon as it is stored: an attempt cut off
        # (rq's job timeout, a database error) hands back all it got.
        fetched = downloads.download_all(fresh, stored=downloaded)
    by_url: dict[str, Outcome] = {**earlier, **dict(zip(fresh, fetched, strict=True))}
    outcomes = [by_url[url] for url in urls]
    # The report counts what this attempt got, even if a storage error ends the job below.
    stored = classify(album, outcomes, report)
    storage_failures = [o for o in outcomes if isinstance(o, StorageFailure)]
    if storage_failures:
        raise JobRetry("storage_error", f"storage error: {storage_failures[0].error}")
    transient = [o for o in outcomes if isinstance(o, Refusal) and o.transient]
    if not stored and transient and not final_attempt:
        # Not one image came through, some of them transiently: the site is down, not its
        # images, and a retry of the whole job in a while is what can help.
        first = album["images"][outcomes.index(transient[0])]["url"]
        raise JobRetry(
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
            return writing.write_album(claim, kind, album, stored, report, downloaded)
    except LostRace as lost:
        winner = _race_winner(kind, album, lost.plan)
        raise JobEnd(Status.SKIPPED, "lost_race", record=winner) from None


def _race_winner(kind: Kind, album: dict[str, Any], plan: Plan) -> Record | None:
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
