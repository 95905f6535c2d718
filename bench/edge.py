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

Database: BENCH_DATABASE_URL's PostgreSQL server (default postgres://postgres@127.0.0.1:5432/
postgres), database bench_edge, made afresh. Redis: BENCH_REDIS_URL (default
redis://127.0.0.1:6379/14), under a queue name of its own.

Run: .venv/bin/python bench/edge.py
"""

from __future__ import annotations

import hashlib
import http.client
import io
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
    server = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    database_url = f"{server.rpartition('/')[0]}/bench_edge"
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    queue = f"bench-visibility-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        env = {
            "PATH": os.environ["PATH"],
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "VISIBILITY_QUEUE": queue,
            "MEDIA_ROOT": str(work / "private"),
            "PUBLIC_MEDIA_ROOT": str(work / "public"),
            "SERVE_MEDIA": "true",
            "DEBUG": "false",
            "SECRET_KEY": "bench-" + uuid.uuid4().hex,
            "ALLOWED_HOSTS": "*",
            "SECURE_SSL_REDIRECT": "false",
            "PUBLIC_API_THROTTLE_RATE": "100000000/min",
            "EDGE_PURGE_BACKEND": "http",
            "LOG_LEVEL": "WARNING",
            "WEB_CONCURRENCY": "2",
            "PROMETHEUS_MULTIPROC_DIR": str(work / "prometheus"),
        }
        (work / "prometheus").mkdir()
        _recreate_database(server, "bench_edge")
        subprocess.run(  # noqa: S603 - our own manage.py
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        web_port = _free_port()
        processes = []
        os.environ.update(env)
        import django

        django.setup()
        try:
            from django.conf import settings

            from tests.edge_support import Varnish

            varnish = Varnish(web_port, work / "varnish")
            env["EDGE_PURGE_URLS"] = varnish.url
            settings.EDGE_PURGE_URLS = [varnish.url]
            processes.append(
                subprocess.Popen(  # noqa: S603 - gunicorn with the project's configuration
                    [
                        sys.executable,
                        "-m",
                        "gunicorn",
                        "-c",
                        "config/gunicorn.py",
                        "--bind",
                        f"127.0.0.1:{web_port}",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            processes.append(
                subprocess.Popen(  # noqa: S603 - an rq worker of the project
                    [sys.executable, "manage.py", "rqworker", queue, "--with-scheduler"],
                    cwd=ROOT,
                    env={**env, "LOG_LEVEL": "INFO"},
                    stdout=open(os.environ.get("BENCH_EDGE_WORKER_LOG", os.devnull), "w"),  # noqa: SIM115
                    stderr=subprocess.STDOUT,
                )
            )
            _wait_http(web_port)
            bench = Bench(varnish, web_port)
            bench.seed()
            print(f"edge bench: {RUNWAYS} published runways of {IMAGES} images, {CLIENTS} clients")
            bench.hit_ratio()
            bench.takedowns()
            bench.publish_big_album()
            bench.long_tail()
            varnish.stop()
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
            from django.db import connections

            connections.close_all()
            _drop_database(server, "bench_edge")
            _forget_queue(redis_url, queue)
    return 0


class Bench:
    def __init__(self, varnish, web_port: int) -> None:
        self.varnish = varnish
        self.web_port = web_port
        from django.contrib.auth.models import User

        self.editor = User.objects.create_superuser("bench-editor", "e@example.com", "x")

    # --- data --------------------------------------------------------------------------------

    def album(self, images: int, *, status: str, n: int):
        from catalog.models import Runway, RunwayImage
        from catalog.storage import image_store, rendition_key, rendition_put
        from tests.factories import BrandFactory, RunwayFactory

        runway = RunwayFactory(brand=BrandFactory(slug=f"brand-{n % 12}"), status=status)
        rows = []
        for i in range(images):
            data = _jpeg(f"{n}-{i}")
            sha1 = hashlib.sha1(data, usedforsecurity=False).hexdigest()
            key = image_store(data=data, sha1=sha1, mime_type="image/jpeg")
            rkey = rendition_key(sha1=sha1, width=400)
            rendition_put(key=rkey, data=data)
            rows.append(
                RunwayImage(
                    runway=runway,
                    storage_key=key,
                    sha1=sha1,
                    width=64,
                    height=64,
                    mime_type="image/jpeg",
                    sort_order=i,
                    look_index=i + 1,
                    renditions=[{"width": 400, "height": 400, "key": rkey}],
                    rendition_status="done",
                )
            )
        RunwayImage.objects.bulk_create(rows)
        Runway.objects.filter(pk=runway.pk).update(
            cover=rows[0].pk, image_count=images, published_at=_now()
        )
        return Runway.objects.get(pk=runway.pk)

    def seed(self) -> None:
        from catalog.visibility import media_sweep

        self.runways = [self.album(IMAGES, status="published", n=n) for n in range(RUNWAYS)]
        media_sweep()  # copies their bytes and shows them, as for an operator's SQL publish
        from catalog.models import PublicObject, Runway

        shown = Runway.objects.filter(bytes_public=True).count()
        copies = PublicObject.objects.filter(confirmed=True).count()
        assert (shown, copies) == (RUNWAYS, RUNWAYS * IMAGES * 2), (shown, copies)
        self.hot = [r.pk for r in self.runways[:40]]

    # --- 1. hit ratio --------------------------------------------------------------------------

    def hit_ratio(self) -> None:
        from review.services import record_approve, record_unpublish

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
            record_unpublish(record=target, actor=self.editor, reason="bench")
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
        from review.services import record_unpublish

        detail_times, image_origin, image_edge = [], [], []
        for record in self.runways[40 : 40 + TAKEDOWNS]:
            detail = f"/api/v1/runways/{record.pk}/"
            urls = self._urls(detail)
            for path in [detail, *urls]:
                self.varnish.get(path)
                assert self.varnish.get(path)[1].get("X-Cache") == "hit", path
            start = time.monotonic()
            record_unpublish(record=record, actor=self.editor, reason="takedown request")
            detail_times.append(_until(self._answers(detail, 404)) - start)
            image_origin.append(_until(self._all_gone(urls, origin=True)) - start)
            image_edge.append(_until(self._all_gone(urls, origin=False)) - start)
        print(
            f"  unpublish -> detail 404 through Varnish: median {_ms(detail_times)}, "
            f"max {max(detail_times) * 1000:.0f} ms ({TAKEDOWNS} albums)"
        )
        print(
            f"  unpublish -> all {len(urls)} image URLs 404: at the origin median "
            f"{_ms(image_origin)} (max {max(image_origin) * 1000:.0f} ms), through Varnish median "
            f"{_ms(image_edge)} (max {max(image_edge) * 1000:.0f} ms)"
        )

    # --- 3. publishing a 60-image album ----------------------------------------------------------

    def publish_big_album(self) -> None:
        from review.services import record_approve

        runway = self.album(BIG_ALBUM, status="pending", n=10_000)
        detail = f"/api/v1/runways/{runway.pk}/"
        assert self.varnish.get(detail)[0] == 404
        start = time.monotonic()
        record_approve(record=runway, actor=self.editor)
        shown = _until(lambda: self.varnish.get(detail)[0] == 200, timeout=120) - start
        urls = self._urls(detail)
        answering = (
            _until(lambda: all(self.varnish.get(u)[0] == 200 for u in urls), timeout=120) - start
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
            self.album(IMAGES, status="pending", n=20_000 + n)
            for n in range(int(TAIL_SECONDS // 10) + 2)
        ]
        self._read_all(urls)  # an edge that has run a while has seen each
        served_before = self._origin_requests()
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
            f"{self._origin_requests() - served_before} requests (misses and grace fetches)"
        )

    def _read_all(self, urls: list[str]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.varnish.port, timeout=30)
        for path in urls:
            connection.request("GET", path, headers={"Host": "localhost"})
            connection.getresponse().read()
        connection.close()

    def _origin_requests(self) -> int:
        """Requests gunicorn answered, by varnishstat's backend counter."""
        out = subprocess.run(  # noqa: S603 - Debian's varnishstat, our own arguments
            [
                "/usr/bin/varnishstat",
                "-n",
                str(self.varnish.instance),
                "-1",
                "-f",
                "MAIN.backend_req",
            ],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        return int(out[1]) if len(out) > 1 and out[1].isdigit() else 0

    # --- helpers ----------------------------------------------------------------------------------

    def _urls(self, detail: str) -> list[str]:
        import json

        status, _, body = self.varnish.get(detail)
        assert status == 200, detail
        images = json.loads(body)["images"]
        urls = [i["url"] for i in images] + [r["url"] for i in images for r in i["renditions"]]
        return ["/" + u.split("/", 3)[3] for u in urls]

    def _answers(self, path: str, status: int):
        return lambda: self.varnish.get(path)[0] == status

    def _all_gone(self, paths: list[str], *, origin: bool):
        def check() -> bool:
            get = self._origin if origin else (lambda p: self.varnish.get(p)[0])
            return all(get(path) in (403, 404) for path in paths)

        return check

    def _origin(self, path: str) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=30)
        try:
            connection.request("GET", path, headers={"Host": "localhost"})
            answer = connection.getresponse()
            answer.read()
            return answer.status
        finally:
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
        query: list[str] = []
        if kind < 0.35:
            path = "/api/v1/runways/"
            for name, values in (("brand", brands), ("year", years), ("collection_type", TYPES)):
                if rng.random() < 0.4:
                    query.append(f"{name}={rng.choice(list(values))}")
            if not query and rng.random() < 0.5:
                query.append(f"page={rng.randint(2, 6)}")
        elif kind < 0.55:
            path = "/api/v1/runways/"
            query.append("q=" + "+".join(rng.sample(VOCABULARY, rng.randint(1, 2))))
        elif kind < 0.75:
            path = rng.choice(["/api/v1/runways/facets/", "/api/v1/street-snaps/facets/"])
            if rng.random() < 0.7:
                query.append(f"year={rng.choice(list(years))}")
            if rng.random() < 0.5:
                query.append(f"city={rng.choice(CITIES)}")
        else:
            path = "/api/v1/street-snaps/"
            query.append(f"city={rng.choice(CITIES)}")
            if rng.random() < 0.5:
                query.append(f"month={rng.randint(1, 12)}")
        if rng.random() < 0.3:
            query.append(f"page_size={rng.choice([10, 20, 50, 100])}")
        found[path + ("?" + "&".join(query) if query else "")] = None
    return list(found)


def _until(check, *, timeout: float = 60, every: float = 0.01) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return time.monotonic()
        time.sleep(every)
    raise TimeoutError("the edge did not follow")


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def _jpeg(seed: str) -> bytes:
    from PIL import Image

    rng = random.Random(seed)  # noqa: S311 - distinct bytes per image, not secrets
    image = Image.new("RGB", (64, 64), tuple(rng.randrange(256) for _ in range(3)))
    image.putpixel((rng.randrange(64), rng.randrange(64)), (255, 255, 255))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=80)
    return buffer.getvalue()


def _now():
    from django.utils import timezone

    return timezone.now()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_http(port: int) -> None:
    def answers() -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    _until(answers, timeout=60, every=0.2)


def _recreate_database(server: str, name: str) -> None:
    _drop_database(server, name)
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')


def _drop_database(server: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _forget_queue(redis_url: str, queue: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"*{queue}*", count=1000):
        client.delete(key)


if __name__ == "__main__":
    raise SystemExit(main())
