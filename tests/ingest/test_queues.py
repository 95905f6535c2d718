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
