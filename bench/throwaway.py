"""A site of a bench's own: a fresh PostgreSQL database, an rq queue name and a media folder,
with Django set up on them and migrated, all removed on the way out (a terminated run too,
when the bench turns SIGTERM into SystemExit). For the benches that run the real processes
(gunicorn, rqworker) against one: bench/burst.py, bench/renditions.py.

BENCH_DATABASE_URL names the server (any database on it: the bench creates its own),
BENCH_REDIS_URL the Redis.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

# The crawler secret the site accepts (INGEST_SECRETS), for benches that POST signed albums.
SECRET = "whsec_" + "YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE="


class JpegHandler(BaseHTTPRequestHandler):
    """A loopback photo server's handler: GET answers ``body(path)``'s JPEG, or 404 for None."""

    def body(self, path: str) -> bytes | None:
        raise NotImplementedError

    def do_GET(self):  # noqa: N802 - http.server's name
        body = self.body(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@dataclass(frozen=True)
class Site:
    env: dict[str, str]  # what the bench's processes run with (os.environ is updated too)
    queue: str  # the ingest queue's name; every rq key of the run carries it
    renditions_queue: str
    media: Path


@contextmanager
def throwaway_site(kind: str, **settings: str) -> Iterator[Site]:
    """Yield a migrated site with an "acme" brand; ``settings`` go into its environment."""
    import psycopg

    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")
    run = uuid.uuid4().hex[:8]
    name = f"bench_{kind}_{run}"
    queue = f"bench-{kind}-{run}"
    media = Path(f"/tmp/{name}-media")  # noqa: S108 - a throwaway folder of our own
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{url.rpartition('/')[0]}/{name}",
        "REDIS_URL": redis_url,
        "INGEST_QUEUE": queue,
        "RENDITIONS_QUEUE": f"{queue}-renditions",
        "MEDIA_ROOT": str(media),
        "INGEST_FETCH_ALLOWED_HOSTS": "127.0.0.1",
        "INGEST_SECRETS": SECRET,
        "SECURE_SSL_REDIRECT": "false",
        "LOG_LEVEL": "WARNING",
        **settings,
    }
    admin = psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    os.environ.update(env)
    try:
        import django

        django.setup()
        from django.core.management import call_command

        from catalog.models import Brand

        call_command("migrate", verbosity=0)
        Brand.objects.create(name="Acme", slug="acme")
        yield Site(env=env, queue=queue, renditions_queue=env["RENDITIONS_QUEUE"], media=media)
    finally:
        from django.db import connections

        connections.close_all()
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()
        shutil.rmtree(media, ignore_errors=True)
        _forget_queue(redis_url, queue)


def _forget_queue(redis_url: str, queue: str) -> None:
    try:
        import redis

        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(match=f"*{queue}*"):
            client.delete(key)
        for member in client.smembers("rq:workers"):
            if queue.encode() in member:
                client.srem("rq:workers", member)
    except Exception as exc:  # noqa: BLE001 - leftovers in a bench queue harm nothing
        print(f"(could not clean the bench queues: {exc})")
