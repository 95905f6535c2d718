"""A burst of albums end to end: renditions on the ingest queue (before issue 23) and on a
queue of their own that workers serve after ingest (after), side by side in one run.

Real processes: gunicorn serving the ingest endpoint, `manage.py rqworker` workers, photos
from a loopback HTTP server (60 runway-size 2000x3000 JPEGs with grain, as bench/renditions.py;
each album's copies made distinct by a JPEG comment, so no album repeats another's bytes).
Every album is a signed POST, as a crawler sends it.

1. Back to back, one worker: each album POSTed as soon as the one before it succeeded (its
   renditions then run on the worker while the next album arrives). Per album: POST ->
   succeeded (the job's finished_at), against the first album's (the worker idle: an album's
   time alone).
2. A burst: BURST albums POSTed at once, to 1 and to 2 worker processes. Per album: POST ->
   succeeded (in the review queue) and POST -> every image's renditions made (polled every
   0.1 s); p50 / p95 / max over the albums.

Before: RENDITIONS_QUEUE = the ingest queue's name (one FIFO queue, as before); workers serve
it. After: RENDITIONS_QUEUE of its own; workers serve `<ingest> <renditions>` in that order.

Needs PostgreSQL and Redis (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/
postgres: a database of its own, dropped at the end; BENCH_REDIS_URL, default
redis://127.0.0.1:6379/3: queues of its own). The machine is shared and noisy: read the
before/after ratios measured side by side, not absolute times.

Run: .venv/bin/python -u bench/burst.py   (BENCH_ALBUMS=10 BENCH_PHOTOS=60 BENCH_BACK_TO_BACK=4;
BENCH_PARTS=1: part 1 only)
"""

from __future__ import annotations

import json
import os
import statistics
import struct
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.dup_threshold import load_photo  # noqa: E402
from bench.hash_bench import SPEED_PHOTOS, runway_jpeg  # noqa: E402
from bench.throwaway import SECRET, JpegHandler, throwaway_site  # noqa: E402

BURST = int(os.environ.get("BENCH_ALBUMS", "10"))
PHOTOS = int(os.environ.get("BENCH_PHOTOS", "60"))
BACK_TO_BACK = int(os.environ.get("BENCH_BACK_TO_BACK", "4"))
PARTS = os.environ.get("BENCH_PARTS", "1,2")
ROUTINGS = ("before", "after")


