"""Concurrent jobs for one new album, on PostgreSQL with real connections: exactly one record,
one job succeeded, the others skipped, none failed."""

import threading
from collections import Counter

import pytest
from django.db import connections

from catalog.models import Runway, RunwayImage
from ingest import pipeline, writing
from ingest.models import IngestJob
from ingest.serializers import album_checksum, album_validate
from tests.factories import BrandFactory, IngestJobFactory
from tests.ingest.support import jpeg, runway_album

JOBS = 20


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_jobs_for_one_new_album_make_one_record(image_server, monkeypatch):
    # Given twenty accepted jobs for the same album (a crawler re-sending it in a loop).
    BrandFactory(name="Acme", slug="acme")
    urls = [
        image_server.add("/1.jpg", jpeg("astronaut", size=256)),
        image_server.add("/2.jpg", jpeg("coffee", size=256)),
    ]
    album = album_validate(runway_album(urls))
    jobs = [
        IngestJobFactory(
            payload=album, payload_checksum=album_checksum(album), source_url=album["source_url"]
        )
        for _ in range(JOBS)
    ]
    # Every job has looked the album up and downloaded its images before any of them may
    # write: all twenty then race for the one final transaction. The gate opens when the last
    # job arrives, however long a loaded machine takes to get them there (a barrier with a
    # timeout would turn slowness into twenty failed jobs).
    progress = threading.Condition()
    counts = {"at_the_write": 0, "ended_before": 0}
    gate = threading.Event()
    real_write = writing.write_album

    def write_together(*args, **kwargs):
        with progress:
            counts["at_the_write"] += 1
            progress.notify_all()
        gate.wait()
        return real_write(*args, **kwargs)

    monkeypatch.setattr(writing, "write_album", write_together)
    errors: list[BaseException] = []

    def work(job_id: int) -> None:
        try:
            pipeline.run_job(job_id, final_attempt=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()
            if not gate.is_set():
                # Ended while the gate was shut, so before the write (a failure): the test
                # must not wait for this job to arrive; the assertions below report it.
                with progress:
                    counts["ended_before"] += 1
                    progress.notify_all()

    # When they run at once, each on its own database connection.
    threads = [threading.Thread(target=work, args=(job.pk,)) for job in jobs]
    for thread in threads:
        thread.start()
    with progress:
        progress.wait_for(lambda: sum(counts.values()) == JOBS, timeout=600)
    gate.set()
    for thread in threads:
        thread.join(timeout=300)

    # Then one record, one success, the rest skipped, none failed.
    assert errors == []
    outcomes = Counter(IngestJob.objects.values_list("status", "reason"))
    assert counts == {"at_the_write": JOBS, "ended_before": 0}, outcomes
    statuses = Counter(IngestJob.objects.values_list("status", flat=True))
    assert statuses == {"succeeded": 1, "skipped": JOBS - 1}, outcomes
    reasons = Counter(IngestJob.objects.filter(status="skipped").values_list("reason", flat=True))
    assert set(reasons) <= {"lost_race", "exists_pending"}, reasons
    runway = Runway.objects.get()
    assert RunwayImage.objects.count() == 2
    assert runway.image_count == 2
    winner = IngestJob.objects.get(status="succeeded")
    assert runway.ingest_job_id == winner.pk
    assert set(IngestJob.objects.values_list("runway_id", flat=True)) == {runway.pk}
