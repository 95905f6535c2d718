"""Make the renditions, placeholder and colour of stored images (the I/O around the pure
catalog.imaging): read each original from storage, render it, put the renditions, then
write the image row.

The row is written only after every rendition in it is in storage, in one UPDATE of that row,
so a record never points at a rendition that does not exist; and the row's other fields
(review, curation) are never touched. Used by the follow-up rq job of each ingested album
(catalog.tasks.run_renditions) and by `manage.py renditions` (the backfill).

Errors are sorted like the ingest pipeline's: a storage error is transient (:class:`Transient`
is raised while attempts remain; on the last one the image is marked failed with the error); an
original that is missing or cannot be decoded is permanent (marked at once). Either way the
image and its record stay as they are: an image without renditions is shown by its original.
"""

import hashlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Literal

from django.conf import settings
from django.core.files.storage import Storage, default_storage
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from catalog import edge
from catalog.imaging import RenderError, render
from catalog.memory import decode_budget
from catalog.models import (
    IMAGE_MODELS,
    IMAGE_PARENT_FIELD,
    RecordImage,
    RunwayImage,
    StreetSnapImage,
)
from catalog.storage import rendition_key, rendition_put
from catalog.text import truncate
from catalog.visibility import keys_sync, media_change_note

logger = logging.getLogger(__name__)

Status = RecordImage.RenditionStatus
type Outcome = Literal["done", "skipped", "missing", "failed"]

_ERROR_MAX = 300


class Transient(Exception):
    """Storage failed; trying again later may help."""


@dataclass
class Tally:
    done: int = 0
    skipped: int = 0
    missing: int = 0
    failed: int = 0
    problems: list[str] = field(default_factory=list)  # "runway image 12: reason"
    left: int = 0  # images not started: the run stopped for more urgent work (``stop``)

    def add(self, outcome: Outcome, problem: str = "") -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)
        if problem:
            self.problems.append(problem)

    @property
    def total(self) -> int:
        return self.done + self.skipped + self.missing + self.failed


def image_renditions_make(
    *,
    image: RunwayImage | StreetSnapImage,
    force: bool = False,
    final_attempt: bool = True,
    storage: Storage | None = None,
    db_lock: AbstractContextManager | None = None,
) -> tuple[Outcome, str]:
    """Make ``image``'s renditions; returns the outcome and, unless done or skipped, why.

    Skips an image whose renditions are made (``force`` makes them again). Raises
    :class:`Transient` for a storage error unless ``final_attempt``. ``db_lock`` is held
    around its database statements (threads sharing one connection pass the same lock).
    """
    if image.rendition_status == Status.DONE and not force:
        return "skipped", ""
    storage = storage or default_storage
    db_lock = db_lock or nullcontext()
    try:
        with storage.open(image.storage_key, "rb") as original:
            data = original.read()
    except FileNotFoundError:
        missing = f"original missing in storage: {image.storage_key}"
        return "missing", _fail(image, missing, db_lock)
    except Exception as exc:  # noqa: BLE001 - boto3, OSError...: any storage error is retried
        if not storage_has(storage, image.storage_key):
            missing = f"original missing in storage: {image.storage_key}"
            return "missing", _fail(image, missing, db_lock)
        why = truncate(f"{type(exc).__name__}: {exc}", 200)
        return _transient(image, f"reading the original: {why}", final_attempt, db_lock)
    try:
        # The decode holds its cost in the process's decode budget, the one ingest's
        # downloads share: a worker's memory stays bound whatever it decodes at once.
        rendered = render(data, max_pixels=settings.INGEST_MAX_IMAGE_PIXELS, budget=decode_budget())
    except RenderError as exc:
        return "failed", _fail(image, f"cannot render the original: {exc.reason}", db_lock)
    sha1 = image.sha1 or hashlib.sha1(data, usedforsecurity=False).hexdigest()
    renditions = []
    try:
        for rendition in rendered.renditions:
            key = rendition_key(sha1=sha1, width=rendition.width)
            rendition_put(key=key, data=rendition.data, storage=storage)
            renditions.append({"width": rendition.width, "height": rendition.height, "key": key})
    except Exception as exc:  # noqa: BLE001 - as above
        why = truncate(f"{type(exc).__name__}: {exc}", 200)
        return _transient(image, f"storing a rendition: {why}", final_attempt, db_lock)
    # Only now, with every object in storage. sha1 is filled for legacy rows that had none
    # (their renditions' keys come from it).
    with db_lock:
        # An image a published album shows: its renditions go to the public store before the
        # row lists them, so no URL the API shows fails to answer (catalog.visibility).
        synced = keys_sync([str(r["key"]) for r in renditions])
        if synced.failed:
            error = next(iter(synced.failed.values()))
            return _transient(
                image, f"making a rendition public: {error}", final_attempt, nullcontext()
            )
        with transaction.atomic():
            # The album's row before its image's, as every write to an album takes them: the
            # public rows' refresh this update starts locks it too (catalog/public_rows/).
            record_model = image.record_model()
            list(record_model.objects.select_for_update(no_key=True).filter(pk=image.record_id))
            type(image).objects.filter(pk=image.pk).update(
                sha1=sha1,
                renditions=renditions,
                placeholder=rendered.placeholder,
                color=rendered.color,
                rendition_status=Status.DONE,
                rendition_error="",
            )
        if synced.published:
            # The detail now offers them: the edge forgets the one it keeps.
            kind = image.record_model().kind
            media_change_note(
                kind=kind,
                record_id=image.record_id,
                tags=edge.record_tags(kind, image.record_id),
                bytes_done=True,
            )
    return "done", ""


