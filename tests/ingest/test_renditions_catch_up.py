"""The scheduled catch-up (ingest.tasks.renditions_catch_up): the albums whose renditions job
was lost (Redis down when their ingest job ended) get one on the renditions queue, once, a
bounded number per run; the
albums whose job may still be on its way, those done and those failed are left alone."""

import importlib
from datetime import timedelta

import pytest
from django.utils import timezone
from rq import SimpleWorker
from rq import cron as rq_cron
from rq.job import Job

from catalog.models import RunwayImage
from ingest import tasks
from tests.catalog.services.test_renditions import photo_jpeg
from tests.factories import RunwayFactory, StreetSnapFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def album(*, stored_ago: timedelta, status: str = "pending", street: bool = False):
    """A record with two stored images in rendition ``status``, stored ``stored_ago``."""
    record = (StreetSnapFactory if street else RunwayFactory)(
        images=2, images__photo=photo_jpeg(), images__width=1600, images__height=1200
    )
    record.images.update(created_at=timezone.now() - stored_ago, rendition_status=status)
    return record


def queued_albums(queue) -> list[tuple]:
    jobs = Job.fetch_many(queue.get_job_ids(), connection=queue.connection)
    assert all(job.func_name == "catalog.tasks.run_renditions" for job in jobs)
    return sorted(tuple(job.args) for job in jobs)


def test_a_lost_renditions_job_is_enqueued_once_and_then_done(rq_queue, renditions_queue):
    # Given albums ingested an hour ago whose renditions job never reached Redis
    lost = album(stored_ago=timedelta(hours=1))
    lost_street = album(stored_ago=timedelta(hours=1), street=True)
    # and albums the catch-up must leave alone: one just stored (its own job may be on its
    # way), one with its renditions made, one whose renditions failed for good
    album(stored_ago=timedelta(seconds=5))
    album(stored_ago=timedelta(hours=1), status="done")
    album(stored_ago=timedelta(hours=1), status="failed")

    # When the catch-up runs, and runs again before a worker took its jobs
    first = tasks.renditions_catch_up()
    second = tasks.renditions_catch_up()

    # Then one job per lost album is queued on the renditions queue, the second run adding
    # nothing
    assert first == "enqueued 2 album(s) without renditions"
    assert second == "enqueued 0 album(s) without renditions"
    assert rq_queue.count == 0
    assert queued_albums(renditions_queue) == [("runway", lost.pk), ("street", lost_street.pk)]

    # And a worker running them makes the renditions; the next run finds nothing to do
    SimpleWorker([rq_queue, renditions_queue], connection=rq_queue.connection).work(burst=True)
    assert set(lost.images.values_list("rendition_status", flat=True)) == {"done"}
    assert set(lost_street.images.values_list("rendition_status", flat=True)) == {"done"}
    assert tasks.renditions_catch_up() == "enqueued 0 album(s) without renditions"
    assert renditions_queue.count == 0


def test_each_run_enqueues_a_bounded_number_and_the_queued_do_not_block_the_rest(
    renditions_queue, monkeypatch
):
    monkeypatch.setattr(tasks, "RENDITIONS_CATCH_UP_ALBUMS", 2)
    lost = [album(stored_ago=timedelta(hours=1)) for _ in range(3)]

    assert tasks.renditions_catch_up() == "enqueued 2 album(s) without renditions"
    assert queued_albums(renditions_queue) == [("runway", r.pk) for r in lost[:2]]
    # The first two still wait in the queue: the next run takes the third, not them again.
    assert tasks.renditions_catch_up() == "enqueued 1 album(s) without renditions"
    assert queued_albums(renditions_queue) == [("runway", r.pk) for r in lost]
    assert tasks.renditions_catch_up() == "enqueued 0 album(s) without renditions"


def test_an_album_whose_job_was_lost_too_is_tried_again_later(rq_queue, renditions_queue, settings):
    lost = album(stored_ago=timedelta(hours=1))
    assert tasks.renditions_catch_up() == "enqueued 1 album(s) without renditions"
    renditions_queue.empty()  # that job is lost as well

    # Within the time its job may wait and retry: not again
    assert tasks.renditions_catch_up() == "enqueued 0 album(s) without renditions"
    # Past it (shortened here to a second), a later run enqueues it again.
    settings.INGEST_JOB_TIMEOUT = 1
    settings.INGEST_RETRY_INTERVALS = []
    rq_queue.connection.zadd(
        f"archive:renditions-catch-up:{rq_queue.name}", {f"runway:{lost.pk}": 0}
    )
    assert tasks.renditions_catch_up() == "enqueued 1 album(s) without renditions"
    assert queued_albums(renditions_queue) == [("runway", lost.pk)]


def test_nothing_is_enqueued_when_renditions_are_left_to_the_backfill(renditions_queue, settings):
    settings.RENDITIONS_AT_INGEST = False
    album(stored_ago=timedelta(hours=1))

    assert tasks.renditions_catch_up().startswith("skipped")
    assert renditions_queue.count == 0
    assert RunwayImage.objects.filter(rendition_status="pending").count() == 2


def test_the_schedule_runs_it_on_the_maintenance_queue(settings):
    settings.MAINTENANCE_RENDITIONS_SCHEDULE = "*/10 * * * *"
    rq_cron._job_data_registry.clear()
    import config.cron

    importlib.reload(config.cron)
    registered = {job["func"]: job for job in rq_cron._job_data_registry}
    rq_cron._job_data_registry.clear()

    job = registered[tasks.renditions_catch_up]
    assert job["queue_name"] == settings.MAINTENANCE_QUEUE
    assert job["cron"] == "*/10 * * * *"
