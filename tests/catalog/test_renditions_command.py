"""`manage.py renditions`, the backfill: every image without renditions gets them, existing ones
are skipped (--force redoes), --record limits it to one album, a missing or broken original is
reported, and an interrupted run carries on when run again. Threads of the command use their
own database connections, so the rows must be committed: transactional tests."""

import hashlib
import io
import signal
import threading

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from PIL import Image
from skimage import data as skdata

from catalog.models import RunwayImage, StreetSnapImage
from catalog.services import renditions
from catalog.storage import image_store
from tests.factories import RunwayFactory, RunwayImageFactory, StreetSnapImageFactory

pytestmark = pytest.mark.django_db(transaction=True)

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "camera", "immunohistochemistry")


def photo_jpeg(name: str, n: int = 0) -> bytes:
    image = Image.fromarray(getattr(skdata, name)()).convert("RGB").resize((900 + n, 600))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


def stored(factory, data: bytes, **fields):
    sha1 = hashlib.sha1(data).hexdigest()  # noqa: S324 - a content address
    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    return factory(storage_key=key, sha1=sha1, width=900, height=600, **fields)


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("renditions", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def statuses(model=RunwayImage) -> list[str]:
    return list(model.objects.order_by("pk").values_list("rendition_status", flat=True))


def test_the_backfill_fills_every_image_and_says_what_it_did():
    runway = RunwayFactory()
    for n, name in enumerate(PHOTOS[:4]):
        stored(RunwayImageFactory, photo_jpeg(name, n), runway=runway)
    stored(StreetSnapImageFactory, photo_jpeg("camera"))
    RunwayImageFactory(runway=runway)  # its original is not in storage
    broken = RunwayImageFactory(runway=runway, storage_key="images/00/broken.jpg")
    default_storage.save(broken.storage_key, io.BytesIO(b"\xff\xd8\xffnot a jpeg"))

    out, err = run("--workers", "2")

    assert "done 5, skipped 0, original missing 1, failed 1" in out
    assert "original missing in storage" in out and f"runway image {broken.pk}" in out
    assert "images/s" in err  # the progress line
    assert statuses().count("done") == 4 and statuses(StreetSnapImage) == ["done"]

    # A second run skips what is there; the two that cannot be made are tried again.
    out, _ = run()
    assert "done 0, skipped 5, original missing 1, failed 1" in out


def test_force_redoes_and_record_limits_to_one_album():
    first, second = RunwayFactory(), RunwayFactory()
    a = stored(RunwayImageFactory, photo_jpeg("astronaut"), runway=first)
    b = stored(RunwayImageFactory, photo_jpeg("coffee"), runway=second)

    out, _ = run("--record", f"runway:{first.pk}")
    assert "done 1, skipped 0" in out
    assert (a.pk < b.pk) and statuses() == ["done", "pending"]

    out, _ = run("--record", f"runway:{first.pk}", "--force")
    assert "done 1, skipped 0" in out

    with pytest.raises(CommandError, match="KIND:ID"):
        run("--record", "runway")
    with pytest.raises(CommandError, match="no street"):
        run("--record", "street:999999")


def test_an_interrupted_run_carries_on_when_run_again(monkeypatch):
    # Given eight images, and a run that is interrupted (SIGINT, as Ctrl-C sends) while it
    # renders the third
    runway = RunwayFactory()
    for n in range(8):
        stored(RunwayImageFactory, photo_jpeg(PHOTOS[n % len(PHOTOS)], n), runway=runway)
    real = renditions.image_renditions_make
    calls = []
    lock = threading.Lock()

    def interrupt_on_third(**kwargs):
        with lock:
            calls.append(kwargs["image"].pk)
            third = len(calls) == 3
        if third:
            signal.raise_signal(signal.SIGINT)  # delivered to the main thread, as Ctrl-C is
        return real(**kwargs)

    from catalog.management.commands import renditions as command

    monkeypatch.setattr(command, "image_renditions_make", interrupt_on_third)

    # Python's own Ctrl-C handler, as `manage.py` has it: an rq worker run earlier in this
    # process (tests/ingest) leaves its own SIGINT handler behind.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(SystemExit) as exited:
            run("--workers", "1")
    finally:
        signal.signal(signal.SIGINT, previous)

    # Then it stopped early, each image whole or untouched, and said so
    assert exited.value.code == 130
    done_first = statuses().count("done")
    assert 3 <= done_first < 8
    assert all(
        (image.rendition_status == "done") == bool(image.renditions)
        for image in RunwayImage.objects.all()
    )

    # When it runs again, it does the rest and nothing twice
    monkeypatch.setattr(command, "image_renditions_make", real)
    out, _ = run("--workers", "2")

    assert f"done {8 - done_first}, skipped {done_first}, original missing 0, failed 0" in out
    assert statuses() == ["done"] * 8


def test_a_run_whose_threads_all_stopped_ends_instead_of_waiting(monkeypatch):
    from catalog.management.commands import renditions as command

    for _ in range(8):  # more than the work queue holds for one thread (4)
        RunwayImageFactory()
    monkeypatch.setattr(command, "_worker", lambda *args: None)  # a thread that died

    with pytest.raises(CommandError, match="every worker thread stopped"):
        run("--workers", "1")


def test_an_image_whose_row_cannot_be_read_is_failed_and_the_run_goes_on(monkeypatch):
    stored(RunwayImageFactory, photo_jpeg("astronaut"))
    unreadable = stored(RunwayImageFactory, photo_jpeg("coffee"))
    real_filter = RunwayImage.objects.filter

    def flaky_filter(*args, **kwargs):
        if kwargs.get("pk") == unreadable.pk:
            raise RuntimeError("connection dropped")
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(RunwayImage.objects, "filter", flaky_filter)

    out, _ = run("--workers", "1")

    assert "done 1, skipped 0, original missing 0, failed 1" in out
    assert f"runway image {unreadable.pk}: RuntimeError: connection dropped" in out


# --- With workers (REDIS_URL): the albums go to the renditions queue ---------------------------


def test_with_workers_each_album_becomes_a_job_on_the_renditions_queue(
    rq_queue, renditions_queue, monkeypatch
):
    from rq import SimpleWorker

    from catalog.management.commands import renditions as command

    # Given three albums with images to render, and one whose images are done
    albums = [RunwayFactory() for _ in range(3)]
    for n, runway in enumerate(albums):
        stored(RunwayImageFactory, photo_jpeg(PHOTOS[n], n), runway=runway)
    done = RunwayImageFactory(runway=RunwayFactory(), rendition_status="done").runway
    # and a worker that takes one job each time the command waits for room on the queue
    seen = []

    def wait(_seconds):
        seen.append(renditions_queue.count)
        worker = SimpleWorker([rq_queue, renditions_queue], connection=rq_queue.connection)
        worker.work(burst=True, max_jobs=1)

    monkeypatch.setattr(command.time, "sleep", wait)

    # When the backfill runs with room for two waiting jobs
    out, _ = run("--waiting", "2")

    # Then it rendered nothing itself: it enqueued one job per album to do, never more than
    # two waiting, and waited for the worker whenever the queue was full
    assert "3 album(s) to render" in out and "enqueued 3 album(s)" in out
    assert seen == [2]
    assert rq_queue.count == 0
    jobs = renditions_queue.get_jobs()
    assert [job.args for job in jobs] == [("runway", albums[1].pk), ("runway", albums[2].pk)]
    assert statuses().count("done") == 2  # the first album (the worker's) and the done one

    # And the jobs left make the rest; --force enqueues every album again, forced
    SimpleWorker([renditions_queue], connection=rq_queue.connection).work(burst=True)
    assert statuses() == ["done"] * 4
    run("--force", "--waiting", "10")
    assert [job.args for job in renditions_queue.get_jobs()] == [
        ("runway", runway.pk, True) for runway in [*albums, done]
    ]


def test_here_renders_in_this_process_even_with_workers(rq_queue, renditions_queue):
    stored(RunwayImageFactory, photo_jpeg("astronaut"), runway=RunwayFactory())

    out, _ = run("--here", "--workers", "1")

    assert "done 1, skipped 0" in out
    assert renditions_queue.count == 0 and statuses() == ["done"]
