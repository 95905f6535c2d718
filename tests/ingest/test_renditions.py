"""Renditions as ingest makes them: a follow-up job per album on the renditions queue (a real
rq worker serving it after the ingest queue), retried on storage errors without touching the
record or its job; in-process in the embedded mode; on S3 (moto), objects with the right
headers whose public URLs answer; and for every format ingest accepts, within the decode
budget."""

import io
import json
import urllib.request
import uuid

import boto3
import numpy as np
import pytest
import pyvips
from django.core.files.storage import default_storage
from PIL import Image
from rq import SimpleWorker

from catalog.models import Runway, RunwayImage
from catalog.services import renditions
from catalog.services.renditions import record_renditions_make
from catalog.visibility import media_sweep
from ingest import thread_pool
from ingest.models import IngestJob
from ingest.serializers import album_validate
from ingest.services import ingest_job_accept
from tests.factories import BrandFactory
from tests.ingest.support import jpeg, photo, runway_album

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _brand():
    BrandFactory(name="Acme", slug="acme")


def photos(image_server, n=3) -> list[str]:
    names = ("astronaut", "coffee", "chelsea", "rocket")
    return [image_server.add(f"/{i}.jpg", jpeg(names[i % 4], size=600 + i)) for i in range(n)]


def accept(urls) -> IngestJob:
    return ingest_job_accept(
        webhook_id=f"msg_{uuid.uuid4().hex}", album=album_validate(runway_album(urls))
    )


def burst(*queues) -> None:
    """A worker serving ``queues`` in their order until they are empty."""
    name = f"{queues[0].name}-simple"
    SimpleWorker(list(queues), connection=queues[0].connection, name=name).work(burst=True)


def statuses() -> list[str]:
    return list(RunwayImage.objects.order_by("pk").values_list("rendition_status", flat=True))


def test_a_worker_makes_the_renditions_after_the_record(rq_queue, renditions_queue, image_server):
    job = accept(photos(image_server))

    # The ingest job, which enqueues the renditions job on the renditions queue
    burst(rq_queue)
    job.refresh_from_db()
    assert job.status == "succeeded" and statuses() == ["pending"] * 3
    assert rq_queue.count == 0
    [follow_up] = renditions_queue.get_jobs()
    assert follow_up.func_name == "catalog.tasks.run_renditions"
    assert follow_up.args == ("runway", job.runway_id)

    burst(rq_queue, renditions_queue)

    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 1
    assert statuses() == ["done"] * 3
    for image in RunwayImage.objects.all():
        assert [r["width"] for r in image.renditions] == [400]  # 600 px wide: no 1200
        assert image.placeholder and image.color


def test_a_failing_rendition_step_is_retried_and_leaves_the_record_and_job_alone(
    rq_queue, renditions_queue, image_server, settings, monkeypatch
):
    # Given storage that fails the first two rendition puts (rq retries at once: interval 0)
    settings.INGEST_RETRY_INTERVALS = [0, 0]
    real_put = renditions.rendition_put
    failures = {"left": 2}

    def flaky_put(**kwargs):
        if failures["left"]:
            failures["left"] -= 1
            raise OSError("storage unavailable")
        real_put(**kwargs)

    monkeypatch.setattr(renditions, "rendition_put", flaky_put)
    job = accept(photos(image_server))

    burst(rq_queue, renditions_queue)

    # Then the record was written once and its job succeeded on its first attempt, and the
    # renditions came on a retry
    job.refresh_from_db()
    assert (job.status, job.attempts, job.error) == ("succeeded", 1, "")
    runway = Runway.objects.get()
    assert (runway.status, runway.image_count) == ("pending", 3)
    assert statuses() == ["done"] * 3


def test_after_the_last_attempt_the_images_have_no_renditions_and_say_why(
    rq_queue, renditions_queue, image_server, settings, monkeypatch
):
    settings.INGEST_RETRY_INTERVALS = [0]

    def down(**kwargs):
        raise OSError("storage unavailable")

    monkeypatch.setattr(renditions, "rendition_put", down)
    job = accept(photos(image_server, n=2))

    burst(rq_queue, renditions_queue)

    job.refresh_from_db()
    assert job.status == "succeeded"
    assert Runway.objects.get().image_count == 2
    assert statuses() == ["failed", "failed"]
    image = RunwayImage.objects.first()
    assert image.renditions == [] and "storage unavailable" in image.rendition_error


def test_a_rerun_of_the_renditions_job_writes_nothing_new(image_server, django_assert_num_queries):
    accept(photos(image_server, n=2))  # embedded mode: the job and its renditions in-process
    assert thread_pool.wait_idle(timeout=120)
    runway = Runway.objects.get()
    assert statuses() == ["done", "done"]
    before = list(RunwayImage.objects.values_list("pk", "renditions", "placeholder", "color"))

    with django_assert_num_queries(1):  # reads the images, writes nothing
        tally = record_renditions_make(kind="runway", record_id=runway.pk)

    assert (tally.done, tally.skipped) == (0, 2)
    after = list(RunwayImage.objects.values_list("pk", "renditions", "placeholder", "color"))
    assert after == before


def test_the_embedded_mode_makes_renditions_in_process(crawler, image_server, settings):
    assert settings.REDIS_URL == ""

    response = crawler.post(runway_album(photos(image_server, n=2)))

    assert response.status_code == 202
    assert thread_pool.wait_idle(timeout=120)
    assert IngestJob.objects.get().status == "succeeded"
    assert statuses() == ["done", "done"]


