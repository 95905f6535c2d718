"""/metrics: Prometheus text behind a bearer token, numbers computed from the database and
Redis at scrape time, and API request counters summed over every gunicorn worker."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rq import Queue

from config.metrics import refusal_class
from tests.factories import IngestJobFactory, RunwayFactory, RunwayImageFactory
from tests.ingest.support import worker_env

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "metrics-token-for-tests"  # noqa: S105


@pytest.fixture(autouse=True)
def _token(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.REDIS_URL = ""


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    return parse(response.content.decode())


def parse(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_are_404_when_no_token_is_configured(client, settings):
    settings.METRICS_TOKEN = ""

    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x"])
def test_metrics_need_the_bearer_token(client, header):
    headers = {} if header is None else {"HTTP_AUTHORIZATION": header}

    response = client.get("/metrics", **headers)

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.django_db
def test_job_metrics_are_computed_from_the_database(client):
    now = timezone.now()

    def finished(status, reason="", *, took, waited, counts=None, issues=()):
        IngestJobFactory(
            status=status,
            reason=reason,
            enqueued_at=now - timedelta(seconds=took + waited),
            started_at=now - timedelta(seconds=took),
            finished_at=now,
            report={"counts": counts or {}, "issues": list(issues)},
        )

    finished(
        "succeeded",
        took=4,
        waited=0.5,
        counts={"received": 4, "stored": 2, "refused": 2, "repeated": 0, "duplicates": 1},
        issues=[
            {"index": 1, "url": "u", "reason": "HTTP 404"},
            {"index": 2, "url": "u", "reason": "not a JPEG, PNG, WebP or GIF image"},
            {"index": 3, "url": "u", "reason": "near-duplicate of runway image 8 (distance 2)"},
        ],
    )
    finished("failed", "unknown_brand", took=0.2, waited=40)
    finished("failed", "unknown_brand", took=0.3, waited=3)
    IngestJobFactory(status="queued")

    metrics = scrape(client)

    assert metrics[("archive_ingest_jobs", (("reason", ""), ("status", "succeeded")))] == 1
    assert (
        metrics[("archive_ingest_jobs", (("reason", "unknown_brand"), ("status", "failed")))] == 2
    )
    assert metrics[("archive_ingest_jobs", (("reason", ""), ("status", "queued")))] == 1
    duration = "archive_ingest_job_duration_seconds"
    assert metrics[(f"{duration}_bucket", (("le", "1.0"),))] == 2
    assert metrics[(f"{duration}_bucket", (("le", "5.0"),))] == 3
    assert metrics[(f"{duration}_count", ())] == 3
    assert metrics[(f"{duration}_sum", ())] == pytest.approx(4.5, abs=0.01)
    wait = "archive_ingest_job_queue_wait_seconds"
    assert metrics[(f"{wait}_bucket", (("le", "1.0"),))] == 1
    assert metrics[(f"{wait}_bucket", (("le", "5.0"),))] == 2
    assert metrics[(f"{wait}_bucket", (("le", "+Inf"),))] == 3
    assert metrics[("archive_ingest_images", (("outcome", "stored"),))] == 2
    assert metrics[("archive_ingest_images", (("outcome", "refused"),))] == 2
    assert metrics[("archive_ingest_images", (("outcome", "duplicates"),))] == 1
    refusals = {
        labels[0][1]: value
        for (name, labels), value in metrics.items()
        if name == "archive_ingest_image_refusals"
    }
    assert refusals == {"http_404": 1, "not_an_image": 1}


@pytest.mark.django_db
def test_near_duplicate_flags_count_live_images(client):
    runway = RunwayFactory()
    RunwayImageFactory.create_batch(2, runway=runway, is_duplicate=True)
    RunwayImageFactory(runway=runway, is_duplicate=True, deleted_at=timezone.now())
    RunwayImageFactory(runway=runway)

    metrics = scrape(client)

    assert metrics[("archive_near_duplicate_images", (("kind", "runway"),))] == 2
    assert metrics[("archive_near_duplicate_images", (("kind", "street"),))] == 0


@pytest.mark.django_db
def test_queue_depth_per_rq_queue(client, rq_queue):
    # rq's own queue: django-rq's would wait for a commit this test never makes
    queue = Queue(rq_queue.name, connection=rq_queue.connection)
    for _ in range(3):
        queue.enqueue("ingest.tasks.reconcile")

    metrics = scrape(client)

    assert metrics[("archive_rq_jobs", (("queue", rq_queue.name), ("state", "queued")))] == 3
    assert metrics[("archive_rq_jobs", (("queue", rq_queue.name), ("state", "failed")))] == 0
    assert metrics[("archive_redis_up", ())] == 1


@pytest.mark.django_db
def test_length_and_oldest_job_age_per_queue_renditions_included(
    client, rq_queue, renditions_queue
):
    # Given renditions jobs enqueued an hour and a minute ago (the rest of an album put back
    # at the head is the newer one), and nothing waiting on the ingest queue
    queue = Queue(renditions_queue.name, connection=rq_queue.connection)
    old, rest = (queue.enqueue("os.getpid") for _ in range(2))
    for job, ago in ((old, timedelta(hours=1)), (rest, timedelta(minutes=1))):
        job.enqueued_at = timezone.now() - ago
        job.save()
    queue.remove(rest)
    queue.push_job_id(rest.id, at_front=True)

    metrics = scrape(client)

    queued = ("archive_rq_jobs", (("queue", renditions_queue.name), ("state", "queued")))
    assert metrics[queued] == 2
    age = metrics[("archive_rq_oldest_job_age_seconds", (("queue", renditions_queue.name),))]
    assert 3600 <= age < 3600 + 600
    assert metrics[("archive_rq_oldest_job_age_seconds", (("queue", rq_queue.name),))] == 0


@pytest.mark.django_db
def test_public_api_requests_are_counted_by_view_and_status(client):
    def count(view, status):
        return scrape(client).get(
            ("archive_api_requests_total", (("status", status), ("view", view))), 0
        )

    before = count("public-runway-list", "200"), count("public-runway-detail", "404")

    client.get("/api/v1/runways/")
    client.get("/api/v1/runways/")
    client.get("/api/v1/runways/999999/")
    client.get("/healthz")  # not the public API: not counted

    assert count("public-runway-list", "200") == before[0] + 2
    assert count("public-runway-detail", "404") == before[1] + 1


@pytest.mark.parametrize(
    ("reason", "label"),
    [
        ("HTTP 503", "http_503"),
        ("read timeout", "timeout"),
        ("deadline of 30s exceeded", "timeout"),
        ("connection refused", "connection"),
        ("body larger than 26214400 bytes", "too_large"),
        ("too many pixels (decompression bomb)", "too_large"),
        ("not downloaded: the job's download budget of 600s ran out", "download_budget"),
        ("too many redirects", "redirects"),
        ("something new", "other"),
        ("same bytes as images[0]; stored once", None),
        ("near-duplicate of images[3] of this album (distance 1)", None),
        ("near-duplicate of runway image 812 (distance 2)", None),
    ],
)
def test_refusal_reasons_fall_into_a_few_labels(reason, label):
    assert refusal_class(reason) == label


# --- Several gunicorn workers -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)  # noqa: S310 - our own local server
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_request_counters_add_up_across_gunicorn_workers(tmp_path, rq_queue):
    # given: gunicorn with two workers, as the container runs it
    RunwayFactory(published=True)
    port = _free_port()
    multiproc = tmp_path / "prometheus"
    env = {
        **worker_env(rq_queue.name),
        "WEB_CONCURRENCY": "2",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
        "METRICS_TOKEN": TOKEN,
        "SECURE_SSL_REDIRECT": "false",
        "PUBLIC_API_THROTTLE_RATE": "100000/min",
    }
    server = subprocess.Popen(  # noqa: S603 - gunicorn from our venv, fixed arguments
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(f"{base}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)  # polling a starting server

        # when: API requests, 8 at a time, in rounds of 40 until both workers have served
        # some (the first /healthz answer says one worker is up, not both; a worker still
        # booting serves nothing of the first round)
        sent = 0
        deadline = time.monotonic() + 60
        while True:
            with ThreadPoolExecutor(max_workers=8) as pool:
                statuses = list(pool.map(lambda _: _get(f"{base}/api/v1/runways/")[0], range(40)))
            assert statuses == [200] * 40
            sent += 40
            counting = {path.name for path in multiproc.glob("counter_*.db")}
            if len(counting) == 2:
                break
            assert time.monotonic() < deadline, f"one worker served all {sent} requests"

        # then: every scrape, whichever worker answers it, reports all of them
        for _ in range(6):
            status, text = _get(f"{base}/metrics", TOKEN)
            assert status == 200
            metrics = parse(text)
            key = (
                "archive_api_requests_total",
                (("status", "200"), ("view", "public-runway-list")),
            )
            assert metrics[key] == sent
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        _, stderr = server.communicate(timeout=30)
    assert server.returncode == 0, stderr.decode()[-2000:]
