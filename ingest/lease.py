"""The lease of a running job: how an execution shows it is alive.

An rq work horse renews its job's lease (``IngestJob.heartbeat_at``) from a thread of its own
every INGEST_WORKER_HEARTBEAT_SECONDS while the job runs. A lease silent for three of them
means the execution died with its process (SIGKILL, the OOM killer, a native crash, a lost
node): `reconcile` reclaims the job, and a second delivery of the job takes it over; a live
lease makes a second delivery a no-op. The lease is in the database, beside the job it
guards, so what Redis forgets or duplicates (an outage, a restart without persistence, rq's
cleanup of an earlier execution under the same rq id) never makes a healthy execution look
dead or run twice.
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connections

from ingest.services import Claim, ingest_job_renew

logger = logging.getLogger(__name__)


@contextmanager
def renewing(claim: Claim, *, interval: float | None = None) -> Iterator[None]:
    """Renew ``claim``'s lease in a background thread while the block runs.

    The thread has its own database connection, so a renewal never waits for the job's
    statements (or its transaction). It stops when the block ends, or once the job is no
    longer this execution's (reclaimed, finished): the fence then stops the rest.
    """
    every = interval or settings.INGEST_WORKER_HEARTBEAT_SECONDS
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(every):
                try:
                    if not ingest_job_renew(claim=claim):
                        return
                except DatabaseError:
                    # The next renewal tries again; three missed ones and reconcile decides.
                    logger.warning("ingest job %s: lease not renewed", claim.job_id, exc_info=True)
                    connections["default"].close()
        finally:
            connections.close_all()  # this thread's own

    thread = threading.Thread(target=renew, name=f"ingest-lease-{claim.job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
