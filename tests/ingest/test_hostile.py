"""Hostile inputs served by a local HTTP server: each image is refused with a reason, no request
reaches a refused address, the job goes on with the images that survive, and the counts add up."""

import pytest

from catalog.models import Runway, RunwayImage
from ingest import pipeline
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, png_bomb, runway_album

pytestmark = pytest.mark.django_db

MAX_IMAGE_BYTES = 60_000


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.INGEST_MAX_IMAGE_BYTES = MAX_IMAGE_BYTES
    settings.INGEST_IMAGE_DEADLINE = 1.0
    settings.INGEST_READ_TIMEOUT = 0.8
    BrandFactory(name="Acme", slug="acme")


@pytest.fixture
def hostile(image_server):
    """name -> (url, the reason it must be refused with)."""
    good = jpeg("astronaut", size=200)
    assert len(good) < MAX_IMAGE_BYTES
    big = jpeg("astronaut", quality=98)
    assert len(big) > MAX_IMAGE_BYTES
    server = image_server
    server.add("/own.jpg", jpeg("coffee", size=200))
    return {
        "redirect to a private address": (
            server.add("/to-private", status=302, location="http://10.1.2.3/a.jpg"),
            "redirect to a disallowed address (address 10.1.2.3 is private; 10.1.2.3 is not in",
        ),
        "redirect to the cloud metadata address": (
            server.add(
                "/to-metadata", status=301, location="http://169.254.169.254/latest/meta-data/"
            ),
            "a cloud metadata address",
        ),
        "redirect to loopback by name": (
            server.add("/to-localhost", status=307, location=server.url("/own.jpg", "localhost")),
            "address 127.0.0.1 is loopback",
        ),
        "a host name resolving to 127.0.0.1": (
            server.url("/own.jpg", host="localhost"),
            "address 127.0.0.1 is loopback",
        ),
        "a decompression bomb": (
            server.add("/bomb.png", png_bomb(), content_type="image/png"),
            "too many pixels",
        ),
        "a truncated JPEG": (server.add("/cut.jpg", good[: len(good) // 2]), "truncated JPEG"),
        "HTML served as image/jpeg": (
            server.add("/page.jpg", b"<!doctype html><html><body>hi</body></html>"),
            "not a JPEG, PNG, WebP or GIF image",
        ),
        "a body larger than the cap": (
            server.add("/big.jpg", big),
            f"body larger than {MAX_IMAGE_BYTES} bytes",
        ),
        "a server trickling past the deadline": (
            server.add("/slow.jpg", good, trickle_interval=0.05),
            "deadline of 1s exceeded",
        ),
        "a 404": (server.url("/gone.jpg"), "HTTP 404"),
        "a 500 (on the last attempt)": (
            server.add("/error.jpg", good, failures_first=(500,) * 5),
            "HTTP 500",
        ),
    }


def run_album(urls: list[str]):
    job = ingest_job_accept(
        webhook_id=f"msg-{len(urls)}-{urls[0]}", album=album_validate(runway_album(urls))
    )
    pipeline.run_job(job.pk, final_attempt=True)
    job.refresh_from_db()
    return job


def test_every_hostile_image_is_refused_and_the_job_goes_on(hostile, image_server):
    good_url = image_server.add("/good.jpg", jpeg("astronaut", size=200))
    names = list(hostile)
    urls = [good_url] + [hostile[name][0] for name in names]

    job = run_album(urls)

    assert job.status == "succeeded", job.error
    counts = job.report["counts"]
    assert counts == {
        "received": len(urls),
        "stored": 1,
        "refused": len(names),
        "repeated": 0,
        "duplicates": 0,
    }
    reasons = {issue["index"]: issue["reason"] for issue in job.report["issues"]}
    for position, name in enumerate(names, start=1):
        assert hostile[name][1] in reasons[position], name
    assert RunwayImage.objects.get().original_url == good_url
    # No request reached our server under a name that is not allowed.
    assert image_server.hits["/own.jpg"] == 0


@pytest.mark.parametrize(
    "name",
    [
        "redirect to a private address",
        "a host name resolving to 127.0.0.1",
        "a decompression bomb",
        "a truncated JPEG",
        "HTML served as image/jpeg",
        "a body larger than the cap",
        "a 404",
    ],
)
def test_an_album_of_only_a_hostile_image_fails_and_writes_nothing(hostile, name):
    url, reason = hostile[name]

    job = run_album([url])

    assert (job.status, job.reason) == ("failed", "no_images")
    assert reason in job.report["issues"][0]["reason"]
    assert not Runway.objects.exists()


def test_a_host_listed_as_allowed_is_fetched(settings, image_server):
    settings.INGEST_FETCH_ALLOWED_HOSTS = ["localhost"]
    url = image_server.add("/own.jpg", jpeg("coffee", size=200))

    job = run_album([url.replace("127.0.0.1", "localhost")])

    assert job.status == "succeeded"


def test_a_non_http_url_in_a_stored_payload_is_still_refused(image_server):
    # The serializer refuses it at the door; the fetcher refuses it again should a payload
    # reach the worker another way (an old row, a bug).
    good = image_server.add("/good.jpg", jpeg("astronaut", size=200))
    job = ingest_job_accept(
        webhook_id="msg-file-url", album=album_validate(runway_album([good, good + "?2"]))
    )
    job.payload["images"][1]["url"] = "file:///etc/passwd"
    job.save(update_fields=["payload"])

    pipeline.run_job(job.pk, final_attempt=True)

    job.refresh_from_db()
    assert job.status == "succeeded"
    assert "scheme file is not allowed" in job.report["issues"][0]["reason"]


def test_malformed_redirects_are_refused_images_and_the_job_goes_on(image_server):
    # Each escaped the fetcher as a plain exception once (ValueError from urljoin, UnicodeError
    # from getaddrinfo's IDNA step) and failed the whole job as an internal error.
    server = image_server
    good_url = server.add("/good.jpg", jpeg("astronaut", size=200))
    malformed = {
        "http://[::1/a.jpg": "redirect to an invalid URL (Invalid IPv6 URL)",
        "http://cdn..example.com/a.jpg": "invalid host name 'cdn..example.com'",
        f"http://{'a' * 64}.example.com/a.jpg": "invalid host name 'aaaa",
        "http://cdn.example.com:99999/a.jpg": "invalid URL (Port out of range 0-65535)",
        "http://cdn.example.com:8o/a.jpg": "invalid URL (Port could not be cast",
    }
    urls = [good_url] + [
        server.add(f"/hop-{n}", status=302, location=location)
        for n, location in enumerate(malformed)
    ]

    job = run_album(urls)

    assert job.status == "succeeded", job.error
    assert job.report["counts"]["refused"] == len(malformed)
    assert job.report["counts"]["stored"] == 1
    reasons = [issue["reason"] for issue in job.report["issues"]]
    for reason, expected in zip(reasons, malformed.values(), strict=True):
        assert reason.startswith(expected), reason
