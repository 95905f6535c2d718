"""catalog.services.renditions: originals read from storage, renditions stored, rows written
after the objects; failures leave the image as it was (retried as transient, or marked), reruns
write nothing new; gc_media keeps and removes renditions with their originals."""

import hashlib
import io
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone
from PIL import Image
from skimage import data as skdata

from catalog.models import RunwayImage, StoredObject
from catalog.services import renditions
from catalog.services.renditions import Transient, image_renditions_make, record_renditions_make
from catalog.storage import image_store, rendition_key, stored_objects_collect
from tests.factories import RunwayFactory, RunwayImageFactory, StreetSnapImageFactory

pytestmark = pytest.mark.django_db


def photo_jpeg(name="astronaut", size=(1600, 1200)) -> bytes:
    image = Image.fromarray(getattr(skdata, name)()).convert("RGB").resize(size)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def stored_image(data: bytes | None = None, factory=RunwayImageFactory, **fields):
    data = data or photo_jpeg()
    sha1 = hashlib.sha1(data).hexdigest()  # noqa: S324 - a content address
    key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
    return factory(storage_key=key, sha1=sha1, width=1600, height=1200, **fields)


def test_an_image_gets_its_renditions_placeholder_and_colour():
    image = stored_image()

    outcome, problem = image_renditions_make(image=image)

    image.refresh_from_db()
    assert (outcome, problem) == ("done", "")
    assert image.rendition_status == "done"
    assert image.renditions == [
        {"width": 400, "height": 300, "key": rendition_key(sha1=image.sha1, width=400)},
        {"width": 1200, "height": 900, "key": rendition_key(sha1=image.sha1, width=1200)},
    ]
    for rendition in image.renditions:
        with default_storage.open(rendition["key"]) as stored:
            assert Image.open(stored).size == (rendition["width"], rendition["height"])
    assert image.placeholder and image.color.startswith("#")
    assert image.rendition_url(400) == default_storage.url(image.renditions[0]["key"])
    assert image.rendition_url(800) is None


def test_a_rerun_writes_nothing_new(django_assert_num_queries, monkeypatch):
    image = stored_image()
    image_renditions_make(image=image)
    image.refresh_from_db()
    puts = []
    monkeypatch.setattr(renditions, "rendition_put", lambda **kw: puts.append(kw))

    with django_assert_num_queries(0):
        assert image_renditions_make(image=image) == ("skipped", "")
    assert puts == []
    # --force makes them again, under the same keys.
    before = image.renditions
    monkeypatch.undo()
    assert image_renditions_make(image=image, force=True) == ("done", "")
    image.refresh_from_db()
    assert image.renditions == before


def test_a_storage_error_is_transient_and_leaves_the_row_untouched(monkeypatch):
    image = stored_image()

    def broken_put(**kwargs):
        raise OSError("bucket unreachable")

    monkeypatch.setattr(renditions, "rendition_put", broken_put)

    with pytest.raises(Transient, match="bucket unreachable"):
        image_renditions_make(image=image, final_attempt=False)
    image.refresh_from_db()
    assert (image.rendition_status, image.renditions, image.placeholder) == ("pending", [], "")

    # On the last attempt: marked failed, with the reason, still pointing at nothing.
    outcome, problem = image_renditions_make(image=image, final_attempt=True)
    image.refresh_from_db()
    assert outcome == "failed" and "bucket unreachable" in problem
    assert (image.rendition_status, image.renditions) == ("failed", [])
    assert "bucket unreachable" in image.rendition_error


def test_a_missing_original_and_a_broken_one_are_reported_not_raised():
    missing = RunwayImageFactory()  # its key was never stored
    broken_bytes = b"\xff\xd8\xff not really a jpeg"
    broken = RunwayImageFactory(storage_key="images/00/broken.jpg")
    default_storage.save(broken.storage_key, io.BytesIO(broken_bytes))

    assert image_renditions_make(image=missing)[0] == "missing"
    assert image_renditions_make(image=broken)[0] == "failed"

    missing.refresh_from_db()
    broken.refresh_from_db()
    assert missing.rendition_status == "failed" and "missing" in missing.rendition_error
    assert broken.rendition_status == "failed" and "cannot render" in broken.rendition_error


