"""catalog.visibility: bytes are public exactly while a published, live record shows them.

Each transition moves the bytes after it (the job, run here as its commit would ask), shared
bytes stay while another published album shows them, the record shows only once its bytes
are public, and the sweep converges what no job moved. On both databases; the public store is
a folder of copies (PUBLIC_MEDIA_ROOT), except where the embedded mode's ledger is the point.
"""

import logging
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from catalog.models import MediaChange, MediaSweep, PublicObject, Runway, RunwayImage
from catalog.services import image_delete, record_set_cover, record_update
from catalog.storage import rendition_key
from catalog.visibility import (
    key_is_public,
    keys_sync,
    media_sweep,
    public_keys_among,
    records_published_in_bulk,
)
from publicapi.models import PublicRunway, PublicStreetSnap
from review.services import Action, record_approve, record_reject
from tests.factories import RunwayFactory, RunwayImageFactory, StreetSnapFactory
from tests.support import curator, rollback_each_example
from tests.visibility_support import album, keys_of, private_files, public_files, run_jobs

pytestmark = pytest.mark.django_db


# --- The rule ------------------------------------------------------------------------------------

STATES = st.sampled_from(
    ["pending", "published", "rejected", "published-deleted", "rejected-deleted"]
)
KEYS = [f"images/0{n}/{n:040x}.jpg" for n in range(6)]


@given(
    albums=st.lists(
        st.tuples(STATES, st.lists(st.tuples(st.sampled_from(KEYS), st.booleans()), max_size=4)),
        max_size=5,
    )
)
def test_the_rule_is_published_live_records_live_images(albums):
    with rollback_each_example():
        # Given albums in every state sharing a few keys, some images deleted...
        expected = set()
        for state, images in albums:
            status, _, deleted = state.partition("-")
            record = RunwayFactory(status=status, deleted_at=timezone.now() if deleted else None)
            for key, image_deleted in images:
                RunwayImageFactory(
                    runway=record,
                    storage_key=key,
                    sha1=key[-44:-4],
                    deleted_at=timezone.now() if image_deleted else None,
                )
                if status == "published" and not deleted and not image_deleted:
                    expected.add(key)
        # ...the public keys are those a published, live record shows through a live image,
        # and its renditions follow the bytes.
        assert public_keys_among(KEYS) == expected
        renditions = {rendition_key(sha1=key[-44:-4], width=400): key for key in KEYS}
        assert public_keys_among(renditions) == {
            r for r, key in renditions.items() if key in expected
        }


def test_a_street_album_counts_as_a_runway_does():
    street = StreetSnapFactory(published=True)
    image = street.images.create(storage_key="images/aa/x.jpg", sha1="a" * 40)

    assert key_is_public(image.storage_key)
    assert key_is_public(rendition_key(sha1="a" * 40, width=1200))


# --- Transitions move the bytes ------------------------------------------------------------------


def test_approving_copies_the_bytes_then_shows_the_record(public_copies):
    runway = album(status="pending")
    keys = keys_of(runway)

    record_approve(record=runway, actor=curator())

    # Published, but not shown yet: its bytes are not public.
    runway.refresh_from_db()
    assert (runway.status, runway.bytes_public) == ("published", False)
    assert not PublicRunway.objects.filter(pk=runway.pk).exists()
    assert public_files() == set()

    run = run_jobs()

    assert public_files() == keys
    runway.refresh_from_db()
    assert runway.bytes_public
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    assert (len(run.keys.published), run.ok) == (len(keys), True)
    assert not MediaChange.objects.exists()


def test_every_url_the_api_shows_answers_once_it_shows_the_record(client, public_copies):
    runway = album(status="pending", photos=("astronaut", "coffee", "rocket"))
    record_approve(record=runway, actor=curator())
    assert client.get(f"/api/v1/runways/{runway.pk}/").status_code == 404
    run_jobs()

    detail = client.get(f"/api/v1/runways/{runway.pk}/").json()
    urls = [image["url"] for image in detail["images"]]
    urls += [r["url"] for image in detail["images"] for r in image["renditions"]]
    assert len(urls) == 6
    for url in urls:
        response = client.get(url.removeprefix("http://testserver"))
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "public, max-age=600"


@pytest.mark.parametrize("withdraw", ["unpublish", "takedown by SQL soft delete"])
def test_a_withdrawn_album_leaves_the_api_at_once_and_its_bytes_after(public_copies, withdraw):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    run_jobs()
    assert public_files() == keys_of(runway)

    if withdraw == "unpublish":
        record_reject(
            record=runway, actor=curator(), reason="photographer's request", action=Action.UNPUBLISH
        )
    else:
        from django.db import transaction

        from catalog.services import record_lock, record_save

        with transaction.atomic():
            locked = record_lock(record=runway)
            locked.deleted_at = timezone.now()
            record_save(record=locked, fields=["deleted_at"])

    # Gone from the API with the write itself...
    assert not PublicRunway.objects.filter(pk=runway.pk).exists()
    runway.refresh_from_db()
    assert not runway.bytes_public
    # ...and its bytes private once the job ran; the private store keeps them.
    run_jobs()
    assert public_files() == set()
    assert keys_of(runway) <= private_files()
    assert not PublicObject.objects.exists()


