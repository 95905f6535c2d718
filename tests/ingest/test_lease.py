"""The lease of a running job (ingest.lease): renewed from a thread of its own while the
execution runs, and no longer once the job is not this execution's."""

import threading
import time

import pytest

from ingest.lease import renewing
from ingest.models import IngestJob
from ingest.services import ingest_job_claim
from tests.factories import IngestJobFactory

# The renewals run on a connection of their own: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)


def heartbeat(job: IngestJob):
    return IngestJob.objects.values_list("heartbeat_at", flat=True).get(pk=job.pk)


def renewer_alive(job: IngestJob) -> bool:
    return any(t.name == f"ingest-lease-{job.pk}" for t in threading.enumerate())


def test_an_execution_renews_its_lease_until_the_job_is_no_longer_its_own():
    job = IngestJobFactory(status="queued")
    claim = ingest_job_claim(job_id=job.pk, lease=True)
    claimed_at = heartbeat(job)
    assert claimed_at is not None

    with renewing(claim, interval=0.05):
        deadline = time.monotonic() + 10
        while heartbeat(job) == claimed_at and time.monotonic() < deadline:
            time.sleep(0.02)
        assert heartbeat(job) > claimed_at

        # When reconcile reclaims the job (or another execution takes it over).
        IngestJob.objects.filter(pk=job.pk).update(status="stale")
        renewed = heartbeat(job)
        deadline = time.monotonic() + 10
        while renewer_alive(job) and time.monotonic() < deadline:
            time.sleep(0.02)

        # Then the renewals stop at the fence, before the block ends.
        assert not renewer_alive(job)
        assert heartbeat(job) == renewed


def test_the_renewals_stop_with_the_execution():
    job = IngestJobFactory(status="queued")
    claim = ingest_job_claim(job_id=job.pk, lease=True)

    with renewing(claim, interval=0.05):
        assert renewer_alive(job)

    assert not renewer_alive(job)
    stopped = heartbeat(job)
    time.sleep(0.2)
    assert heartbeat(job) == stopped
