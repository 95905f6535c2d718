"""The endpoints' contract: 202 with the job's id, status and status URL; the status document;
400 with field messages and nothing written."""

import json

import psycopg
import pytest
from django.db import connection

from ingest import queueing
from ingest.models import IngestJob, UsedWebhookId
from ingest.queueing import rq_job_id
from tests.factories import IngestJobFactory, RunwayFactory
from tests.ingest.support import runway_album, signed_headers, street_album

pytestmark = pytest.mark.django_db


def test_submit_answers_202_with_the_job_and_its_status_url(crawler):
    album = runway_album(["https://example.com/a/1.jpg", "https://example.com/a/1b.jpg"])

    response = crawler.post(album)

    assert response.status_code == 202
    job = IngestJob.objects.get()
    assert response.json() == {
        "job_id": job.pk,
        "status": "queued",
        "status_url": f"/api/ingest/v1/jobs/{job.pk}",
    }
    assert response.headers["Location"] == f"/api/ingest/v1/jobs/{job.pk}"
    assert job.kind == "runway"
    assert job.source == "vogue"
    assert job.source_url == album["source_url"]
    assert job.status == IngestJob.Status.QUEUED
    assert len(job.payload_checksum) == 64
    assert job.payload["images"][1] == {"url": "https://example.com/a/1b.jpg", "look_index": 2}


def test_submit_stores_the_webhook_id_as_used(crawler):
    response = crawler.post(street_album(["https://example.com/s/1.jpg"]), msg_id="msg_once")

    assert response.status_code == 202
    assert UsedWebhookId.objects.filter(webhook_id="msg_once").exists()
    assert IngestJob.objects.get().webhook_id == "msg_once"


def test_an_invalid_album_is_400_with_field_messages_and_writes_nothing(crawler):
    album = runway_album(["ftp://example.com/a/1.jpg"], year=1200)
    del album["brand"]

    response = crawler.post(album)

    assert response.status_code == 400
    errors = response.json()
    assert set(errors) == {"brand", "year", "images"}
    assert "http(s)" in errors["images"]["0"]["url"][0]
    assert not IngestJob.objects.exists()
    assert not UsedWebhookId.objects.exists()


@pytest.mark.parametrize("kind", [["runway"], {"runway": True}])
def test_a_kind_that_is_not_a_string_is_400(crawler, kind):
    response = crawler.post({**runway_album(["https://example.com/a/1.jpg"]), "kind": kind})

    assert response.status_code == 400
    assert "kind" in response.json()
    assert not IngestJob.objects.exists()


@pytest.mark.parametrize("opening, closing", [("[", "]"), ('{"a":', "}")])
def test_json_nested_past_the_recursion_limit_is_400(crawler, opening, closing):
    depth = 5_000
    body = '{"kind": "runway", "images": ' + opening * depth + "1" + closing * depth + "}"

    response = crawler.post(body)

    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]
    assert not IngestJob.objects.exists()


def test_a_field_name_with_a_lone_surrogate_is_400_naming_it(crawler):
    album = runway_album(["https://example.com/a/1.jpg"])
    album["\udc80"] = 1
    album["images"][0]["\ud800x"] = 1

    response = crawler.post(album)

    assert response.status_code == 400
    errors = json.loads(response.content)
    assert "\udc80" in errors
    assert "\ud800x" in errors["images"]["0"]
    assert not IngestJob.objects.exists()


def test_malformed_json_is_400(crawler):
    response = crawler.post('{"kind": "runway", ')

    assert response.status_code == 400
    assert not IngestJob.objects.exists()


