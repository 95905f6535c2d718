"""The stack the edge benches read through (bench/edge.py, bench/embargo.py): Varnish
(Debian's varnishd with config/varnish.vcl) in front of gunicorn, the purge on
(EDGE_PURGE_BACKEND=http), the public store a folder of copies (PUBLIC_MEDIA_ROOT, so bytes
really move), and an rq worker with rq's scheduler serving the visibility queue.

Database: BENCH_DATABASE_URL's PostgreSQL server (default postgres://postgres@127.0.0.1:5432/
postgres), a database of the bench's own, made afresh and dropped after. Redis:
BENCH_REDIS_URL (default redis://127.0.0.1:6379/14), under a queue name of its own.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@contextmanager
def edge_stack(database: str) -> Iterator[Stack]:
    """The stack on database ``database``, migrated, until the block ends."""
    server = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    queue = f"bench-visibility-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        env = {
            "PATH": os.environ["PATH"],
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"{server.rpartition('/')[0]}/{database}",
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
        _recreate_database(server, database)
        subprocess.run(  # noqa: S603 - our own manage.py
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        web_port = free_port()
        processes = []
        os.environ.update(env)
        import django

        django.setup()
        varnish = None
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
            yield Stack(varnish, web_port)
        finally:
            if varnish is not None:
                varnish.stop()
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
            from django.db import connections

            connections.close_all()
            _drop_database(server, database)
            _forget_queue(redis_url, queue)


class Stack:
    def __init__(self, varnish: Any, web_port: int) -> None:
        self.varnish = varnish
        self.web_port = web_port
        from django.contrib.auth.models import User

        self.editor = User.objects.create_superuser("bench-editor", "e@example.com", "x")

    def album(self, images: int, *, status: str, n: int):
        """A runway of ``images`` distinct JPEGs, each with a 400 px rendition, stored."""
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
        from django.utils import timezone

        Runway.objects.filter(pk=runway.pk).update(
            cover=rows[0].pk, image_count=images, published_at=timezone.now()
        )
        return Runway.objects.get(pk=runway.pk)

    def get(self, path: str) -> int:
        """The status Varnish answers ``path`` with."""
        return self.varnish.get(path)[0]

    def origin(self, path: str) -> int:
        """The status gunicorn answers ``path`` with, past Varnish."""
        connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=30)
        try:
            connection.request("GET", path, headers={"Host": "localhost"})
            answer = connection.getresponse()
            answer.read()
            return answer.status
        finally:
            connection.close()

    def urls(self, detail: str) -> list[str]:
        """The paths of every image URL (originals and renditions) a shown detail names."""
        status, _, body = self.varnish.get(detail)
        assert status == 200, detail
        images = json.loads(body)["images"]
        urls = [i["url"] for i in images] + [r["url"] for i in images for r in i["renditions"]]
        return ["/" + u.split("/", 3)[3] for u in urls]

    def answers(self, path: str, status: int) -> Callable[[], bool]:
        return lambda: self.get(path) == status

    def all_gone(self, paths: list[str], *, origin: bool) -> Callable[[], bool]:
        def check() -> bool:
            get = self.origin if origin else self.get
            return all(get(path) in (403, 404) for path in paths)

        return check

    def origin_requests(self) -> int:
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


def until(check: Callable[[], bool], *, timeout: float = 60, every: float = 0.01) -> float:
    """When ``check`` first held (time.monotonic), polling every ``every`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return time.monotonic()
        time.sleep(every)
    raise TimeoutError("the edge did not follow")


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def _jpeg(seed: str) -> bytes:
    from PIL import Image

    rng = random.Random(seed)  # noqa: S311 - distinct bytes per image, not secrets
    image = Image.new("RGB", (64, 64), tuple(rng.randrange(256) for _ in range(3)))
    image.putpixel((rng.randrange(64), rng.randrange(64)), (255, 255, 255))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=80)
    return buffer.getvalue()


def free_port() -> int:
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

    until(answers, timeout=60, every=0.2)


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
