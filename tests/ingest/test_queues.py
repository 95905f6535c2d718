"""The queues a worker serves, in their order (docs/operations.md, "Queues"): a real worker
process (`manage.py rqworker <ingest> <renditions>`) takes a new album's ingest job before
the renditions jobs already waiting, and still runs renditions jobs left on the ingest queue
by an older deployment."""

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from rq.job import Job

from catalog.jobs import RUN_RENDITIONS
from ingest.queueing import renditions_enqueue, rq_job_id
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.catalog.services.test_renditions import stored_image
from tests.factories import BrandFactory, RunwayFactory
from tests.ingest.support import jpeg, runway_album, worker_env

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_worker(*queues: str) -> str:
    """A real worker process serving ``queues`` in that order until they are empty."""
    worker = subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [
            sys.executable,
            "manage.py",
            "rqworker",
            *queues,
            "--burst",
            "--name",
            f"{queues[0]}-{uuid.uuid4().hex[:6]}",
        ],
        cwd=ROOT,
        env=worker_env(queues[0]),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert worker.returncode == 0, worker.stdout + worker.stderr
    return worker.stdout + worker.stderr


def test_a_worker_takes_a_new_ingest_job_before_the_waiting_renditions(
    rq_queue, renditions_queue, image_server
):
    BrandFactory(name="Acme", slug="acme")
    # Given two albums whose renditions jobs wait on the renditions queue
    waiting = [RunwayFactory() for _ in range(2)]
    for runway in waiting:
        stored_image(runway=runway)
        assert renditions_enqueue(kind="runway", record_id=runway.pk)
    # and then a new album arriving (its ingest job on the ingest queue)
    job = ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}",
        album=album_validate(runway_album([image_server.add("/1.jpg", jpeg("coffee"))])),
    )
    renditions = renditions_queue.get_job_ids()
    assert len(renditions) == 2 and rq_queue.get_job_ids() == [rq_job_id(job.pk)]

    # When a worker serving both queues, ingest first, runs them all
    run_worker(rq_queue.name, renditions_queue.name)

    # Then the new album's ingest job started first, before the renditions waiting before it;
    # its own renditions job came last
    job.refresh_from_db()
    assert job.status == "succeeded"
    ingest = Job.fetch(rq_job_id(job.pk), connection=rq_queue.connection)
    earlier = Job.fetch_many(renditions, connection=rq_queue.connection)
    assert all(ingest.started_at < r.started_at for r in earlier)
    for runway in [*waiting, job.runway]:
        assert set(runway.images.values_list("rendition_status", flat=True)) == {"done"}


def test_renditions_jobs_left_on_the_ingest_queue_still_run(rq_queue, renditions_queue):
    # Given a renditions job an older deployment put on the ingest queue, by either of the
    # names the task has had
    runways = [RunwayFactory() for _ in range(2)]
    for runway in runways:
        stored_image(runway=runway)
    rq_queue.enqueue(RUN_RENDITIONS, "runway", runways[0].pk)
    rq_queue.enqueue("ingest.tasks.run_renditions", "runway", runways[1].pk)

    run_worker(rq_queue.name, renditions_queue.name)

    for runway in runways:
        assert set(runway.images.values_list("rendition_status", flat=True)) == {"done"}


def test_a_renditions_job_steps_aside_for_an_ingest_job_that_arrives_meanwhile(
    rq_queue, renditions_queue, settings, monkeypatch
):
    from rq import SimpleWorker

    from catalog.services import renditions

    # Given an album of three images whose renditions job a worker starts, one image at a
    # time, and an ingest job arriving while it renders the first image
    settings.RENDITION_THREADS = 1
    runway = RunwayFactory()
    for _ in range(3):
        stored_image(runway=runway)
    assert renditions_enqueue(kind="runway", record_id=runway.pk)
    [first] = renditions_queue.get_jobs()
    arrived = []
    real_put = renditions.rendition_put

    def put(**kwargs):
        if not arrived:
            arrived.append(rq_queue.enqueue("os.getpid", description="a new album's job"))
        real_put(**kwargs)

    monkeypatch.setattr(renditions, "rendition_put", put)

    # When the worker serving both queues runs until they are empty
    worker = SimpleWorker([rq_queue, renditions_queue], connection=rq_queue.connection)
    worker.work(burst=True)

    # Then the renditions job stopped after the image in hand and put the rest of the album
    # back; the ingest job ran next, and then the rest, as a job of its own
    first.refresh()
    assert first.return_value() == (
        "done 1, skipped 0, original missing 0, failed 0; "
        "2 left to a new job, after the waiting ingest"
    )
    ingest = arrived[0]
    ingest.refresh()
    rest = [
        job
        for job in Job.fetch_many(
            renditions_queue.finished_job_registry.get_job_ids(),
            connection=rq_queue.connection,
        )
        if job.id != first.id
    ]
    assert len(rest) == 1 and rest[0].args == ("runway", runway.pk)
    assert first.ended_at <= ingest.started_at < rest[0].started_at
    assert rest[0].return_value() == "done 2, skipped 1, original missing 0, failed 0"
    assert set(runway.images.values_list("rendition_status", flat=True)) == {"done"}


def test_a_worker_serving_only_renditions_does_not_step_aside(rq_queue, renditions_queue, settings):
    from rq import SimpleWorker

    # Given an ingest job waiting that this worker does not serve
    settings.RENDITION_THREADS = 1
    runway = RunwayFactory()
    for _ in range(2):
        stored_image(runway=runway)
    rq_queue.enqueue("os.getpid")
    assert renditions_enqueue(kind="runway", record_id=runway.pk)
    [job] = renditions_queue.get_jobs()

    SimpleWorker([renditions_queue], connection=rq_queue.connection).work(burst=True)

    job.refresh()
    assert job.return_value() == "done 2, skipped 0, original missing 0, failed 0"
    assert rq_queue.count == 1
