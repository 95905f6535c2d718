"""The outbox of visibility changes (catalog.visibility.outbox): no change, and no kind of
change, holds the ones behind it; a change with nothing left to do is deleted; a run of the job
ends; a lock dies with its holder."""

import shutil
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import time_machine
from django.core.files.storage import storages
from django.db import connections
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from catalog.models import MediaChange
from catalog.services.records import RecordWriteRefused
from catalog.visibility import (
    BATCH,
    changes_lock,
    media_changes_process,
    media_changes_run,
    media_sweep,
    public_keys_among,
)
from ingest import thread_pool
from review.services import Action, record_approve, record_reject, record_take_down
from tests.factories import BrandFactory
from tests.support import curator, rollback_each_example
from tests.visibility_support import album, keys_of, public_files

pytestmark = pytest.mark.django_db


class Edge:
    """A cache stand-in for the purge: confirms each purge as config/varnish.vcl does, or
    answers 503 while ``failing``."""

    def __init__(self) -> None:
        self.failing = False
        self.purges = 0
        edge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_PURGE(self):  # noqa: N802 - the method's name
                edge.purges += 1
                self.send_response(503 if edge.failing else 200)
                self.send_header("X-Purged", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def edge(settings, public_copies):
    cache = Edge()
    settings.EDGE_PURGE_BACKEND = "http"
    settings.EDGE_PURGE_URLS = [cache.url]
    yield cache
    cache.close()


def later(minutes: int = 30):
    """The clock past every back-off."""
    return time_machine.travel(timezone.now() + timedelta(minutes=minutes))


# --- Brand changes -------------------------------------------------------------------------------


def test_a_brand_change_is_deleted_once_its_tags_are_purged(edge):
    brand = BrandFactory(slug="acme")
    brand.name = "Acme Studios"
    brand.save()
    assert MediaChange.objects.get().record_id is None

    run = media_changes_process()

    assert (run.changes, run.done, run.ok) == (1, 1, True)
    assert not MediaChange.objects.exists() and edge.purges == 1


def test_a_thousand_brand_edits_hold_no_approval_back(edge):
    # Given more brand changes than a run reads at once, then an approval...
    brand = BrandFactory()
    for n in range(BATCH + 5):
        brand.name = f"Acme {n}"
        brand.save()
    runway = album(status="pending")
    record_approve(record=runway, actor=curator())

    # ...the job's run reads them all and ends, and the album is public.
    run = media_changes_run()

    assert run is not None and run.ok and run.done == BATCH + 6
    assert not MediaChange.objects.exists()
    assert public_files() == keys_of(runway)


def test_the_sweep_ends_whatever_fails(edge):
    edge.failing = True
    BrandFactory().save()
    for _ in range(3):
        record_approve(record=album(status="pending"), actor=curator())
    MediaChange.objects.update(created_at=timezone.now() - timedelta(hours=1))

    sweep = media_sweep()

    assert sweep.failed >= 1
    assert MediaChange.objects.filter(attempts=1).count() == 4  # tried once, then waiting


# --- A change that keeps failing backs off, and the rest go on ----------------------------------


def test_a_failing_purge_backs_off_and_a_later_change_goes_first(edge, settings):
    settings.VISIBILITY_RETRY_INTERVALS = [60, 600]
    edge.failing = True
    first = album(status="pending")
    record_approve(record=first, actor=curator())
    media_changes_process()
    failed = MediaChange.objects.get()
    assert (failed.attempts, failed.bytes_done) == (1, True)
    assert failed.due_at - timezone.now() > timedelta(seconds=50)

    edge.failing = False
    second = album(status="pending", photos=("rocket",))
    record_approve(record=second, actor=curator())
    run = media_changes_process()

    assert run.changes == 1 and run.ok  # the second album's, not the waiting one's
    assert list(MediaChange.objects.values_list("pk", flat=True)) == [failed.pk]
    with later():
        assert media_changes_process().ok
    assert not MediaChange.objects.exists()


def test_back_offs_grow_then_hold(settings):
    from catalog.visibility import change_backoff

    settings.VISIBILITY_RETRY_INTERVALS = [2, 10, 60]

    assert [change_backoff(n).total_seconds() for n in (1, 2, 3, 4, 9)] == [2, 10, 60, 60, 60]


# --- The lock ------------------------------------------------------------------------------------


def hold_the_lock():
    """Another session holding the outbox's lock, as a live run in another worker does."""
    holder = connections.create_connection("default")
    with holder.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [0x6D656469615F7275])
    return holder


def lock_is_free() -> bool:
    with changes_lock() as held:
        return held


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_lock_dies_with_the_session_that_held_it():
    holder = hold_the_lock()
    try:
        assert not lock_is_free()  # a live holder: a run leaves the changes to it

        holder.close()  # a worker killed: its connection closes, and its lock with it

        deadline = time.monotonic() + 10  # the server notices the closed socket at once
        while not lock_is_free():
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        holder.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_run_that_finds_the_lock_taken_leaves_the_changes(edge):
    holder = hold_the_lock()
    try:
        record_approve(record=album(status="pending"), actor=curator())

        assert media_changes_run() is None  # the holder takes them

        assert thread_pool.wait_idle(timeout=60)  # the run its commit asked for, likewise
        assert MediaChange.objects.count() == 1
    finally:
        holder.close()


# --- The property --------------------------------------------------------------------------------

ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("brand"), st.integers(0, 1)),
        st.tuples(st.sampled_from(["approve", "unpublish", "take down"]), st.integers(0, 2)),
        st.tuples(st.just("edge"), st.booleans()),  # the edge fails (True) or answers
        st.tuples(st.just("run"), st.booleans()),  # a run, after the back-offs (True) or now
    ),
    max_size=14,
)
PHOTOS = [("astronaut", "coffee"), ("coffee", "rocket"), ("chelsea",)]


@given(actions=ACTIONS)
def test_every_change_is_done_or_waiting_with_an_error_and_the_store_is_the_rule(edge, actions):
    with rollback_each_example(), time_machine.travel(timezone.now(), tick=False) as clock:
        shutil.rmtree(Path(storages["public"].location), ignore_errors=True)
        edge.failing = False
        brands = [BrandFactory(), BrandFactory()]
        albums = [album(status="pending", photos=photos) for photos in PHOTOS]
        keys = set().union(*(keys_of(a, live_only=False) for a in albums))

        for action, value in actions:
            if action == "brand":
                brands[value].name += "!"
                brands[value].save()
            elif action == "edge":
                edge.failing = value
            elif action == "run":
                if value:
                    clock.shift(timedelta(hours=1))
                media_changes_process()
                # Every change is done (deleted) or waiting out a back-off with its error...
                for change in MediaChange.objects.all():
                    assert change.attempts >= 1 and change.error, change
                    assert change.due_at > timezone.now(), change
                # ...and the public store holds exactly what the rule says.
                assert public_files() == public_keys_among(keys)
            else:
                record = type(albums[value]).objects.get(pk=albums[value].pk)
                try:
                    if action == "approve":
                        record_approve(record=record, actor=curator())
                    elif action == "unpublish":
                        record_reject(
                            record=record, actor=curator(), reason="x", action=Action.UNPUBLISH
                        )
                    else:
                        record_take_down(record=record, actor=curator(), reason="x")
                except RecordWriteRefused:
                    pass

        # And once the edge answers, every change ends.
        edge.failing = False
        clock.shift(timedelta(hours=1))
        media_changes_process()
        assert not MediaChange.objects.exists()
        assert public_files() == public_keys_among(keys)
