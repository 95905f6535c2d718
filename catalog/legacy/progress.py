"""Progress of the legacy import's long passes, reported every so many rows."""

from __future__ import annotations

from collections.abc import Callable

PROGRESS_EVERY = 10_000

ProgressFn = Callable[[str, int, int], None]


def no_progress(stage: str, done: int, total: int) -> None:
    return None


class Ticker:
    """Calls `progress(stage, done, total)` every `every` rows and once at the end."""

    def __init__(self, progress: ProgressFn, stage: str, total: int, every: int = PROGRESS_EVERY):
        self.progress, self.stage, self.total, self.every = progress, stage, total, every
        self.done = 0
        self._next = every

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.done >= self._next:
            self.progress(self.stage, self.done, self.total)
            self._next = (self.done // self.every + 1) * self.every

    def finish(self) -> None:
        self.progress(self.stage, self.done, self.total)