def test_a_body_over_the_limit_is_400_and_writes_nothing(crawler, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000
    album = runway_album([f"https://example.com/a/{n}.jpg" for n in range(100)])

    response = crawler.post(album)

    assert response.status_code == 400
    assert "body" in response.json()
    assert not IngestJob.objects.exists()


def test_the_status_of_a_queued_job_has_the_full_shape(crawler):
    job = IngestJobFactory(
        payload={"kind": "runway", "images": [{"url": "https://example.com/a/1.jpg"}]}
    )

    response = crawler.status(job.pk)

    assert response.status_code == 200
    assert response.json() == {
        "job_id": job.pk,
        "kind": "runway",
        "status": "queued",
        "reason": "",
        "error": "",
        "record_id": None,
        "attempts": 0,
        "report": {
            "album_images": 1,
            "counts": {"received": 0, "stored": 0, "refused": 0, "repeated": 0, "duplicates": 0},
            "issues": [],
            "issues_truncated": False,
        },
    }


def test_the_status_of_a_finished_job_shows_its_record_and_report(crawler):
    runway = RunwayFactory()
    report = {
        "album_images": 2,
        "counts": {"received": 2, "stored": 1, "refused": 1, "repeated": 0, "duplicates": 0},
        "issues": [{"index": 1, "url": "https://example.com/a/2.jpg", "reason": "HTTP 404"}],
        "issues_truncated": False,
    }
    job = IngestJobFactory(status="succeeded", runway=runway, attempts=1, report=report)

    body = crawler.status(job.pk).json()

    assert body["record_id"] == runway.pk
    assert body["status"] == "succeeded"
    assert body["report"] == report


def test_the_status_gives_the_counts_in_the_documented_order(crawler):
    # Given a report whose counts were stored in another order (jsonb keeps none of its own).
    report = {
        "album_images": 3,
        "counts": {"duplicates": 1, "repeated": 1, "refused": 0, "stored": 2, "received": 3},
        "issues": [],
        "issues_truncated": False,
    }
    job = IngestJobFactory(status="succeeded", attempts=1, report=report)

    body = crawler.status(job.pk).json()

    assert list(body["report"]["counts"].items()) == [
        ("received", 3),
        ("stored", 2),
        ("refused", 0),
        ("repeated", 1),
        ("duplicates", 1),
    ]


def test_the_status_of_an_unknown_job_is_404(crawler):
    assert crawler.status(999_999).status_code == 404


def test_the_openapi_schema_describes_the_ingest_endpoints(client):
    response = client.get("/api/schema/", headers={"Accept": "application/json"})

    assert response.status_code == 200
    schema = json.loads(response.content)
    assert "/api/ingest/v1/albums" in schema["paths"]
    assert "/api/ingest/v1/jobs/{id}" in schema["paths"]
    assert "webhookSignature" in schema["components"]["securitySchemes"]
    assert "Album" in schema["components"]["schemas"]


def test_signed_requests_need_no_csrf_token(client):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    body = json.dumps(runway_album(["https://example.com/a/1.jpg"]))

    response = strict.post(
        "/api/ingest/v1/albums",
        data=body,
        content_type="application/json",
        headers=signed_headers(body),
    )

    assert response.status_code == 202


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_database_drop_after_the_commit_still_answers_202(crawler, rq_queue, monkeypatch):
    # Given a database connection that drops right after the job row committed, before the
    # enqueue records enqueued_at (a failover, a restart, a proxy cutting idle connections).
    real_enqueue = queueing.ingest_job_enqueue

    def drop_then_enqueue(*, job_id: int) -> bool:
        with psycopg.connect(**libpq(), autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(%s)", [connection.connection.info.backend_pid]
            )
        return real_enqueue(job_id=job_id)

    monkeypatch.setattr(queueing, "ingest_job_enqueue", drop_then_enqueue)

    response = crawler.post(runway_album(["https://example.com/1.jpg"]))

    # Then the crawler is told the truth: accepted. The job is on the queue; only its
    # enqueued_at is missing, which makes reconcile check on it later.
    assert response.status_code == 202, response.content
    connection.close()  # what the end of a real request does with the broken connection
    job = IngestJob.objects.get(pk=response.json()["job_id"])
    assert (job.status, job.enqueued_at) == ("queued", None)
    assert rq_queue.get_job_ids() == [rq_job_id(job.pk)]


def libpq() -> dict:
    db = connection.settings_dict
    return {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "dbname": db["NAME"]}
