"""The Standard Webhooks signature on both endpoints, signed by the standardwebhooks library as a
crawler signs, and the webhook-id nonce (a replay is refused and enqueues nothing)."""

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook

from ingest.models import IngestJob, UsedWebhookId
from tests.factories import IngestJobFactory
from tests.ingest.support import (
    SECRET_A,
    SECRET_B,
    SECRET_UNKNOWN,
    runway_album,
    signed_headers,
)
from tests.support import ROOT

pytestmark = pytest.mark.django_db

ALBUMS = "/api/ingest/v1/albums"


def post(client, body: str, headers: dict[str, str]):
    return client.post(ALBUMS, data=body, content_type="application/json", headers=headers)


@pytest.fixture
def body() -> str:
    return json.dumps(runway_album(["https://example.com/a/1.jpg"]))


def test_a_valid_signature_is_accepted(client, body, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, body, signed_headers(body))

    assert response.status_code == 202, response.json()
    assert IngestJob.objects.count() == 1
    assert len(callbacks) == 1  # the enqueue, after commit


def test_the_second_active_secret_is_accepted_too(client, body):
    response = post(client, body, signed_headers(body, secret=SECRET_B))

    assert response.status_code == 202


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_401_and_writes_nothing(client, body, missing):
    headers = signed_headers(body)
    del headers[missing]

    response = post(client, body, headers)

    assert response.status_code == 401
    assert missing in response.json()["detail"]
    assert response.headers["WWW-Authenticate"].startswith("Standard-Webhooks")
    assert not IngestJob.objects.exists()
    assert not UsedWebhookId.objects.exists()


def test_no_headers_at_all_is_401(client, body):
    response = post(client, body, {})

    assert response.status_code == 401


def test_a_wrong_secret_is_401(client, body):
    response = post(client, body, signed_headers(body, secret=SECRET_UNKNOWN))

    assert response.status_code == 401
    assert not IngestJob.objects.exists()


def test_a_retired_secret_stops_working(client, body, settings):
    settings.INGEST_SECRETS = [SECRET_B]  # rotation finished: A is gone

    response = post(client, body, signed_headers(body, secret=SECRET_A))

    assert response.status_code == 401


@pytest.mark.parametrize("skew", [timedelta(minutes=-6), timedelta(minutes=6)])
def test_a_timestamp_outside_the_tolerance_is_401(client, body, skew):
    headers = signed_headers(body, timestamp=datetime.now(tz=UTC) + skew)

    response = post(client, body, headers)

    assert response.status_code == 401
    assert "webhook-timestamp" in response.json()["detail"]
    assert not UsedWebhookId.objects.exists()


def test_a_timestamp_just_inside_the_tolerance_is_accepted(client, body):
    headers = signed_headers(body, timestamp=datetime.now(tz=UTC) - timedelta(minutes=4))

    assert post(client, body, headers).status_code == 202


def test_a_tampered_body_is_401(client, body):
    headers = signed_headers(body)
    tampered = body.replace("Acme", "Acne")

    response = post(client, tampered, headers)

    assert response.status_code == 401
    assert not IngestJob.objects.exists()


def test_a_tampered_id_or_timestamp_is_401(client, body):
    headers = signed_headers(body)

    other_id = post(client, body, {**headers, "webhook-id": "msg_other"})
    other_time = post(
        client, body, {**headers, "webhook-timestamp": str(int(headers["webhook-timestamp"]) - 1)}
    )

    assert other_id.status_code == 401
    assert other_time.status_code == 401


def test_a_replayed_id_is_409_and_enqueues_nothing(
    client, body, django_capture_on_commit_callbacks
):
    headers = signed_headers(body)
    first = post(client, body, headers)

    with django_capture_on_commit_callbacks() as callbacks:
        replay = post(client, body, headers)

    assert first.status_code == 202
    assert replay.status_code == 409
    assert replay.json()["job_id"] == first.json()["job_id"]
    assert IngestJob.objects.count() == 1
    assert callbacks == []


def test_a_replayed_id_with_a_new_body_is_409_too(client, body):
    headers = signed_headers(body, msg_id="msg_fixed")
    post(client, body, headers)
    other = json.dumps(runway_album(["https://example.com/a/2.jpg"]))

    replay = post(client, other, signed_headers(other, msg_id="msg_fixed"))

    assert replay.status_code == 409
    assert IngestJob.objects.count() == 1


def test_signatures_of_other_versions_are_ignored_and_a_v1_among_them_counts(client, body):
    headers = signed_headers(body)
    headers["webhook-signature"] = "v2,AAAA v1,not-base64!! " + headers["webhook-signature"]

    assert post(client, body, headers).status_code == 202