def test_a_legacy_row_without_sha1_gets_it_from_the_bytes():
    data = photo_jpeg("coffee")
    image = stored_image(data)
    RunwayImage.objects.filter(pk=image.pk).update(sha1="")
    image.refresh_from_db()

    image_renditions_make(image=image)

    image.refresh_from_db()
    assert image.sha1 == hashlib.sha1(data).hexdigest()  # noqa: S324
    assert image.renditions[0]["key"] == rendition_key(sha1=image.sha1, width=400)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_record_run_tries_every_image_and_a_retry_only_does_the_rest(
    monkeypatch, settings, threads
):
    settings.RENDITION_THREADS = threads
    runway = RunwayFactory()
    images = [
        stored_image(photo_jpeg(name), runway=runway) for name in ("astronaut", "coffee", "rocket")
    ]
    unlucky = images[1].sha1
    real_put = renditions.rendition_put
    failures = {"left": 1}

    def put_failing_once_for_one_image(**kwargs):
        if unlucky in kwargs["key"] and failures["left"]:
            failures["left"] -= 1
            raise OSError("storage hiccup")
        real_put(**kwargs)

    monkeypatch.setattr(renditions, "rendition_put", put_failing_once_for_one_image)
    with pytest.raises(Transient, match="storage hiccup"):
        record_renditions_make(kind="runway", record_id=runway.pk, final_attempt=False)
    # Every other image was done; the one that failed is untouched, pointing at nothing.
    assert [i.rendition_status for i in RunwayImage.objects.order_by("pk")] == [
        "done",
        "pending",
        "done",
    ]
    assert RunwayImage.objects.get(pk=images[1].pk).renditions == []

    tally = record_renditions_make(kind="runway", record_id=runway.pk, final_attempt=False)

    assert (tally.done, tally.skipped, tally.failed) == (1, 2, 0)
    assert all(i.rendition_status == "done" for i in RunwayImage.objects.all())


def test_street_images_too():
    image = stored_image(factory=StreetSnapImageFactory)
    tally = record_renditions_make(kind="street", record_id=image.street_snap_id)
    assert tally.done == 1


# --- gc_media --------------------------------------------------------------------------------


def _age_all():
    StoredObject.objects.update(last_stored_at=timezone.now() - timedelta(days=3))


def test_gc_keeps_the_renditions_of_a_referenced_original_and_removes_those_it_deletes():
    kept = stored_image(photo_jpeg("astronaut"))
    image_renditions_make(image=kept)
    kept.refresh_from_db()
    # An orphan: stored and rendered by a job that then lost its race (its row is gone).
    orphan = stored_image(photo_jpeg("rocket"))
    image_renditions_make(image=orphan)
    orphan.refresh_from_db()
    orphan_keys = [orphan.storage_key, *(r["key"] for r in orphan.renditions)]
    RunwayImage.objects.filter(pk=orphan.pk).delete()
    _age_all()

    result = stored_objects_collect(older_than=timezone.now() - timedelta(days=1))

    assert result.deleted == [orphan.storage_key]
    assert not any(default_storage.exists(key) for key in orphan_keys)
    assert all(default_storage.exists(r["key"]) for r in kept.renditions)
    assert default_storage.exists(kept.storage_key)
    # Renditions are not tracked objects of their own: nothing else is left to collect.
    assert set(StoredObject.objects.values_list("key", flat=True)) == {kept.storage_key}


def test_gc_keeps_renditions_another_image_of_the_same_bytes_still_shows():
    # Renditions are named by sha1; a legacy row may hold the same bytes under its own key.
    data = photo_jpeg("coffee")
    orphan = stored_image(data)
    image_renditions_make(image=orphan)
    orphan.refresh_from_db()
    legacy = StreetSnapImageFactory(
        storage_key="legacy/street/coffee.jpg", sha1=orphan.sha1, renditions=orphan.renditions
    )
    RunwayImage.objects.filter(pk=orphan.pk).delete()
    _age_all()

    result = stored_objects_collect(older_than=timezone.now() - timedelta(days=1))

    assert result.deleted == [orphan.storage_key]
    assert not default_storage.exists(orphan.storage_key)
    assert legacy.renditions and all(default_storage.exists(r["key"]) for r in legacy.renditions)
