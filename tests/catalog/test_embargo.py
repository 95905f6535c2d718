"""Embargoes (issue 33): an album is public only past its go-live and before its expiry. The
views show it only then, whatever the jobs do; its bytes are public only then; the job runs at
each time (rq's scheduler, asked at the write's commit), the sweep runs a time whose job was
missed; an image response is never cached past the expiry of the last album showing it; and
the history says when an album went live or expired. The clock is moved with time-machine."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from catalog.models import MediaChange, Runway
from catalog.visibility import key_is_public, media_changes_process, media_sweep
from publicapi.models import PublicBrand, PublicRunway, PublicRunwayImage
from review.models import ReviewEvent
from review.services import record_approve, record_approve_for, record_schedule
from tests.catalog.conftest import through
from tests.support import curator
from tests.visibility_support import album, keys_of, public_files

pytestmark = pytest.mark.django_db

T0 = datetime(2027, 3, 3, 19, 0, tzinfo=UTC)
GO_LIVE = T0 + timedelta(hours=1, minutes=30)  # 20:30 UTC
EXPIRY = GO_LIVE + timedelta(days=2)


def shown() -> set[int]:
    return set(PublicRunway.objects.values_list("pk", flat=True))


@pytest.fixture
def clock(embargo_clock):
    return embargo_clock(T0)


# --- The views hold the window whatever the jobs do ----------------------------------------------


def test_a_scheduled_album_is_shown_from_its_go_live_until_its_expiry_without_a_job(clock):
    # The embedded mode: no copies, so its rows are made at once and the views hold it.
    runway = album(status="pending")
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=EXPIRY)
    runway.refresh_from_db()
    assert (runway.status, runway.go_live_at, runway.expires_at) == ("published", GO_LIVE, EXPIRY)
    assert runway.is_scheduled() and not runway.is_public()

    assert shown() == set()
    assert not PublicRunwayImage.objects.exists() and not PublicBrand.objects.exists()
    assert not any(key_is_public(key) for key in keys_of(runway))

    clock.move_to(GO_LIVE)
    assert shown() == {runway.pk}
    assert PublicRunwayImage.objects.count() == 2 and PublicBrand.objects.count() == 1
    assert all(key_is_public(key) for key in keys_of(runway))

    clock.move_to(EXPIRY - timedelta(microseconds=1))
    assert shown() == {runway.pk}
    clock.move_to(EXPIRY)
    assert shown() == set()
    assert not PublicRunwayImage.objects.exists() and not PublicBrand.objects.exists()
    assert not any(key_is_public(key) for key in keys_of(runway))


def test_an_approval_for_a_go_live_now_or_past_shows_the_album_at_once(clock):
    runway = album(status="pending")

    record_approve_for(record=runway, actor=curator(), go_live_at=T0 - timedelta(minutes=1))

    runway.refresh_from_db()
    assert runway.go_live_at is None  # a go-live in the past means now
    assert shown() == {runway.pk}


# --- Copies: the bytes move at each time ----------------------------------------------------------


def test_the_bytes_are_copied_at_the_go_live_and_removed_at_the_expiry(clock, public_copies):
    runway = album(status="pending")
    keys = keys_of(runway)
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=EXPIRY)
    media_changes_process()  # the approve's own change: nothing to show yet

    runway.refresh_from_db()
    assert not runway.bytes_public and public_files() == set() and shown() == set()
    # A change waits for each time.
    due = sorted(MediaChange.objects.values_list("due_at", flat=True))
    assert due == [GO_LIVE, EXPIRY]

    clock.move_to(GO_LIVE)
    run = media_changes_process()  # the job rq's scheduler runs at 20:30

    assert run.changes == 1 and public_files() == keys and shown() == {runway.pk}
    clock.move_to(EXPIRY)
    assert shown() == set()  # at once, before any job
    media_changes_process()
    runway.refresh_from_db()
    assert not runway.bytes_public and public_files() == set()
    assert not MediaChange.objects.exists()


def test_a_missed_go_live_is_run_by_the_sweep(clock, public_copies):
    runway = album(status="pending")
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE)
    media_changes_process()
    MediaChange.objects.all().delete()  # Redis lost the scheduled job and its change

    clock.move_to(GO_LIVE + timedelta(minutes=5))
    sweep = media_sweep()

    assert sweep.fixed["records_to_publish"] == 1
    assert public_files() == keys_of(runway) and shown() == {runway.pk}


def test_moving_the_go_live_of_a_published_album_takes_it_off_until_then(clock, public_copies):
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())
    media_changes_process()
    assert shown() == {runway.pk} and public_files() == keys_of(runway)

    record_schedule(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=None)
    media_changes_process()

    assert shown() == set() and public_files() == set()
    clock.move_to(GO_LIVE)
    media_changes_process()
    assert shown() == {runway.pk} and public_files() == keys_of(runway)


# --- The history ---------------------------------------------------------------------------------


def test_the_archive_notes_the_go_live_and_the_expiry_once_each(clock, public_copies):
    runway = album(status="pending")
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=EXPIRY)
    media_changes_process()

    for moment in (GO_LIVE, EXPIRY):
        clock.move_to(moment)
        media_changes_process()
        media_changes_process()  # a second run notes nothing more

    events = ReviewEvent.objects.filter(runway=runway)
    assert [(e.action, e.who) for e in events] == [
        ("schedule", "curator"),
        ("approve", "curator"),
        ("go_live", "the archive"),
        ("expire", "the archive"),
    ]
    assert [e.at for e in events.filter(actor=None)] == [GO_LIVE, EXPIRY]


# --- Refusals ------------------------------------------------------------------------------------


def test_an_expiry_before_the_go_live_or_past_is_refused(clock):
    from review.services import ScheduleRefused

    runway = album(status="pending")

    with pytest.raises(ScheduleRefused, match="must come after the go-live"):
        record_schedule(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=GO_LIVE)
    with pytest.raises(ScheduleRefused, match="has passed"):
        record_schedule(
            record=runway, actor=curator(), go_live_at=None, expires_at=T0 - timedelta(seconds=1)
        )
    runway.refresh_from_db()
    assert (runway.go_live_at, runway.expires_at) == (None, None)


def test_the_database_refuses_an_expiry_before_the_go_live():
    from django.db import IntegrityError

    runway = album(status="pending")

    with pytest.raises(IntegrityError), transaction.atomic():
        Runway.objects.filter(pk=runway.pk).update(go_live_at=GO_LIVE, expires_at=GO_LIVE)


# --- The edge ------------------------------------------------------------------------------------


def test_an_image_is_not_cached_past_the_expiry_of_the_last_album_showing_it(
    clock, client, settings
):
    settings.EDGE_PURGE_BACKEND = "http"
    runway = album(status="pending", photos=("astronaut",))
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=EXPIRY)
    key = runway.images.get().storage_key
    assert client.get(f"/media/{key}").status_code == 404  # not yet

    clock.move_to(EXPIRY - timedelta(seconds=90))
    response = client.get(f"/media/{key}")

    assert response.status_code == 200
    assert response["Cache-Control"] == "public, max-age=90, s-maxage=90"
    # Another album shows the same bytes for good: no cap then.
    album(status="published", photos=("astronaut",))
    assert client.get(f"/media/{key}")["Cache-Control"] == "public, max-age=600, s-maxage=86400"


@pytest.mark.django_db(transaction=True)
def test_varnish_shows_the_album_from_its_go_live_and_drops_it_at_its_expiry(
    clock, public_copies, varnish
):
    runway = album(status="pending", photos=("astronaut",))
    detail, images = f"/api/v1/runways/{runway.pk}/", [f"/media/{k}" for k in keys_of(runway)]
    expiry = GO_LIVE + timedelta(minutes=10)
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=expiry)
    media_changes_process()
    assert [through(varnish, path)[0] for path in [detail, *images]] == [404, 404, 404]

    clock.move_to(GO_LIVE)
    media_changes_process()  # the job rq's scheduler runs at the go-live
    for path in [detail, *images]:
        assert through(varnish, path)[0] == 200, path
        status, headers, _ = varnish.get(path)
        # Cached, no longer than the time left (Varnish counts it on its own, real clock).
        assert (status, headers["X-Cache"]) == (200, "hit"), path
        assert headers["Cache-Control"].endswith("s-maxage=600"), path

    clock.move_to(expiry)
    assert through(varnish, detail)[:2] == (200, "hit")  # until the expiry's job purges it
    media_changes_process()  # the job at the expiry
    assert [through(varnish, path)[0] for path in [detail, *images]] == [404, 404, 404]


# --- The job at each time ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_time_to_come_asks_rqs_scheduler_for_the_job_at_that_second(settings, rq_queue):
    import django_rq

    name = f"{rq_queue.name}-visibility"
    settings.VISIBILITY_QUEUE = name
    settings.RQ_QUEUES = {**settings.RQ_QUEUES, name: settings.RQ_QUEUES[rq_queue.name]}
    queue = django_rq.get_queue(name)
    go_live = timezone.now().replace(microsecond=0) + timedelta(hours=3)
    runway = album(status="pending")

    record_approve_for(record=runway, actor=curator(), go_live_at=go_live)

    scheduled = queue.scheduled_job_registry
    (job_id,) = [j for j in scheduled.get_job_ids() if "-at-" in j]
    assert scheduled.get_scheduled_time(job_id) == go_live
    assert job_id.endswith(str(int(go_live.timestamp())))
