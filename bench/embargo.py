"""Embargoes through the edge (docs/editors.md, "Embargoes"; issue 33's targets), on the stack
of bench/edge_stack.py: Varnish in front of gunicorn, the purge on, an rq worker with rq's
scheduler, whose jobs at each go-live and expiry move the bytes and purge the edge.

1. Go-live: BENCH_EMBARGO_ALBUMS (100) pending albums of IMAGES pictures (each an original and
   a rendition URL), approved for one go-live minute. Until then a reader polls each album's
   detail and image URLs through Varnish (none may answer 200); from the go-live time on, for
   each album, when its detail and every one of its image URLs first answer 200 through
   Varnish, after the go-live time: median, p95, max.
2. Expiry: BENCH_EMBARGO_EXPIRING (20) of those albums, read through Varnish until cached,
   given one expiry time: when each one's detail and every image URL answer 404 through
   Varnish, after the expiry time: median, p95, max; and none gone before it.

Run: .venv/bin/python bench/embargo.py
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.edge_stack import Stack, edge_stack  # noqa: E402

ALBUMS = int(os.environ.get("BENCH_EMBARGO_ALBUMS", "100"))
EXPIRING = int(os.environ.get("BENCH_EMBARGO_EXPIRING", "20"))
IMAGES = 4
READERS = 8
LEAD = 20  # seconds between the last approval and the go-live


def main() -> int:
    with edge_stack("bench_embargo") as stack:
        live = go_live(stack)
        expiry(stack, live[:EXPIRING])
    return 0


def go_live(stack: Stack) -> list[str]:
    from django.utils import timezone

    from catalog.models import Runway
    from review.services import record_approve_for

    albums = [stack.album(IMAGES, status="pending", n=n) for n in range(ALBUMS)]
    details = [f"/api/v1/runways/{album.pk}/" for album in albums]
    images = {detail: _image_paths(album) for detail, album in zip(details, albums, strict=True)}
    at = _next_whole_second(timezone.now() + timedelta(seconds=LEAD))
    for album in albums:
        record_approve_for(record=album, actor=stack.editor, go_live_at=at)
    assert Runway.objects.filter(status="published", bytes_public=False).count() == ALBUMS

    at_mono = time.monotonic() + (at - timezone.now()).total_seconds()
    shown, early = _watch(stack, {d: [d, *images[d]] for d in details}, at_mono, 200)
    late = sorted(shown.values())
    print(
        f"embargo bench: {ALBUMS} albums of {IMAGES} pictures, one go-live time "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"  go-live -> detail and all {IMAGES * 2} image URLs 200 through Varnish: median "
        f"{_s(statistics.median(late))}, p95 {_s(_p95(late))}, max {_s(late[-1])}; "
        f"{len(shown)}/{ALBUMS} shown, {len(early)} URLs answered 200 early"
    )
    return [detail for detail, _ in sorted(shown.items(), key=lambda item: item[1])]


def expiry(stack: Stack, details: list[str]) -> None:
    from django.utils import timezone

    from catalog.models import Runway
    from review.services import record_schedule

    urls = {detail: stack.urls(detail) for detail in details}
    for detail in details:
        for path in [detail, *urls[detail]]:
            stack.get(path)
            assert stack.varnish.get(path)[1].get("X-Cache") == "hit", path
    at = _next_whole_second(timezone.now() + timedelta(seconds=LEAD))
    for detail in details:
        runway = Runway.objects.get(pk=int(detail.rstrip("/").rpartition("/")[2]))
        record_schedule(record=runway, actor=stack.editor, go_live_at=None, expires_at=at)

    at_mono = time.monotonic() + (at - timezone.now()).total_seconds()
    gone, early = _watch(stack, {d: [d, *urls[d]] for d in details}, at_mono, 404)
    late = sorted(gone.values())
    print(
        f"  expiry of {len(details)} cached albums -> detail and every image URL 404 through "
        f"Varnish: median {_s(statistics.median(late))}, p95 {_s(_p95(late))}, max "
        f"{_s(late[-1])}; {len(gone)}/{len(details)} gone, {len(early)} URLs gone early"
    )


def _watch(
    stack: Stack, albums: dict[str, list[str]], at: float, status: int
) -> tuple[dict[str, float], list[str]]:
    """READERS threads read each album's paths through Varnish, round after round: the
    seconds after ``at`` (time.monotonic) at which all of an album's paths first answered
    ``status``, by album; and the paths that answered it in a request ended before ``at``."""
    reached: dict[str, float] = {}
    early: list[str] = []

    def reader(mine: list[str]) -> None:
        waiting = list(mine)
        while waiting and time.monotonic() < at + 120:
            for album in list(waiting):
                if time.monotonic() < at - 1:
                    # Until just before the time, a reader's pace: uncached 404s reach gunicorn.
                    time.sleep(0.05)
                started = time.monotonic()
                answers = {path: stack.get(path) for path in albums[album]}
                ended = time.monotonic()
                if ended < at:
                    early.extend(path for path, got in answers.items() if got == status)
                elif started >= at and all(got == status for got in answers.values()):
                    reached[album] = ended - at
                    waiting.remove(album)

    threads = [
        threading.Thread(target=reader, args=(list(albums)[n::READERS],)) for n in range(READERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reached, early


def _image_paths(album) -> list[str]:
    """The paths its image URLs will have once shown: the public store's, by key."""
    from catalog.visibility.stores import public_url

    paths = []
    for image in album.images.order_by("sort_order"):
        paths.append(public_url(image.storage_key))
        paths += [public_url(r["key"]) for r in image.renditions]
    return paths


def _next_whole_second(moment: datetime) -> datetime:
    return moment.replace(microsecond=0) + timedelta(seconds=1)


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else 0


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


if __name__ == "__main__":
    raise SystemExit(main())