class _Photos(JpegHandler):
    """GET /<tag>/<n>.jpg: photo n with the comment <tag> (distinct bytes, same pixels)."""

    bodies: list[bytes] = []

    def body(self, path: str) -> bytes | None:
        tag, _, name = path.strip("/").rpartition("/")
        try:
            base = self.bodies[int(name.removesuffix(".jpg"))]
        except (ValueError, IndexError):
            return None
        comment = tag.encode()
        return base[:2] + b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment + base[2:]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Bench:
    def __init__(self, env: dict[str, str], queue: str) -> None:
        self.env = env
        self.queue = queue
        self.photos = ThreadingHTTPServer(("127.0.0.1", 0), _Photos)
        threading.Thread(target=self.photos.serve_forever, daemon=True).start()
        self.web_port = _free_port()
        self.web = subprocess.Popen(  # noqa: S603 - our own app
            [sys.executable, "-m", "gunicorn", "config.wsgi"]
            + ["--bind", f"127.0.0.1:{self.web_port}", "--workers", "2", "--timeout", "60"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait(self._web_answers, "the web server")
        self.counter = 0

    def close(self) -> None:
        self.web.terminate()
        self.web.wait(timeout=30)
        self.photos.shutdown()

    # Processes.

    def workers(self, routing: str, count: int) -> tuple[list[subprocess.Popen], dict[str, str]]:
        renditions = self.queue if routing == "before" else f"{self.queue}-renditions"
        env = {**self.env, "RENDITIONS_QUEUE": renditions}
        queues = [self.queue] if routing == "before" else [self.queue, renditions]
        names = [f"{self.queue}-{routing}-{n}-{uuid.uuid4().hex[:4]}" for n in range(count)]
        workers = [
            subprocess.Popen(  # noqa: S603 - our own manage.py
                [sys.executable, "manage.py", "rqworker", *queues, "--with-scheduler"]
                + ["--name", name],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for name in names
        ]
        import redis

        client = redis.Redis.from_url(self.env["REDIS_URL"])
        # Registered and idle: a worker's start-up is not an album's time.
        self._wait(
            lambda: all(client.hget(f"rq:worker:{n}", "state") == b"idle" for n in names),
            "the workers",
        )
        return workers, env

    @staticmethod
    def stop(workers: list[subprocess.Popen]) -> None:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)

    # Albums.

    def post(self, tag: str) -> tuple[float, int]:
        """POST one album of PHOTOS photos; (time.time() before sending, the job's id)."""
        import http.client

        from standardwebhooks.webhooks import Webhook

        self.counter += 1
        host, port = self.photos.server_address[:2]
        album = {
            "kind": "runway",
            "source": "bench",
            "source_url": f"https://example.com/{tag}",
            "brand": "Acme",
            "season_code": f"FW{self.counter % 90 + 10}",
            "season": "Fall/Winter",
            "collection_type": tag,
            "year": 2026,
            "title": "Bench",
            "description": "",
            "images": [
                {"url": f"http://{host}:{port}/{tag}/{n}.jpg", "look_index": n + 1}
                for n in range(PHOTOS)
            ],
        }
        body = json.dumps(album)
        msg_id = f"msg_{uuid.uuid4().hex}"
        now = datetime.now(tz=UTC)
        headers = {
            "Content-Type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(SECRET).sign(msg_id, now, body),
        }
        connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=60)
        try:
            sent = time.time()
            connection.request("POST", "/api/ingest/v1/albums", body=body, headers=headers)
            answer = connection.getresponse()
            payload = json.loads(answer.read() or b"{}")
        finally:
            connection.close()
        if answer.status != 202:
            raise RuntimeError(f"POST answered {answer.status}: {payload}")
        return sent, int(payload["job_id"])

    def follow(self, posted: dict[int, float]) -> dict[int, tuple[float, float]]:
        """Until every job succeeded and its album's renditions exist: per job, seconds from
        its POST to succeeded (finished_at) and to the renditions (polled every 0.1 s)."""
        from catalog.models import RunwayImage
        from ingest.models import IngestJob

        succeeded: dict[int, float] = {}
        complete: dict[int, float] = {}
        runway_of: dict[int, int] = {}
        deadline = time.monotonic() + 1800
        while len(complete) < len(posted):
            if time.monotonic() > deadline:
                raise RuntimeError("the bench's jobs did not finish in 30 minutes")
            now = time.time()
            waiting = [pk for pk in posted if pk not in succeeded]
            for job in IngestJob.objects.filter(pk__in=waiting):
                if job.status in ("failed", "skipped"):
                    raise RuntimeError(f"bench job {job.pk} {job.status}: {job.error}")
                if job.status == "succeeded":
                    succeeded[job.pk] = job.finished_at.timestamp() - posted[job.pk]
                    runway_of[job.pk] = job.runway_id
            todo = {runway_of[pk]: pk for pk in succeeded if pk not in complete}
            if todo:
                unfinished = set(
                    RunwayImage.objects.filter(runway_id__in=todo)
                    .exclude(rendition_status="done")
                    .values_list("runway_id", flat=True)
                )
                for runway_id, pk in todo.items():
                    if runway_id not in unfinished:
                        complete[pk] = now - posted[pk]
            time.sleep(0.1)
        return {pk: (succeeded[pk], complete[pk]) for pk in posted}

    def back_to_back(self, routing: str) -> list[float]:
        """POST -> succeeded of BACK_TO_BACK albums, each sent once the one before succeeded."""
        from ingest.models import IngestJob

        workers, _ = self.workers(routing, 1)
        try:
            posted: dict[int, float] = {}
            for n in range(BACK_TO_BACK):
                sent, pk = self.post(f"b2b-{routing}-{n}-{uuid.uuid4().hex[:6]}")
                posted[pk] = sent
                while IngestJob.objects.get(pk=pk).status != "succeeded":
                    time.sleep(0.02)
            return [succeeded for succeeded, _ in self.follow(posted).values()]
        finally:
            self.stop(workers)

    def burst(self, routing: str, workers_count: int) -> list[tuple[float, float]]:
        workers, _ = self.workers(routing, workers_count)
        try:
            tags = [
                f"burst-{routing}-{workers_count}-{n}-{uuid.uuid4().hex[:6]}" for n in range(BURST)
            ]
            with ThreadPoolExecutor(max_workers=BURST) as pool:
                posted = {pk: sent for sent, pk in pool.map(self.post, tags)}
            return list(self.follow(posted).values())
        finally:
            self.stop(workers)

    # Helpers.

    def _web_answers(self) -> bool:
        import http.client

        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=2)
            connection.request("GET", "/healthz")
            return connection.getresponse().status < 500
        except OSError:
            return False

    @staticmethod
    def _wait(predicate, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start in {timeout:.0f} s")
            time.sleep(0.1)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} {_p(values, 0.95):6.2f} {max(values):6.2f}"


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    import signal

    # A terminated run still stops its processes and drops its database (throwaway_site).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with throwaway_site("burst") as site:
        _Photos.bodies = [
            runway_jpeg(load_photo(SPEED_PHOTOS[n % len(SPEED_PHOTOS)]), grain=4.0, seed=n)
            for n in range(PHOTOS)
        ]
        bench = Bench(site.env, site.queue)
        try:
            report(bench)
        finally:
            bench.close()


