"""The crawler's embargo: ``embargo_until`` is one moment with its offset, refused without
one, kept out of older payloads' checksums, and written as the album's go-live."""

import uuid
from datetime import UTC, datetime

import pytest
from rest_framework.exceptions import ValidationError

from catalog.models import Runway
from ingest import pipeline
from ingest.models import IngestJob, UsedWebhookId
from ingest.serializers import album_checksum, album_validate, instant
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, runway_album, street_album

URL = "https://example.com/a/1.jpg"


def errors_of(album) -> dict:
    with pytest.raises(ValidationError) as caught:
        album_validate(album)
    return caught.value.detail


@pytest.mark.parametrize(
    ("sent", "moment"),
    [
        ("2027-03-03T20:30:00+01:00", datetime(2027, 3, 3, 19, 30, tzinfo=UTC)),
        ("2027-03-03T19:30:00Z", datetime(2027, 3, 3, 19, 30, tzinfo=UTC)),
        (" 2027-03-03T14:30:00-05:00 ", datetime(2027, 3, 3, 19, 30, tzinfo=UTC)),
        ("2027-03-03T19:30:00.250+00:00", datetime(2027, 3, 3, 19, 30, 0, 250_000, tzinfo=UTC)),
    ],
)
def test_an_embargo_is_one_moment_in_utc(sent, moment):
    validated = album_validate(runway_album([URL], embargo_until=sent))

    # One text per moment, as the job's JSON payload keeps it.
    assert validated["embargo_until"] == moment.isoformat()
    assert instant(validated["embargo_until"]) == moment


def test_an_embargo_without_an_offset_is_refused_naming_the_field():
    errors = errors_of(street_album([URL], embargo_until="2027-03-03T20:30:00"))

    (message,) = errors["embargo_until"]
    assert "embargo_until needs an offset" in message
    assert "'2027-03-03T20:30:00'" in message


@pytest.mark.parametrize(
    "sent", ["tomorrow", "2027-13-03T20:30:00Z", "2027-03-03", "", 1_788_000_000, ["2027"], {}]
)
def test_an_embargo_that_is_no_moment_is_refused(sent):
    errors = errors_of(runway_album([URL], embargo_until=sent))

    assert list(errors) == ["embargo_until"]


def test_an_album_without_an_embargo_is_as_before():
    album = runway_album([URL])
    with_null = runway_album([URL], embargo_until=None)

    assert album_validate(album)["embargo_until"] is None
    assert album_validate(with_null)["embargo_until"] is None
    # An older crawler's payload keeps the checksum it always had (its repeats stay repeats).
    assert album_checksum(album_validate(album)) == album_checksum(album_validate(with_null))


def test_an_embargo_is_content():
    plain = album_validate(runway_album([URL]))
    embargoed = album_validate(runway_album([URL], embargo_until="2027-03-03T20:30:00+01:00"))
    later = album_validate(runway_album([URL], embargo_until="2027-03-03T21:30:00+01:00"))
    # The same moment in another offset is the same content.
    same = album_validate(runway_album([URL], embargo_until="2027-03-03T19:30:00Z"))

    assert len({album_checksum(a) for a in (plain, embargoed, later)}) == 3
    assert album_checksum(same) == album_checksum(embargoed)


@pytest.mark.django_db
def test_the_embargo_becomes_the_records_go_live(image_server):
    BrandFactory(name="Acme", slug="acme")
    photo = image_server.add("/a/1.jpg", jpeg("astronaut", size=160))
    album = album_validate(runway_album([photo], embargo_until="2027-03-03T20:30:00+01:00"))
    job = ingest_job_accept(webhook_id=f"msg_{uuid.uuid4().hex}", album=album)

    pipeline.run_job(job.pk, final_attempt=True)

    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    runway = Runway.objects.get()
    assert runway.status == "pending"
    assert runway.go_live_at == datetime(2027, 3, 3, 19, 30, tzinfo=UTC)
    assert runway.expires_at is None
    assert not runway.bytes_public


@pytest.mark.django_db
def test_an_embargoed_album_is_accepted_over_http(crawler):
    album = runway_album([URL], embargo_until="2027-03-03T20:30:00+01:00")

    response = crawler.post(album)

    assert response.status_code == 202, response.content
    job = IngestJob.objects.get()
    assert job.payload["embargo_until"] == "2027-03-03T19:30:00+00:00"
    assert job.payload_checksum == album_checksum(album_validate(album))


@pytest.mark.django_db
def test_a_naive_embargo_is_400_over_http_and_writes_nothing(crawler):
    response = crawler.post(street_album([URL], embargo_until="2027-03-03 20:30"))

    assert response.status_code == 400
    assert list(response.json()) == ["embargo_until"]
    assert "needs an offset" in response.json()["embargo_until"][0]
    assert not IngestJob.objects.exists()
    assert not UsedWebhookId.objects.exists()
