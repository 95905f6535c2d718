"""The edge, measured (docs/operations.md, "The edge"): Varnish (Debian's varnishd with
config/varnish.vcl) in front of gunicorn, the purge on (EDGE_PURGE_BACKEND=http), the public
store a folder of copies (PUBLIC_MEDIA_ROOT, so bytes really move), an rq worker serving the
visibility queue.

1. Hit ratio: BENCH_EDGE_CLIENTS (8) threads read list pages, details of the hot albums, the
   index and brands through Varnish for BENCH_EDGE_SECONDS (60) while an editor unpublishes and
   republishes an album every 10 s; requests served, requests that reached gunicorn, the ratio.
2. Takedown: from an editor's unpublish (the service's commit) to the detail answering 404
   through Varnish, and to every image URL of the album answering 404 at the origin and
   through Varnish. Median and max of BENCH_EDGE_TAKEDOWNS (7).
3. Publishing a 60-image album: from the approve's commit to the detail answering 200 through
   Varnish with every URL it shows (originals and renditions) answering 200.
4. The long tail a frontend makes: TAIL_URLS (10,000) distinct list, filter, page, search and
   facets URLs, read at TAIL_RATE (200) requests a second spread Zipf-like over them (the
   k-th most read is read 1/k as often) for BENCH_EDGE_TAIL_SECONDS (120), after one read of
   each (an edge that has run a while has seen them), while an editor approves an album every
   10 s: the lists' hit ratio, and the requests that reached gunicorn (a page past its short
   s-maxage is served in grace while its next version is fetched: the client's hit, one fetch).

The stack, its database (bench_edge, made afresh) and its Redis: bench/edge_stack.py.

Run: .venv/bin/python bench/edge.py
"""

from __future__ import annotations

import http.client
import os
import random
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.edge_stack import Stack, edge_stack, ms, until  # noqa: E402

SECONDS = float(os.environ.get("BENCH_EDGE_SECONDS", "60"))
CLIENTS = int(os.environ.get("BENCH_EDGE_CLIENTS", "8"))
TAKEDOWNS = int(os.environ.get("BENCH_EDGE_TAKEDOWNS", "7"))
TAIL_SECONDS = float(os.environ.get("BENCH_EDGE_TAIL_SECONDS", "120"))
TAIL_URLS = 10_000
TAIL_RATE = 200
RUNWAYS = 120
IMAGES = 4  # per seeded runway
BIG_ALBUM = 60


def main() -> int:
    with edge_stack("bench_edge") as stack:
        bench = Bench(stack)
        bench.seed()
        print(f"edge bench: {RUNWAYS} published runways of {IMAGES} images, {CLIENTS} clients")
        bench.hit_ratio()
        bench.takedowns()
        bench.publish_big_album()
        bench.long_tail()
    return 0


