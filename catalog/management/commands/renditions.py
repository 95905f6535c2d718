"""`manage.py renditions`: make the missing renditions, placeholders and colours of stored
images (legacy imports, images ingested before renditions existed, renditions that failed).

Resumable by construction: an image is skipped once its renditions are made, and its row is
written only after its objects are stored, so an interrupted run (Ctrl-C, a killed process)
loses at most the images in hand; running the command again does the rest.

With REDIS_URL (workers running), the command does not render: it puts one renditions job per
album on the `renditions` queue, which the workers serve after `ingest`, so a backfill of the
whole archive never holds a new album back. It keeps at most --waiting jobs on that queue and
waits for the workers to take them before enqueuing more: Redis holds a few dozen jobs, not the
archive, and a new album's own renditions wait behind that many at most. --here renders in
this process instead (threads, as in the embedded mode).
"""

import os
import queue
import sys
import threading
import time
from dataclasses import dataclass

import django_rq
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from redis.exceptions import RedisError

from catalog.jobs import renditions_job_enqueue
from catalog.models import IMAGE_MODELS, IMAGE_PARENT_FIELD, RECORD_MODELS, RecordImage
from catalog.services.renditions import Tally, image_renditions_make

Status = RecordImage.RenditionStatus
_BATCH = 500
_MAX_PROBLEMS_SHOWN = 50
# Jobs the enqueueing backfill keeps waiting on the renditions queue (--waiting), and how often
# it looks whether the workers took some.
_WAITING = 20
_POLL_SECONDS = 1.0
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True)
class Scope:
    kind: str
    record_id: int | None


class Command(BaseCommand):
    help = (
        "Make the missing WebP renditions, ThumbHash placeholders and colours of stored images, "
        "reading each original from storage. Skips images that have them (--force redoes "
        "them); a missing or broken original is reported, never fatal. Interrupt it at any "
        "time: a second run carries on where the first stopped."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--record",
            metavar="KIND:ID",
            help="only this album, e.g. runway:12 or street:7",
        )
        parser.add_argument(
            "--force", action="store_true", help="make them again for images that have them"
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=_CORES,
            help="images rendered at once, each in its own thread (libvips releases the GIL); "
            f"default: the number of cores ({_CORES}), which measured fastest "
            "(docs/renditions.md); with --here or without REDIS_URL",
        )
        parser.add_argument(
            "--here",
            action="store_true",
            help="render in this process even when REDIS_URL is set (by default the albums "
            "go to the workers' renditions queue, served after ingest)",
        )
        parser.add_argument(
            "--waiting",
            type=int,
            default=_WAITING,
            help="jobs kept waiting on the renditions queue at most: more are enqueued as the "
            f"workers take them (default {_WAITING})",
        )

    def handle(
        self,
        *args,
        record=None,
        force=False,
        workers=_CORES,
        here=False,
        waiting=_WAITING,
        **options,
    ):
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        if waiting < 1:
            raise CommandError("--waiting must be at least 1")
        scopes = self._scopes(record)
        if settings.REDIS_URL and not here:
            self._enqueue(scopes, force, waiting)
            return
        tally = Tally()
        for scope in scopes:
            tally.skipped += 0 if force else self._images(scope).filter(**_done()).count()
        todo = sum(self._todo(scope, force).count() for scope in scopes)
        progress = Progress(self.stderr, total=todo + tally.skipped, tally=tally)
        self.stdout.write(
            f"{todo} image(s) to render, {tally.skipped} already have renditions, "
            f"{workers} worker(s)"
        )
        interrupted = False
        try:
            self._run(scopes, force, workers, tally, progress)
        except KeyboardInterrupt:
            interrupted = True
        progress.finish()
        self.stdout.write(
            f"done {tally.done}, skipped {tally.skipped}, original missing {tally.missing}, "
            f"failed {tally.failed}"
        )
        for problem in tally.problems[:_MAX_PROBLEMS_SHOWN]:
            self.stdout.write(f"  {problem}")
        if len(tally.problems) > _MAX_PROBLEMS_SHOWN:
            self.stdout.write(f"  ... and {len(tally.problems) - _MAX_PROBLEMS_SHOWN} more")
        if interrupted:
            self.stdout.write("Interrupted: run the command again to carry on.")
            sys.exit(130)

    def _scopes(self, record: str | None) -> list[Scope]:
        if record is None:
            return [Scope(kind, None) for kind in IMAGE_MODELS]
        kind, _, pk = record.partition(":")
        if kind not in RECORD_MODELS or not pk.isdigit():
            raise CommandError(
                f"--record takes KIND:ID with KIND one of {', '.join(RECORD_MODELS)}, "
                f"e.g. runway:12 (got {record!r})"
            )
        if not RECORD_MODELS[kind].objects.filter(pk=int(pk)).exists():
            raise CommandError(f"There is no {kind} {pk}.")
        return [Scope(kind, int(pk))]

    def _images(self, scope: Scope):
        images = IMAGE_MODELS[scope.kind].objects.all()
        if scope.record_id is not None:
            images = images.filter(**{IMAGE_PARENT_FIELD[scope.kind]: scope.record_id})
        return images

    def _todo(self, scope: Scope, force: bool):
        images = self._images(scope)
        return images if force else images.exclude(**_done())

    def _enqueue(self, scopes: list[Scope], force: bool, waiting: int) -> None:
        """One renditions job per album with images to do, never more than ``waiting`` on
        the queue: the workers serve ingest first, and each album's job is one album's time."""
        queue = django_rq.get_queue(settings.RENDITIONS_QUEUE)
        albums = {scope: self._albums(scope, force) for scope in scopes}
        total = sum(len(ids) for ids in albums.values())
        self.stdout.write(
            f"{total} album(s) to render: enqueued on the {queue.name!r} queue, at most "
            f"{waiting} waiting at a time (--here renders in this process)"
        )
        enqueued = 0
        shown = time.monotonic()
        try:
            for scope, record_ids in albums.items():
                for record_id in record_ids:
                    while queue.count >= waiting:
                        if time.monotonic() - shown >= 5:
                            shown = time.monotonic()
                            self.stderr.write(f"enqueued {enqueued}/{total}; the workers are busy")
                        time.sleep(_POLL_SECONDS)
                    renditions_job_enqueue(kind=scope.kind, record_id=record_id, force=force)
                    enqueued += 1
        except RedisError as error:
            raise CommandError(
                f"Redis failed after {enqueued} of {total} album(s): {error}; run the command "
                "again (albums done are skipped) or with --here"
            ) from error
        except KeyboardInterrupt:
            self.stdout.write(f"Interrupted after {enqueued} of {total} album(s) enqueued.")
            sys.exit(130)
        self.stdout.write(
            f"enqueued {enqueued} album(s); the workers make their renditions (the admin's "
            "dashboard counts the images still to do)"
        )

    def _albums(self, scope: Scope, force: bool) -> list[int]:
        if scope.record_id is not None:
            return [scope.record_id] if self._todo(scope, force).exists() else []
        parent = IMAGE_PARENT_FIELD[scope.kind]
        return list(
            self._todo(scope, force).order_by(parent).values_list(parent, flat=True).distinct()
        )

    def _run(self, scopes, force, workers, tally, progress) -> None:
        work: queue.Queue = queue.Queue(maxsize=workers * 4)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()
        threads = [
            threading.Thread(target=_worker, args=(work, results, stop, force), daemon=True)
            for _ in range(workers)
        ]
        for thread in threads:
            thread.start()
        try:
            for scope in scopes:
                todo = self._todo(scope, force)
                after = 0
                while True:
                    ids = list(
                        todo.filter(pk__gt=after)
                        .order_by("pk")
                        .values_list("pk", flat=True)[:_BATCH]
                    )
                    if not ids:
                        break
                    after = ids[-1]
                    for pk in ids:
                        _put(work, (scope.kind, pk), results, tally, progress, threads)
            for _ in threads:
                _put(work, None, results, tally, progress, threads)
            while any(thread.is_alive() for thread in threads):
                _drain(results, tally, progress, timeout=0.2)
            _drain(results, tally, progress, timeout=0)
        finally:
            # An interrupt: the threads finish the image in hand (its row is whole or
            # untouched) and take no other.
            stop.set()
            for thread in threads:
                thread.join()
            _drain(results, tally, progress, timeout=0)


