"""How an ingest job ends early: retried later (JobRetry) or ended with a status (JobEnd). Pure:
no Django at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.models import Runway, StreetSnap


class JobRetry(Exception):
    """Trying again later may help: the job is handed back for rq's retry while attempts
    remain, and ends as failed with ``reason`` on the last one."""

    def __init__(self, reason: str, error: str) -> None:
        super().__init__(error)
        self.reason = reason
        self.error = error


class JobEnd(Exception):
    """The job ends here with this status (skipped or failed), for a known reason."""

    def __init__(
        self, status: str, reason: str, error: str = "", record: Runway | StreetSnap | None = None
    ):
        super().__init__(error or reason)
        self.status = status
        self.reason = reason
        self.error = error
        self.record = record
