"""The issue's "done when": a crawler signing with the standardwebhooks library pushes runway and
street albums over HTTP to a running server, a real worker process (rqworker) runs the jobs on
Redis and PostgreSQL, and the crawler sees each job end as docs/crawlers.md says."""

import json
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
import requests
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

from catalog.models import Runway, StreetSnap
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, runway_album, signed_headers, street_album, worker_env

ROOT = Path(__file__).resolve().parents[2]


class HttpCrawler:
    def __init__(self, base: str) -> None:
        self.base = base

    def post(self, album: dict) -> requests.Response:
        body = json.dumps(album)
        return requests.post(
            f"{self.base}/api/ingest/v1/albums",
            data=body,
            headers={**signed_headers(body), "Content-Type": "application/json"},
            timeout=30,
        )

    def status(self, status_url: str) -> dict:
        response = requests.get(
            self.base + status_url, headers=signed_headers(status_url), timeout=30
        )
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture
def server():
    """The project's WSGI application on a real HTTP server, in threads of this process.

    Started here rather than with pytest-django's session-wide live_server, whose middleware is
    built before the per-test settings (plain HTTP, the test Redis queue) apply.
    """
    httpd = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
    httpd.set_app(WSGIHandler())
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def run_worker_until_idle(queue_name: str) -> str:
    result = subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [
            sys.executable,
            "manage.py",
            "rqworker",
            queue_name,
            "--burst",
            "--with-scheduler",
            "--name",
            f"{queue_name}-{uuid.uuid4().hex[:6]}",
        ],
        cwd=ROOT,
        env=worker_env(queue_name),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("ingest_settings")
def test_a_crawler_pushes_albums_to_a_running_server_and_a_worker(rq_queue, image_server, server):
    BrandFactory(name="Acme", slug="acme")
    crawler = HttpCrawler(server)
    photos = [
        image_server.add("/1.jpg", jpeg("astronaut", size=320)),
        image_server.add("/1b.jpg", jpeg("astronaut", quality=70, size=240)),
        image_server.add("/2.jpg", jpeg("coffee", size=320)),
        image_server.add("/s1.jpg", jpeg("chelsea", size=320)),
        image_server.add("/s1-detail.jpg", jpeg("rocket", size=320)),
    ]
    runway = runway_album(photos[:3])
    street = street_album(photos[3:])
    street["images"][1].update(is_detail=True, parent=0)
    hostile = runway_album(
        [image_server.add("/page.jpg", b"<html></html>"), image_server.url("/gone.jpg")],
        season_code="SS25",
    )
    unknown_brand = runway_album(photos[:1], brand="Nobody", season_code="PF25")

    # The crawler pushes; the server answers at once.
    accepted = {
        name: crawler.post(album)
        for name, album in {
            "runway": runway,
            "street": street,
            "hostile": hostile,
            "unknown brand": unknown_brand,
        }.items()
    }
    for name, response in accepted.items():
        assert response.status_code == 202, (name, response.text)
        assert response.json()["status"] == "queued"
    assert crawler.status(accepted["runway"].json()["status_url"])["status"] == "queued"

    # A worker runs the queue.
    log = run_worker_until_idle(rq_queue.name)

    jobs = {name: crawler.status(r.json()["status_url"]) for name, r in accepted.items()}
    assert jobs["runway"]["status"] == "succeeded", (jobs["runway"], log)
    assert jobs["runway"]["record_id"] == Runway.objects.get(season_code="FW24").pk
    assert jobs["runway"]["report"]["counts"] == {
        "received": 3,
        "stored": 3,
        "refused": 0,
        "repeated": 0,
        "duplicates": 1,
    }
    assert jobs["street"]["status"] == "succeeded"
    snap = StreetSnap.objects.get()
    assert snap.images.filter(is_detail=True).count() == 1
    assert (jobs["hostile"]["status"], jobs["hostile"]["reason"]) == ("failed", "no_images")
    assert {i["reason"] for i in jobs["hostile"]["report"]["issues"]} == {
        "not a JPEG, PNG, WebP or GIF image",
        "HTTP 404",
    }
    assert (jobs["unknown brand"]["status"], jobs["unknown brand"]["attempts"]) == ("failed", 1)
    assert Runway.objects.count() == 1  # nothing half-written for the failed ones

    # The crawler re-crawls the same article: skipped, nothing new in front of editors.
    again = crawler.post(runway)
    run_worker_until_idle(rq_queue.name)
    repeat = crawler.status(again.json()["status_url"])
    assert (repeat["status"], repeat["reason"]) == ("skipped", "exists_pending")
    assert repeat["record_id"] == jobs["runway"]["record_id"]
