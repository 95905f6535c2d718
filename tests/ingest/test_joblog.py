"""Every log line of a job carries its ingest job id and rq job id, and every job ends with
one line: outcome, reason, record, counts and durations."""

import logging
import uuid

import pytest
from rq import SimpleWorker

from config.logs import RequestIdFilter
from ingest import joblog, thread_pool
from ingest.joblog import JobFilter
from ingest.queueing import rq_job_id
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from ingest.worker import JobIdsInLogs
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, runway_album
from tests.support import json_log_lines

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def json_lines():
    with json_log_lines() as lines:
        yield lines


@pytest.fixture(autouse=True)
def _brand():
    BrandFactory(name="Acme", slug="acme")


def accept(urls):
    return ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(runway_album(urls))
    )


def ended(lines):
    return [line for line in lines if line["name"] == "ingest.jobs"]


class LoggingWorker(JobIdsInLogs, SimpleWorker):
    """IngestWorker's log context on rq's in-process worker (the deployment's forks)."""


def test_rqs_own_lines_about_a_job_carry_its_ids(rq_queue, renditions_queue, image_server):
    job = accept([image_server.add("/1.jpg", jpeg("astronaut", size=256))])
    records: list[logging.LogRecord] = []
    capture = logging.Handler()
    capture.emit = records.append  # type: ignore[method-assign]
    capture.addFilter(RequestIdFilter())
    capture.addFilter(JobFilter())  # as on the console handler rq's loggers write to
    rq_logger = logging.getLogger("rq.worker")
    rq_logger.addHandler(capture)
    try:
        LoggingWorker([rq_queue, renditions_queue], connection=rq_queue.connection).work(burst=True)
    finally:
        rq_logger.removeHandler(capture)

    # The ingest job, then the renditions job it enqueued (not an ingest job: no ingest id).
    ingest, renditions = [record for record in records if "Job OK" in record.getMessage()]
    assert (ingest.ingest_job_id, ingest.rq_job_id) == (job.pk, rq_job_id(job.pk))
    assert renditions.ingest_job_id is None
    assert renditions.rq_job_id and renditions.rq_job_id in renditions.getMessage()


def test_an_rq_job_ends_with_one_summary_line_carrying_both_ids(rq_queue, image_server, json_lines):
    urls = [
        image_server.add("/1.jpg", jpeg("astronaut", size=256)),
        image_server.url("/missing.jpg"),
    ]
    job = accept(urls)

    SimpleWorker([rq_queue], connection=rq_queue.connection).work(burst=True)

    [line] = ended(json_lines())
    job.refresh_from_db()
    assert line["ingest_job_id"] == job.pk
    assert line["rq_job_id"] == rq_job_id(job.pk)
    assert (line["outcome"], line["status"], line["reason"]) == ("succeeded", "succeeded", "")
    assert line["record_id"] == job.runway_id
    assert line["counts"] == {
        "received": 2,
        "stored": 1,
        "refused": 1,
        "repeated": 0,
        "duplicates": 0,
    }
    durations = line["durations"]
    assert durations["queue_wait"] >= 0
    assert 0 < durations["download"] <= durations["total"]
    assert 0 < durations["write"] <= durations["total"]


def test_a_skipped_job_says_why_and_never_downloaded(image_server, json_lines):
    url = image_server.add("/1.jpg", jpeg("coffee", size=256))
    first = accept([url])
    thread_pool.wait_idle()
    again = ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}",
        album=album_validate({**first.payload, "source_url": first.payload["source_url"]}),
    )
    thread_pool.wait_idle()

    lines = ended(json_lines())
    assert [line["ingest_job_id"] for line in lines] == [first.pk, again.pk]
    skipped = lines[1]
    assert (skipped["outcome"], skipped["reason"]) == ("skipped", "exists_pending")
    assert skipped["record_id"] == lines[0]["record_id"]
    assert skipped["rq_job_id"] is None  # in-process: no rq job
    assert skipped["durations"]["download"] is None


def test_lines_logged_during_a_job_carry_its_ids(json_lines):
    def work():
        logging.getLogger("ingest.pipeline").warning("something about the job")
        return "failed"

    joblog.run_logged(999_999, work, rq_job_id="ingest-999999")
    logging.getLogger("ingest.pipeline").warning("after the job")

    inside, summary, after = json_lines()
    assert (inside["ingest_job_id"], inside["rq_job_id"]) == (999_999, "ingest-999999")
    assert summary["ingest_job_id"] == 999_999
    assert (after["ingest_job_id"], after["rq_job_id"]) == (None, None)


def test_an_execution_that_raises_for_a_retry_still_ends_with_its_line(json_lines):
    def work():
        raise ConnectionError("database gone")

    with pytest.raises(ConnectionError):
        joblog.run_logged(999_998, work)

    [line] = ended(json_lines())
    assert line["outcome"] == "retrying"
