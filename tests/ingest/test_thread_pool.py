"""The embedded default: with no REDIS_URL the same pipeline runs on ingest.thread_pool's
background thread after the request's transaction commits, and the status endpoint tells the
truth throughout."""

import threading

import pytest

from catalog.models import Runway
from ingest import downloads, thread_pool
from ingest.models import IngestJob
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, runway_album, street_album

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _embedded(settings):
    assert settings.REDIS_URL == ""
    BrandFactory(name="Acme", slug="acme")
    yield
    assert thread_pool.wait_idle(timeout=60)


def test_a_submitted_album_is_ingested_in_process(crawler, image_server):
    urls = [
        image_server.add("/1.jpg", jpeg("astronaut", size=256)),
        image_server.add("/2.jpg", jpeg("coffee", size=256)),
    ]

    accepted = crawler.post(runway_album(urls))
    assert thread_pool.wait_idle(timeout=60)
    status = crawler.status(accepted.json()["job_id"])

    assert accepted.status_code == 202
    body = status.json()
    assert body["status"] == "succeeded", body
    assert body["record_id"] == Runway.objects.get().pk
    assert body["attempts"] == 1
    assert body["report"]["counts"]["stored"] == 2


def test_the_request_answers_before_the_job_runs_and_the_status_says_so(
    crawler, image_server, monkeypatch
):
    url = image_server.add("/1.jpg", jpeg("astronaut", size=256))
    started, proceed = threading.Event(), threading.Event()
    real_download = downloads.download_all

    def held_download(urls, **kwargs):
        started.set()
        assert proceed.wait(timeout=60)
        return real_download(urls, **kwargs)

    monkeypatch.setattr(downloads, "download_all", held_download)

    accepted = crawler.post(street_album([url]))
    job_id = accepted.json()["job_id"]
    assert started.wait(timeout=60)
    while_running = crawler.status(job_id).json()
    proceed.set()
    assert thread_pool.wait_idle(timeout=60)
    finished = crawler.status(job_id).json()

    assert accepted.status_code == 202
    assert accepted.json()["status"] == "queued"
    assert while_running["status"] == "running"
    assert finished["status"] == "succeeded"


def test_a_transient_error_is_final_in_process(crawler, image_server):
    # No scheduler to retry with: the run is the last attempt; survivors are kept.
    good = image_server.add("/1.jpg", jpeg("astronaut", size=256))
    down = image_server.add("/2.jpg", b"", failures_first=(503,) * 5)

    job_id = crawler.post(runway_album([good, down])).json()["job_id"]
    assert thread_pool.wait_idle(timeout=60)

    job = IngestJob.objects.get(pk=job_id)
    assert job.status == "succeeded"
    assert job.report["counts"]["refused"] == 1
