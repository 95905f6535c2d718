"""Step 4 of an ingest job: download the album's images concurrently through the SSRF-safe
fetcher, check and hash each, and store it under its content-addressed key; then sort the
outcomes into stored images, refusals and repeats for the report.

A transient error of one image (a timeout, a 5xx) is tried again inside the job, a few times
with a short backoff, within the image's deadline (the tries share it: one that expired is not
tried again) and the download budget; then that image is an issue and the job goes on with the
survivors.
"""

import dataclasses
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, cast

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from catalog.memory import decode_budget
from catalog.storage import image_store, stored_objects_renew
from catalog.text import truncate
from ingest.fetching import FetchError, FetchPolicy, fetch
from ingest.hashing import PHASH_ALGORITHM, AnalysedImage, ImageRefused, analyse_image
from ingest.memory import decode_reservation
from ingest.report import Report


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


def as_progress(downloaded: Downloaded) -> dict[str, Any]:
    return {"storage_key": downloaded.storage_key, **dataclasses.asdict(downloaded.analysed)}


def earlier_downloads(progress: dict[str, dict[str, Any]]) -> dict[str, Downloaded]:
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


def download_all(
    urls: list[str], *, stored: dict[str, dict[str, Any]] | None = None
) -> list[Outcome]:
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
            outcome = _download_tries(url, policy, max_pixels, budget, db_lock, retry, stop)
            results[url] = outcome
            if stored is not None and isinstance(outcome, Downloaded):
                stored[url] = as_progress(outcome)  # ``stored``: see pipeline._run

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
    """One image, tried again after a transient failure while tries, the image's deadline and
    the budget last.

    The tries share the image's deadline (``policy.total_deadline``, SPEC's 30 s *in all* per
    image): a try gets what the ones before it left, so a deadline that expired is never
    tried again, and a 5xx or a reset is tried again only within the image's time.
    """
    image_ends_at = time.monotonic() + policy.total_deadline
    pause = retry.backoff
    for attempt in range(1, retry.tries + 1):
        outcome = _download_one(url, policy, max_pixels, budget, db_lock, image_ends_at)
        if not (isinstance(outcome, Refusal) and outcome.transient):
            return outcome
        left = min(budget.remaining(), image_ends_at - time.monotonic())
        if attempt == retry.tries or left <= pause or stop.wait(pause):
            break
        pause *= 2
    # Every other outcome returned in the loop, which ran at least once.
    refused = cast(Refusal, outcome)
    if attempt > 1:
        return Refusal(f"{refused.reason} ({attempt} tries)", transient=True)
    return refused


def _download_one(
    url: str,
    policy: FetchPolicy,
    max_pixels: int,
    budget: DownloadBudget,
    db_lock: threading.Lock,
    image_ends_at: float,
) -> Outcome:
    remaining = budget.remaining()
    if remaining <= 0:
        return Refusal(f"not downloaded: {budget.reason}", transient=True)
    image_left = image_ends_at - time.monotonic()
    if image_left <= 0:
        return Refusal(_image_deadline_reason(policy), transient=True)
    try:
        # A try gets what is left of the image's deadline, and an image started near the end
        # of the job's budget what is left of that.
        left = min(remaining, image_left)
        fetched = fetch(
            url,
            policy=replace(policy, total_deadline=left) if left < policy.total_deadline else policy,
        )
    except FetchError as exc:
        if exc.transient and budget.remaining() <= 0 and remaining < image_left:
            return Refusal(f"download cut off: {budget.reason}", transient=True)
        if exc.transient and time.monotonic() >= image_ends_at:
            # Said with the image's whole deadline, not the part of it this try had.
            return Refusal(_image_deadline_reason(policy), transient=True)
        return Refusal(exc.reason, exc.transient)
    try:
        # Only the bytes decide what this is; the Content-Type the server claimed does not.
        analysed = analyse_image(
            fetched.body, max_pixels=max_pixels, reserve=decode_reservation(decode_budget())
        )
    except ImageRefused as exc:
        return Refusal(exc.reason, transient=False)
    try:
        key = image_store(
            data=fetched.body, sha1=analysed.sha1, mime_type=analysed.mime_type, db_lock=db_lock
        )
    except DatabaseError:
        raise  # recording the object failed: the job's database error, not the storage's
    except Exception as exc:  # noqa: BLE001 - boto3, OSError, ...: any storage error is retried
        return StorageFailure(f"{type(exc).__name__}: {truncate(exc, 300)}")
    return Downloaded(analysed=analysed, storage_key=key)


def _image_deadline_reason(policy: FetchPolicy) -> str:
    return f"deadline of {policy.total_deadline:g}s exceeded"


@dataclass
class StoredImage:
    index: int  # in the album
    url: str
    image: Downloaded
    album_image: dict[str, Any]
    repeats: list[int] = field(default_factory=list)  # album indexes with the same bytes


def classify(album: dict[str, Any], outcomes: list[Outcome], report: Report) -> list[StoredImage]:
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
