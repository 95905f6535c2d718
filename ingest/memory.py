"""The decode budget of this process: every image a worker analyses at once shares it.

One per process, not per job: the bound that matters is the worker's memory, whatever runs in
it (an rq work-horse runs one job, the embedded mode one job at a time in a thread).
"""

import ctypes
import ctypes.util
import threading

from django.conf import settings

from ingest.hashing import DecodeBudget

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
    later blocks below that come from per-thread arenas that keep them when freed. So eight
    download threads decoding in turn each kept a decode's worth: a worker grew by 581 MiB on
    an album whose decodes never held more than 256 MiB at once, and by 298 MiB with a fixed
    threshold (tests/ingest/test_memory.py). Setting the threshold also stops it moving.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES)
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
        pass
