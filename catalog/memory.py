"""The decode budget of this process: every image decoded at once, by any thread, for ingest's
checks and hash (ingest.memory's cost model) or for renditions (catalog.imaging's), shares it.

One per process, not per job: the bound that matters is the worker's memory, whatever runs in
it (an rq work-horse runs one job, the embedded mode one job at a time in a thread, the
renditions backfill one image per thread). The cost models, their measurements and the bound
they give a worker: docs/hashing.md, "Decode memory", and docs/renditions.md, "Memory".
"""

import contextlib
import ctypes
import ctypes.util
import threading
from collections.abc import Iterator

from django.conf import settings

MIB = 1024 * 1024


class DecodeBudget:
    """Bytes that the images decoded at once, by any thread, may hold together.

    A decode reserves its estimated cost (ingest.memory.decode_cost for ingest's,
    catalog.imaging.render_cost for a rendition's) and waits while the others' reservations
    leave too little; no reservation is ever larger than ``limit`` (the caller refuses that
    image), and each thread holds one at a time, so a wait always ends when another decode
    does.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free = limit
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def reserve(self, cost: int) -> Iterator[None]:
        if cost > self.limit:
            raise ValueError(f"a reservation of {cost} bytes can never fit in {self.limit}")
        with self._changed:
            self._changed.wait_for(lambda: self._free >= cost)
            self._free -= cost
        try:
            yield
        finally:
            with self._changed:
                self._free += cost
                self._changed.notify_all()

    @property
    def reserved(self) -> int:
        with self._changed:
            return self.limit - self._free


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
_MMAP_THRESHOLD_BYTES = 1024 * 1024

_lock = threading.Lock()
_budget: DecodeBudget | None = None


def decode_budget() -> DecodeBudget:
    """The shared budget of INGEST_DECODE_MEMORY_BYTES (a new one if the setting changed)."""
    global _budget
    limit = settings.INGEST_DECODE_MEMORY_BYTES
    with _lock:
        if _budget is None:
            _return_freed_blocks()
        if _budget is None or _budget.limit != limit:
            _budget = DecodeBudget(limit)
        return _budget


def _return_freed_blocks() -> None:
    """Make glibc hand big freed blocks back to the system instead of keeping them.

    Once it has freed one mmapped block, glibc raises its mmap threshold up to 32 MiB, and
    later blocks below that come from per-thread arenas that keep them when freed, so download
    threads decoding in turn each kept a decode's worth of memory, far beyond the budget
    (measured: docs/hashing.md, "Decode memory"). Setting the threshold also stops it moving.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES)
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
        pass