def test_withdrawing_album_a_keeps_the_bytes_album_b_shows(public_copies):
    a = album(status="pending", photos=("astronaut", "coffee"))
    b = album(status="pending", photos=("coffee", "rocket"))  # coffee: the same bytes
    shared = keys_of(a) & keys_of(b)
    assert len(shared) == 2  # the original and its rendition
    for record in (a, b):
        record_approve(record=record, actor=curator())
    run_jobs()

    record_reject(record=a, actor=curator(), reason="agency's request", action=Action.UNPUBLISH)
    run_jobs()

    assert public_files() == keys_of(b)
    b.refresh_from_db()
    assert b.bytes_public and PublicRunway.objects.filter(pk=b.pk).exists()


def test_a_street_album_and_a_runway_share_bytes_too(public_copies):
    runway = album(status="pending", photos=("chelsea",))
    street = album("street", status="pending", photos=("chelsea",))
    record_approve(record=runway, actor=curator())
    record_approve(record=street, actor=curator())
    run_jobs()

    record_reject(record=runway, actor=curator(), reason="model's request", action=Action.UNPUBLISH)
    run_jobs()

    assert public_files() == keys_of(street)
    assert PublicStreetSnap.objects.filter(pk=street.pk).exists()


def test_deleting_an_image_of_a_published_album_withdraws_only_its_bytes(public_copies):
    runway = album(status="pending", photos=("astronaut", "coffee", "rocket"))
    record_approve(record=runway, actor=curator())
    run_jobs()
    gone = runway.images.get(sort_order=runway.images.order_by("sort_order")[1].sort_order)

    image_delete(image=gone, actor=curator())
    run_jobs()

    assert public_files() == keys_of(runway)
    assert gone.storage_key not in public_files()
    assert gone.storage_key in private_files()
    runway.refresh_from_db()
    assert runway.bytes_public


def test_rejecting_a_pending_album_moves_nothing_and_announces_nothing(public_copies):
    runway = album(status="pending")

    record_reject(record=runway, actor=curator(), reason="not a show")

    assert not MediaChange.objects.exists()
    assert public_files() == set()


def test_edits_and_a_cover_change_of_a_published_album_are_announced(public_copies):
    runway = album(status="pending", photos=("astronaut", "coffee"))
    record_approve(record=runway, actor=curator())
    run_jobs()
    second = runway.images.exclude(pk=runway.cover_id).get()

    record_set_cover(record=runway, image=second, actor=curator())
    record_update(record=runway, actor=curator(), changes={"title": "Acme, the show"})

    changes = list(MediaChange.objects.order_by("pk").values_list("kind", "record_id", "tags"))
    tags = [f"runway:{runway.pk}"]
    assert changes == [("runway", runway.pk, tags), ("runway", runway.pk, tags)]
    run = run_jobs()
    assert run.keys.changed == []  # nothing to move: the same bytes
    assert not MediaChange.objects.exists()


def test_a_reapproved_album_shows_only_after_its_bytes_are_back(public_copies):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    run_jobs()
    record_reject(record=runway, actor=curator(), reason="embargo", action=Action.UNPUBLISH)
    run_jobs()
    runway.status = "pending"  # an editor sends it back to review (a re-crawl reopens it)
    runway.save(update_fields=["status"])

    record_approve(record=runway, actor=curator())

    assert not PublicRunway.objects.filter(pk=runway.pk).exists()
    run_jobs()
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    assert public_files() == keys_of(runway)


def test_without_copies_a_published_album_shows_at_once_and_the_ledger_follows():
    # The embedded mode: the media route reads the rule; the ledger still says what changed.
    runway = album(status="pending")

    record_approve(record=runway, actor=curator())

    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    run_jobs()
    assert set(PublicObject.objects.values_list("key", flat=True)) == keys_of(runway)
    record_reject(record=runway, actor=curator(), reason="embargo", action=Action.UNPUBLISH)
    run = run_jobs()
    assert set(run.keys.withdrawn) == keys_of(runway)
    assert not PublicObject.objects.exists()


def test_records_a_bulk_writer_published_show_once_their_bytes_are(public_copies):
    runway = album(status="published", bytes_public=False)

    records_published_in_bulk("runway", [runway.pk])

    assert not PublicRunway.objects.filter(pk=runway.pk).exists()
    run_jobs()
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    assert public_files() == keys_of(runway)