def test_on_s3_renditions_carry_their_headers_and_public_urls_answer(
    s3_storage, moto_s3, image_server, client
):
    # Given an album ingested into the bucket with its renditions (in-process), then published
    # (by SQL: the sweep moves its bytes)
    accept([image_server.add("/big.jpg", jpeg("astronaut", size=1300))])
    assert thread_pool.wait_idle(timeout=120)
    runway = Runway.objects.get()
    Runway.objects.filter(pk=runway.pk).update(status="published")
    media_sweep()
    # The change the sweep noted runs in the sweep or in the job its commit started, whichever
    # takes the outbox's lock first.
    assert thread_pool.wait_idle(timeout=60)

    # When the frontend reads the public detail
    detail = client.get(f"/api/v1/runways/{runway.pk}/").json()

    # Then each rendition is a private object, and a public copy with the public headers
    [image] = detail["images"]
    assert [r["width"] for r in image["renditions"]] == [400, 1200]
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_s3,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    for rendition in RunwayImage.objects.get().renditions:
        head = s3.head_object(Bucket=s3_storage, Key=rendition["key"])
        assert (head["ContentType"], head["CacheControl"]) == (
            "image/webp",
            "private, max-age=3600",
        )
        head = s3.head_object(Bucket=s3_storage, Key=f"public/{rendition['key']}")
        assert (head["ContentType"], head["CacheControl"]) == ("image/webp", "public, max-age=600")
    # Public reads of the public copies, as the archive's bucket (or its CDN) allows them.
    s3.put_bucket_policy(
        Bucket=s3_storage,
        Policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": "*",
                        "Action": "s3:GetObject",
                        "Resource": f"arn:aws:s3:::{s3_storage}/public/*",
                    }
                ],
            }
        ),
    )
    for rendition in image["renditions"]:
        with urllib.request.urlopen(rendition["url"], timeout=10) as answer:  # noqa: S310
            assert answer.status == 200
            assert answer.headers["Content-Type"] == "image/webp"
    assert image["srcset"].endswith("1200w")


def png16(image: Image.Image) -> bytes:
    """A 16-bit RGB PNG of ``image`` (Pillow writes 16-bit grayscale only: libvips writes it)."""
    samples = np.asarray(image, dtype=np.uint16) * 257  # 0..255 -> 0..65535
    height, width, bands = samples.shape
    wide = pyvips.Image.new_from_memory(samples.tobytes(), width, height, bands, "ushort")
    return wide.copy(interpretation="rgb16").pngsave_buffer(bitdepth=16)


def encoded(image: Image.Image, fmt: str, **options) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


# Every format ingest accepts, as a crawler may serve it: a real photograph, wide enough for
# both rendition widths.
ACCEPTED_FORMATS = {
    "JPEG": lambda image: encoded(image, "JPEG", quality=90),
    "CMYK JPEG": lambda image: encoded(image.convert("CMYK"), "JPEG", quality=90),
    "PNG": lambda image: encoded(image, "PNG"),
    "16-bit PNG": png16,
    "WebP": lambda image: encoded(image, "WEBP", quality=90),
    "GIF": lambda image: encoded(image, "GIF"),
}


@pytest.mark.parametrize("fmt", list(ACCEPTED_FORMATS))
def test_every_accepted_format_gets_its_renditions(fmt, image_server):
    # Given a photograph (scikit-image's) converted to the format, 1300x975
    original = photo("chelsea").resize((1300, 975), Image.Resampling.BICUBIC)
    body = ACCEPTED_FORMATS[fmt](original)

    # When an album of it is ingested (embedded mode: the job, then its renditions job)
    job = accept([image_server.add("/photo", body)])
    assert thread_pool.wait_idle(timeout=120)

    # Then the image has both renditions, stored as WebP of the sizes listed, showing the
    # photograph (not inverted, not blank, not a palette's wrong colours)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    image = RunwayImage.objects.get()
    assert (image.rendition_status, image.rendition_error) == ("done", "")
    assert [(r["width"], r["height"]) for r in image.renditions] == [(400, 300), (1200, 900)]
    for rendition in image.renditions:
        with default_storage.open(rendition["key"], "rb") as stored:
            shown = Image.open(io.BytesIO(stored.read()))
            assert shown.format == "WEBP"
            assert shown.size == (rendition["width"], rendition["height"])
            shown = shown.convert("RGB")
        expected = np.asarray(original.resize(shown.size, Image.Resampling.BICUBIC), float)
        assert np.abs(np.asarray(shown, float) - expected).mean() < 20, fmt
    assert image.placeholder and image.color.startswith("#")


def test_an_image_whose_render_exceeds_the_decode_budget_is_refused_and_shown_as_is(
    image_server, settings
):
    # Given a decode budget that ingest's check of a 4000x4000 GIF fits (one byte a pixel
    # through Pillow) but its rendition does not (a whole RGBA canvas through libvips)
    settings.INGEST_DECODE_MEMORY_BYTES = 64 * 1024 * 1024
    out = io.BytesIO()
    Image.new("P", (4000, 4000), 0).save(out, "GIF")

    job = accept([image_server.add("/wide.gif", out.getvalue())])
    assert thread_pool.wait_idle(timeout=120)

    # Then the album is ingested, and the image has no renditions and says why
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    image = RunwayImage.objects.get()
    assert (image.rendition_status, image.renditions) == ("failed", [])
    assert image.rendition_error == (
        "cannot render the original: rendering this 4000x4000 GIF would take about 156 MiB "
        "of memory, more than the 64 MiB decode budget"
    )