def record_renditions_make(
    *,
    kind: str,
    record_id: int,
    force: bool = False,
    final_attempt: bool = True,
    stop: Callable[[], bool] | None = None,
) -> Tally:
    """Make the renditions of every image of one album (soft-deleted ones too: an editor may
    restore them). Raises :class:`Transient` on a storage error unless ``final_attempt``;
    the images done before it keep their renditions, so a retry only does the rest.

    ``stop`` is asked before each image but the first: once it answers true, no other image
    starts, the ones in hand are finished, and the tally counts the rest as ``left`` (the rq
    job hands them to a new job: a new album waits for the images in hand, not the album).

    RENDITION_THREADS images at a time: libvips releases the GIL, and WebP encoding, most of
    the cost, runs on one core per image. The threads share this thread's database connection
    (one statement at a time), as the pipeline's download threads do, so a job opens no extra
    connections.
    """
    tally = Tally()
    images = list(
        IMAGE_MODELS[kind].objects.filter(**{IMAGE_PARENT_FIELD[kind]: record_id}).order_by("pk")
    )
    todo = [image for image in images if force or image.rendition_status != Status.DONE]
    tally.skipped = len(images) - len(todo)
    threads = max(1, min(settings.RENDITION_THREADS, len(todo)))
    connection = connections[DEFAULT_DB_ALIAS]
    db_lock = threading.Lock()
    errors: list[Transient] = []

    def one(image):
        connections[DEFAULT_DB_ALIAS] = connection
        return image, image_renditions_make(
            image=image, force=force, final_attempt=final_attempt, db_lock=db_lock
        )

    def collect(futures) -> None:
        for future in futures:
            try:
                image, (outcome, problem) = future.result()
            except Transient as exc:
                errors.append(exc)
                continue
            tally.add(outcome, f"{kind} image {image.pk}: {problem}" if problem else "")

    connection.inc_thread_sharing()
    try:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="renditions") as pool:
            # Started one by one as threads free up, so that ``stop`` is heard between images;
            # the outcomes are taken in the images' order.
            futures: list[Future] = []
            in_flight: set[Future] = set()
            for n, image in enumerate(todo):
                if len(in_flight) >= threads:
                    _, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                if n and stop is not None and stop():
                    tally.left = len(todo) - n
                    break
                future = pool.submit(one, image)
                futures.append(future)
                in_flight.add(future)
            collect(futures)
    finally:
        connection.dec_thread_sharing()
    if errors:
        raise errors[0]  # after every image was tried: the retry only does the rest
    return tally


def storage_has(storage: Storage, key: str) -> bool:
    try:
        return storage.exists(key)
    except Exception:  # noqa: BLE001 - unknown: assume it is there, so the error is retried
        return True


def _transient(
    image: RecordImage, error: str, final_attempt: bool, db_lock: AbstractContextManager
) -> tuple[Outcome, str]:
    if not final_attempt:
        raise Transient(error)
    return "failed", _fail(image, error, db_lock)


def _fail(image: RecordImage, error: str, db_lock: AbstractContextManager) -> str:
    # The renditions already listed stay: they are in storage (a --force rerun that failed).
    with db_lock:
        type(image).objects.filter(pk=image.pk).exclude(rendition_status=Status.DONE).update(
            rendition_status=Status.FAILED, rendition_error=error[:_ERROR_MAX]
        )
    logger.warning("renditions of %s: %s", image, error)
    return error