@pytest.mark.parametrize("value", ["1700000000.5", "yesterday", "-5", "１７"])
def test_a_timestamp_that_is_not_integer_seconds_is_401(client, body, value):
    headers = {**signed_headers(body), "webhook-timestamp": value}

    assert post(client, body, headers).status_code == 401


def test_an_oversized_webhook_id_is_401(client, body):
    headers = signed_headers(body, msg_id="m" * 256)

    assert post(client, body, headers).status_code == 401


def test_no_configured_secret_closes_ingest(client, body, settings):
    settings.INGEST_SECRETS = []

    response = post(client, body, signed_headers(body))

    assert response.status_code == 401
    assert "INGEST_SECRETS" in response.json()["detail"]


def test_the_status_endpoint_is_signed_the_same_way(crawler, client):
    job = IngestJobFactory()

    signed = crawler.status(job.pk)
    unsigned = client.get(f"/api/ingest/v1/jobs/{job.pk}")
    wrong = crawler.status(job.pk, secret=SECRET_UNKNOWN)

    assert signed.status_code == 200
    assert signed.json()["job_id"] == job.pk
    assert unsigned.status_code == 401
    assert wrong.status_code == 401


def test_a_status_read_signed_over_an_empty_body_is_refused(client):
    # The old way: one header set, valid for the whole tolerance, read every job.
    job = IngestJobFactory()

    response = client.get(f"/api/ingest/v1/jobs/{job.pk}", headers=signed_headers(""))

    assert response.status_code == 401
    assert response.json()["detail"] == (
        "No valid signature for any active secret. "
        f"A GET signs its path (/api/ingest/v1/jobs/{job.pk}), not an empty body."
    )


def test_a_status_signature_reads_only_its_own_job(client):
    first, _, third = IngestJobFactory.create_batch(3)
    headers = signed_headers(f"/api/ingest/v1/jobs/{first.pk}")

    own = client.get(f"/api/ingest/v1/jobs/{first.pk}", headers=headers)
    other = client.get(f"/api/ingest/v1/jobs/{third.pk}", headers=headers)

    assert own.status_code == 200
    assert own.json()["job_id"] == first.pk
    assert other.status_code == 401
    assert "report" not in other.json()


def test_a_status_signature_does_not_authorise_a_post_body(client):
    # Signed over the path of a GET; replayed with a body as a POST.
    headers = signed_headers("/api/ingest/v1/jobs/1")
    body = json.dumps(runway_album(["https://example.com/a/1.jpg"]))

    assert post(client, body, headers).status_code == 401


def test_a_submission_signature_does_not_read_a_job(client, body):
    # Signed over a POST's body; replayed as a status read.
    job = IngestJobFactory()

    response = client.get(f"/api/ingest/v1/jobs/{job.pk}", headers=signed_headers(body))

    assert response.status_code == 401


# --- docs/crawlers.md signs as the server checks -------------------------------------------

GUIDE = ROOT / "docs" / "crawlers.md"


def guide_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), re.S)


def test_the_guides_standard_library_signing_is_accepted(client, body):
    # given the guide's sign() as a crawler copies it, run by a Python of its own
    sign = guide_blocks("python")[0]
    printed = subprocess.run(  # noqa: S603 - the guide's own code, our own interpreter
        [sys.executable, "-c", f"{sign}\nimport json, sys\nprint(json.dumps(sign(*sys.argv[1:])))"]
        + [SECRET_A, body],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    response = post(client, body, json.loads(printed.stdout))

    assert response.status_code == 202, response.json()


def test_the_guides_signed_calls_carry_the_signatures_the_library_computes():
    secret = re.search(r"secret `(whsec_\w+)`", GUIDE.read_text())[1]
    calls = guide_blocks("http")
    assert len(calls) == 2

    for call in calls:
        head, _, body = call.partition("\n\n")
        method, path, _ = head.splitlines()[0].split(" ")
        headers = dict(line.split(": ", 1) for line in head.splitlines()[1:])
        sent_at = datetime.fromtimestamp(int(headers["webhook-timestamp"]), tz=UTC)
        content = body.rstrip("\n") if method == "POST" else path  # a GET signs its path
        expected = Webhook(secret).sign(headers["webhook-id"], sent_at, content)
        assert headers["webhook-signature"] == expected, head.splitlines()[0]
        assert int(headers.get("Content-Length", 0)) == len(body.rstrip("\n").encode())