def test_a_second_sync_of_the_same_keys_does_nothing(public_copies):
    runway = album(status="published")
    first = keys_sync(keys_of(runway))

    second = keys_sync(keys_of(runway))

    assert len(first.published) == len(keys_of(runway))
    assert (second.published, second.withdrawn, second.failed) == ([], [], {})


def test_a_public_object_missing_in_the_private_store_does_not_hold_the_album_back(public_copies):
    runway = album(status="pending", photos=("astronaut", "coffee"))
    lost = runway.images.exclude(pk=runway.cover_id).get()
    from django.core.files.storage import default_storage

    default_storage.delete(lost.storage_key)
    record_approve(record=runway, actor=curator())

    run = run_jobs()

    assert run.keys.missing == [lost.storage_key]
    runway.refresh_from_db()
    assert runway.bytes_public
    row = PublicObject.objects.get(key=lost.storage_key)
    assert (row.pending, row.error) == ("publish", "missing in the private store")


# --- The sweep -----------------------------------------------------------------------------------


def test_the_sweep_publishes_an_album_an_operator_published_by_sql(public_copies):
    runway = album(status="pending")
    Runway.objects.filter(pk=runway.pk).update(status="published")  # no service: no change row

    run = media_sweep()

    assert run.fixed["records_to_publish"] == 1
    assert run.fixed["published"] == len(keys_of(runway))
    assert public_files() == keys_of(runway)
    assert PublicRunway.objects.filter(pk=runway.pk).exists()


def test_the_sweep_withdraws_an_album_an_operator_unpublished_by_sql(public_copies, caplog):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    run_jobs()
    Runway.objects.filter(pk=runway.pk).update(status="rejected")

    with caplog.at_level(logging.INFO, logger="catalog.visibility"):
        run = media_sweep()

    assert (run.fixed["records_to_withdraw"], run.fixed["withdrawn"]) == (1, len(keys_of(runway)))
    assert public_files() == set()
    runway.refresh_from_db()
    assert not runway.bytes_public
    # The drift it fixed, in the log and in its row (which the metrics read).
    assert any("records_to_withdraw 1" in r.getMessage() for r in caplog.records)
    assert MediaSweep.objects.get().fixed["withdrawn"] == len(keys_of(runway))


def test_the_full_sweep_withdraws_an_image_deleted_by_sql(public_copies):
    runway = album(status="pending", photos=("astronaut", "coffee"))
    record_approve(record=runway, actor=curator())
    run_jobs()
    gone = runway.images.exclude(pk=runway.cover_id).get()
    RunwayImage.objects.filter(pk=gone.pk).update(deleted_at=timezone.now())

    assert media_sweep().fixed["withdrawn"] == 0  # the light sweep does not read every key
    run = media_sweep(full=True)

    assert run.fixed["withdrawn"] == 2
    assert public_files() == keys_of(runway)


def test_the_full_sweep_copies_a_public_object_the_store_lost(public_copies):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    run_jobs()
    PublicObject.objects.filter(key=runway.cover.storage_key).delete()  # a lost ledger row
    (public_copies / runway.cover.storage_key).unlink()

    run = media_sweep(full=True)

    assert run.fixed["published"] == 1
    assert public_files() == keys_of(runway)


def test_the_sweep_runs_changes_a_lost_job_left(public_copies):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())  # its job never runs: Redis lost it
    MediaChange.objects.update(created_at=timezone.now() - timedelta(minutes=5))

    run = media_sweep()

    assert run.fixed["changes_run"] == 1
    assert public_files() == keys_of(runway)
    assert not MediaChange.objects.exists()


def test_the_sweep_leaves_a_fresh_change_to_its_job(public_copies):
    album(status="published", bytes_public=True)
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())

    run = media_sweep()

    assert run.fixed["changes_run"] == 0
    assert MediaChange.objects.count() == 1


def test_the_sweep_finds_nothing_when_nothing_drifted(public_copies):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    run_jobs()

    run = media_sweep(full=True)

    assert run.summary() == "no drift"
    assert run.failed == 0


def test_the_flag_waits_for_a_write_made_while_the_bytes_moved(public_copies, monkeypatch):
    # An unpublish that commits while the approve's job copies: the job's flag is for the
    # version it read, so it does not show an album its editor just withdrew.
    from catalog import visibility

    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    real = visibility.flag.keys_sync

    def unpublish_meanwhile(keys):
        result = real(keys)
        record_reject(
            record=Runway.objects.get(pk=runway.pk),
            actor=curator(),
            reason="now",
            action=Action.UNPUBLISH,
        )
        return result

    monkeypatch.setattr(visibility.flag, "keys_sync", unpublish_meanwhile)
    visibility.record_bytes_sync("runway", runway.pk)

    runway.refresh_from_db()
    assert (runway.status, runway.bytes_public) == ("rejected", False)
