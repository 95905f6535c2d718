"""Two writers on one album at the same moment, on real concurrent PostgreSQL connections:
the row lock makes them take turns, and the one that comes second sees the first one's
write and is refused instead of applying over it."""

import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections, transaction

from catalog.models import StreetSnap, StreetSnapImage
from catalog.services import RecordWriteRefused, street_image_attach
from review.models import ReviewEvent
from review.services import record_approve
from tests.factories import RunwayFactory, StreetSnapFactory, StreetSnapImageFactory
from tests.support import curator

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def in_thread(target, *args):
    """Run `target` on its own database connection; return (thread, outcome list)."""
    outcome: list = []

    def run():
        try:
            outcome.append(("ok", target(*args)))
        except Exception as error:  # noqa: BLE001 - the test inspects whatever happened
            outcome.append(("error", error))
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def wait_until_a_backend_waits_for_a_lock(deadline_seconds: float = 20.0) -> None:
    """Block until another connection of this database is waiting on a row lock."""
    end = time.monotonic() + deadline_seconds
    with connection.cursor() as cursor:
        while time.monotonic() < end:
            # Statistics views are a snapshot per transaction: take a fresh one each time.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock' "
                "AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)  # polling an observable condition, not guessing a duration
    raise AssertionError("the other writer never waited for the row lock")


def test_two_editors_approving_at_once_exactly_one_wins():
    runway = RunwayFactory()
    editors = [User.objects.create_superuser(name, password="x") for name in ("anna", "bob")]
    start = threading.Barrier(2)

    def approve(editor):
        start.wait()
        return record_approve(record=runway, actor=editor, expected_version=1)

    runs = [in_thread(approve, editor) for editor in editors]
    for thread, _ in runs:
        thread.join(timeout=60)

    outcomes = [outcome[0] for _, outcome in runs]
    assert sorted(kind for kind, _ in outcomes) == ["error", "ok"]
    [(_, refusal)] = [o for o in outcomes if o[0] == "error"]
    assert isinstance(refusal, RecordWriteRefused)
    assert ReviewEvent.objects.count() == 1
    runway.refresh_from_db()
    assert (runway.status, runway.version) == ("published", 2)


def test_a_curation_waits_for_the_lock_and_then_sees_the_other_write():
    snap = StreetSnapFactory()
    main = StreetSnapImageFactory(street_snap=snap, sort_order=0)
    image = StreetSnapImageFactory(street_snap=snap, sort_order=1)

    with transaction.atomic():
        # Another writer holds the album's lock (as every catalog write does) ...
        StreetSnap.objects.select_for_update().get(pk=snap.pk)
        thread, outcome = in_thread(
            lambda: street_image_attach(
                actor=curator(), image=image, main=main, expected_version=None
            )
        )
        wait_until_a_backend_waits_for_a_lock()
        # ... and deletes the main image the editor is attaching to, then commits.
        StreetSnapImage.objects.filter(pk=main.pk).update(deleted_at="2026-01-01T00:00:00Z")
    thread.join(timeout=60)

    [(kind, result)] = outcome
    assert kind == "error" and "has been deleted" in str(result)
    image.refresh_from_db()
    assert (image.is_detail, image.parent_id) == (False, None)