class Bench:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.varnish = stack.varnish
        self.editor = stack.editor

    def seed(self) -> None:
        from catalog.visibility import media_sweep

        self.runways = [self.stack.album(IMAGES, status="published", n=n) for n in range(RUNWAYS)]
        media_sweep()  # copies their bytes and shows them, as for an operator's SQL publish
        from catalog.models import PublicObject, Runway

        shown = Runway.objects.filter(bytes_public=True).count()
        copies = PublicObject.objects.filter(confirmed=True).count()
        assert (shown, copies) == (RUNWAYS, RUNWAYS * IMAGES * 2), (shown, copies)
        self.hot = [r.pk for r in self.runways[:40]]

    # --- 1. hit ratio --------------------------------------------------------------------------

    def hit_ratio(self) -> None:
        from review.services import Action, record_approve, record_reject

        paths = ["/api/v1/runways/", "/api/v1/runways/?page=2", "/api/v1/index/", "/api/v1/brands/"]
        paths += [f"/api/v1/runways/{pk}/" for pk in self.hot]
        for path in paths:  # warm
            self.varnish.get(path)
        counts: Counter[str] = Counter()
        lock = threading.Lock()
        stop = time.monotonic() + SECONDS

        def client(seed: int) -> None:
            rng = random.Random(seed)  # noqa: S311 - a load pattern
            connection = http.client.HTTPConnection("127.0.0.1", self.varnish.port, timeout=30)
            local: Counter[str] = Counter()
            while time.monotonic() < stop:
                connection.request("GET", rng.choice(paths), headers={"Host": "localhost"})
                answer = connection.getresponse()
                answer.read()
                local[answer.getheader("X-Cache", "miss")] += 1
            connection.close()
            with lock:
                counts.update(local)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        churned = 0
        target = self.runways[-1]
        while time.monotonic() < stop - 1:
            time.sleep(min(10, max(0, stop - time.monotonic() - 1)))
            if time.monotonic() >= stop - 1:
                break
            record_reject(record=target, actor=self.editor, reason="bench", action=Action.UNPUBLISH)
            target.refresh_from_db()
            target.status = "pending"
            target.save(update_fields=["status"])
            record_approve(record=target, actor=self.editor)
            churned += 1
        for thread in threads:
            thread.join()
        served = counts["hit"] + counts["miss"]
        print(
            f"  hot pages, {SECONDS:.0f} s, {churned} unpublish+approve during it: "
            f"{served} requests ({served / SECONDS:.0f}/s), {counts['miss']} reached the "
            f"origin, hit ratio {counts['hit'] / served:.2%}"
        )

    # --- 2. takedown ---------------------------------------------------------------------------

    def takedowns(self) -> None:
        from review.services import Action, record_reject

        detail_times, image_origin, image_edge = [], [], []
        for record in self.runways[40 : 40 + TAKEDOWNS]:
            detail = f"/api/v1/runways/{record.pk}/"
            urls = self.stack.urls(detail)
            for path in [detail, *urls]:
                self.varnish.get(path)
                assert self.varnish.get(path)[1].get("X-Cache") == "hit", path
            start = time.monotonic()
            record_reject(
                record=record, actor=self.editor, reason="takedown request", action=Action.UNPUBLISH
            )
            detail_times.append(until(self.stack.answers(detail, 404)) - start)
            image_origin.append(until(self.stack.all_gone(urls, origin=True)) - start)
            image_edge.append(until(self.stack.all_gone(urls, origin=False)) - start)
        print(
            f"  unpublish -> detail 404 through Varnish: median {ms(detail_times)}, "
            f"max {max(detail_times) * 1000:.0f} ms ({TAKEDOWNS} albums)"
        )
        print(
            f"  unpublish -> all {len(urls)} image URLs 404: at the origin median "
            f"{ms(image_origin)} (max {max(image_origin) * 1000:.0f} ms), through Varnish median "
            f"{ms(image_edge)} (max {max(image_edge) * 1000:.0f} ms)"
        )

    # --- 3. publishing a 60-image album ----------------------------------------------------------

    def publish_big_album(self) -> None:
        from review.services import record_approve

        runway = self.stack.album(BIG_ALBUM, status="pending", n=10_000)
        detail = f"/api/v1/runways/{runway.pk}/"
        assert self.varnish.get(detail)[0] == 404
        start = time.monotonic()
        record_approve(record=runway, actor=self.editor)
        shown = until(lambda: self.varnish.get(detail)[0] == 200, timeout=120) - start
        urls = self.stack.urls(detail)
        answering = (
            until(lambda: all(self.varnish.get(u)[0] == 200 for u in urls), timeout=120) - start
        )
        print(
            f"  approve of a {BIG_ALBUM}-image album -> detail 200 through Varnish: "
            f"{shown * 1000:.0f} ms; every one of its {len(urls)} URLs 200: "
            f"{answering * 1000:.0f} ms"
        )

    # --- 4. the long tail ---------------------------------------------------------------------

    def long_tail(self) -> None:
        from review.services import record_approve

        urls = _tail_urls(TAIL_URLS)
        rng = random.Random(4)  # noqa: S311 - a load pattern
        rng.shuffle(urls)  # which URL is the k-th most read
        weights = [1 / k for k in range(1, len(urls) + 1)]
        pending = [
            self.stack.album(IMAGES, status="pending", n=20_000 + n)
            for n in range(int(TAIL_SECONDS // 10) + 2)
        ]
        self._read_all(urls)  # an edge that has run a while has seen each
        served_before = self.stack.origin_requests()
        counts: Counter[str] = Counter()
        lock = threading.Lock()
        stop = time.monotonic() + TAIL_SECONDS
        threads = 8

        def client(seed: int) -> None:
            local_rng = random.Random(seed)  # noqa: S311 - a load pattern
            connection = http.client.HTTPConnection("127.0.0.1", self.varnish.port, timeout=30)
            local: Counter[str] = Counter()
            due = time.monotonic()
            for path in local_rng.choices(urls, weights, k=int(TAIL_RATE * TAIL_SECONDS)):
                due += threads / TAIL_RATE
                time.sleep(max(0, due - time.monotonic()))
                if time.monotonic() >= stop:
                    break
                connection.request("GET", path, headers={"Host": "localhost"})
                answer = connection.getresponse()
                answer.read()
                local[answer.getheader("X-Cache", "miss")] += 1
            connection.close()
            with lock:
                counts.update(local)

        workers = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        approved = 0
        while time.monotonic() < stop - 10 and pending:
            time.sleep(10)
            record_approve(record=pending.pop(), actor=self.editor)
            approved += 1
        for worker in workers:
            worker.join()
        served = counts["hit"] + counts["miss"]
        print(
            f"  long tail: {len(urls):,} URLs, Zipf-like, {TAIL_SECONDS:.0f} s at "
            f"{served / TAIL_SECONDS:.0f}/s, {approved} approvals during it: hit ratio "
            f"{counts['hit'] / served:.2%} ({counts['miss']} misses); gunicorn answered "
            f"{self.stack.origin_requests() - served_before} requests (misses and grace fetches)"
        )

    def _read_all(self, urls: list[str]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.varnish.port, timeout=30)
        for path in urls:
            connection.request("GET", path, headers={"Host": "localhost"})
            connection.getresponse().read()
        connection.close()


def _tail_urls(count: int) -> list[str]:
    """Distinct list, filter, page, search and facets URLs, as a frontend's visitors make them."""
    from bench.public_api_parts.data import CITIES, TYPES, VOCABULARY

    years = range(2000, 2031)
    brands = [f"brand-{n}" for n in range(12)]
    found: dict[str, None] = {}
    rng = random.Random(7)  # noqa: S311 - a load pattern
    while len(found) < count:
        kind = rng.random()
        query: list[tuple[str, object]] = []
        if kind < 0.35:
            path = "/api/v1/runways/"
            for name, values in (("brand", brands), ("year", years), ("collection_type", TYPES)):
                if rng.random() < 0.4:
                    query.append((name, rng.choice(list(values))))
            if not query and rng.random() < 0.5:
                query.append(("page", rng.randint(2, 6)))
        elif kind < 0.55:
            path = "/api/v1/runways/"
            query.append(("q", " ".join(rng.sample(VOCABULARY, rng.randint(1, 2)))))
        elif kind < 0.75:
            path = rng.choice(["/api/v1/runways/facets/", "/api/v1/street-snaps/facets/"])
            if rng.random() < 0.7:
                query.append(("year", rng.choice(list(years))))
            if rng.random() < 0.5:
                query.append(("city", rng.choice(CITIES)))
        else:
            path = "/api/v1/street-snaps/"
            query.append(("city", rng.choice(CITIES)))
            if rng.random() < 0.5:
                query.append(("month", rng.randint(1, 12)))
        if rng.random() < 0.3:
            query.append(("page_size", rng.choice([10, 20, 50, 100])))
        # Encoded as a browser would (a city with a space or an accent: São Paulo).
        found[path + ("?" + urlencode(query) if query else "")] = None
    return list(found)


if __name__ == "__main__":
    raise SystemExit(main())