def _done() -> dict:
    return {"rendition_status": Status.DONE}


def _put(work, item, results, tally, progress, threads) -> None:
    while True:
        try:
            work.put(item, timeout=0.2)
            return
        except queue.Full:
            _drain(results, tally, progress, timeout=0)
            if not any(thread.is_alive() for thread in threads):
                # Nothing empties the queue any more: stop rather than wait forever.
                raise CommandError("every worker thread stopped; run the command again") from None


def _drain(results, tally, progress, *, timeout: float) -> None:
    while True:
        try:
            outcome, problem = results.get(timeout=timeout)
        except queue.Empty:
            return
        tally.add(outcome, problem)
        progress.update()
        timeout = 0


def _worker(work: queue.Queue, results: queue.Queue, stop: threading.Event, force: bool):
    try:
        while not stop.is_set():
            try:
                item = work.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                return
            kind, pk = item
            try:
                # The read too: a dropped connection is this image failed, not a dead thread.
                image = IMAGE_MODELS[kind].objects.filter(pk=pk).first()
                if image is None:
                    outcome, problem = "skipped", ""  # deleted since it was listed
                else:
                    outcome, problem = image_renditions_make(
                        image=image, force=force, final_attempt=True
                    )
            except Exception as exc:  # noqa: BLE001 - one image's bug must not stop the run
                outcome, problem = "failed", f"{type(exc).__name__}: {exc}"
            results.put((outcome, f"{kind} image {pk}: {problem}" if problem else ""))
    finally:
        connections.close_all()  # this thread's own


class Progress:
    """One status line: counts, rate and time left; redrawn in place on a terminal, a line
    every few seconds in a log."""

    def __init__(self, stream, *, total: int, tally: Tally) -> None:
        self.stream = stream
        self.total = total
        self.tally = tally
        self.started = time.monotonic()
        self.shown = 0.0
        self.tty = getattr(stream, "isatty", lambda: False)()

    def update(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.shown < (0.25 if self.tty else 5.0):
            return
        self.shown = now
        t = self.tally
        rendered = t.done + t.missing + t.failed
        rate = rendered / max(now - self.started, 1e-9)
        left = max(self.total - t.total, 0)
        eta = f", {left / rate:.0f}s left" if rate > 0 and left else ""
        width = 24
        filled = int(width * t.total / self.total) if self.total else width
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {t.total}/{self.total} "
            f"done {t.done} skipped {t.skipped} missing {t.missing} failed {t.failed}, "
            f"{rate:.1f} images/s{eta}"
        )
        self.stream.write(f"\r{line}" if self.tty else line, ending="" if self.tty else "\n")
        self.stream.flush()

    def finish(self) -> None:
        self.update(force=True)
        if self.tty:
            self.stream.write("")