def report(bench: Bench) -> None:
    megabytes = sum(map(len, _Photos.bodies)) / 1e6
    print(
        f"Albums of {PHOTOS} photos ({megabytes:.0f} MB of 2000x3000 JPEGs), {os.cpu_count()} "
        f"CPUs; load average before: {_load()}"
    )

    alone = None
    print(f"\n1. Back to back, one worker: {BACK_TO_BACK} albums, each POSTed once the one")
    print("   before succeeded. POST -> succeeded per album, s (x the first's):")
    for routing in ROUTINGS if "1" in PARTS else ():
        times = bench.back_to_back(routing)
        ratios = " ".join(f"{t:.2f} ({t / times[0]:.2f}x)" for t in times)
        worst = max(times[1:]) / times[0] if len(times) > 1 else 1.0
        print(f"   {routing:<7} {ratios}; worst after the first {worst:.2f}x")
        alone = times[0] if routing == "after" else alone
    print(f"   load average: {_load()}")

    print(f"\n2. A burst of {BURST} albums POSTed at once; seconds from POST, over the albums:")
    print(f"   {'':<18}{'to succeeded':^23}  {'to renditions made':^23}")
    print(f"   {'':<18}{'p50    p95    max':>21}  {'p50    p95    max':>21}")
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for workers in (1, 2) if "2" in PARTS else ():
        for routing in ROUTINGS:
            results[routing, workers] = runs = bench.burst(routing, workers)
            label = f"{workers} worker{'s' if workers > 1 else ''}, {routing}"
            print(
                f"   {label:<18}  {_spread([s for s, _ in runs])}  {_spread([r for _, r in runs])}"
            )
    print(f"   load average: {_load()}")
    if alone:
        last = {key: max(s for s, _ in runs) for key, runs in results.items()}
        print(
            f"\n   The last album in the review queue, x one album alone ({alone:.2f} s, "
            "part 1's first 'after' album):"
        )
        for (routing, workers), seconds in last.items():
            print(f"   {workers} worker(s), {routing}: {seconds / alone:.1f}x")


if __name__ == "__main__":
    main()
