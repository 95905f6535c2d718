"""The real thing, as processes, for the fault suite (tests/faults) and bench/faults.py.

A `Rig` starts, on free loopback ports: a `redis-server` of its own (never the machine's, so
it can be stopped and started empty), a gunicorn web server, rq worker processes
(`manage.py rqworker`), and a fault-injecting HTTP proxy in front of an S3 server (moto in
server mode). PostgreSQL is the test database; each worker's connections carry an
application_name of the rig's, so a test can terminate exactly those, and may go through a
TCP proxy of the rig's (`database_proxy`), which a test cuts to take the database away.

Crawlers are simulated by `Rig.post`: signed albums over HTTP, as a crawler sends them. Every
loop here is bounded in count and time, and everything the rig started is stopped by pid.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.ingest.support import SECRET_A, ImageServer, runway_album, signed_headers
from tests.support import descendants

ROOT = Path(__file__).resolve().parents[2]
FINISHED = {"succeeded", "skipped", "failed"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, *, timeout: float, interval: float = 0.1, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"gave up after {timeout:g}s waiting for {what or predicate}")


# --- Redis of our own -------------------------------------------------------------------------


class RedisServer:
    """A `redis-server` on a free port, without persistence: stopped and started, it is empty."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - fixed arguments
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._answers, timeout=20, what="redis-server")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


# --- A database blip: a TCP proxy that can be cut -------------------------------------------------


class TcpProxy:
    """Forwards a loopback port to ``host:port`` (PostgreSQL's), byte for byte, until `cut`:
    then every connection through it is closed and new ones are refused, as in a network blip
    or a database failover, until `restore`."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, int(port))
        self.port = free_port()
        self.cuts = 0
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self._listener = listener
        self._accepting = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._accepting.start()

    def cut(self) -> None:
        self.cuts += 1
        self._close_listener()
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _close(sock)

    def close(self) -> None:
        self.cut()

    def _close_listener(self) -> None:
        if self._listener is not None:
            _close(self._listener)  # shutdown wakes the accept() below
            self._listener = None
        if self._accepting is not None:
            self._accepting.join(timeout=10)
            self._accepting = None

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets.update((client, upstream))
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                _close(sock)
            with self._lock:
                self._sockets.difference_update((source, target))


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


# --- S3: moto, behind a proxy that answers some PUTs with 503 ---------------------------------


class S3FaultProxy:
    """Forwards every request to the S3 server, except that a share of the PUTs (object uploads)
    is answered `503 SlowDown` without reaching it, as S3 does under load."""

    def __init__(self, upstream: str, *, put_failure_rate: float = 0.0, seed: int = 15) -> None:
        self.upstream = upstream.removeprefix("http://")
        self.put_failure_rate = put_failure_rate
        self.counts: Counter[str] = Counter()
        self._random = random.Random(seed)  # noqa: S311 - fault injection, not secrets
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                body = self._body()
                if self.command == "PUT":
                    with proxy._lock:
                        proxy.counts["puts"] += 1
                        fail = proxy._random.random() < proxy.put_failure_rate
                        if fail:
                            proxy.counts["503"] += 1
                    if fail:
                        return self._slow_down()
                headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
                upstream = http.client.HTTPConnection(proxy.upstream, timeout=30)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                    self.send_response(answer.status)
                    for key, value in answer.getheaders():
                        if key.lower() not in {"transfer-encoding", "connection", "content-length"}:
                            self.send_header(key, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    upstream.close()

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            break
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _slow_down(self) -> None:
                payload = (
                    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                    b"<Message>Please reduce your request rate.</Message></Error>"
                )
                self.send_response(503)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward  # noqa: N815

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


# --- The rig ------------------------------------------------------------------------------------


@dataclass
class Figures:
    """What a scenario measured (printed by the tests, collected by bench/faults.py)."""

    scenario: str
    albums: int = 0
    accepted: int = 0
    jobs_finished: int = 0
    succeeded: int = 0
    records: int = 0
    duplicate_records: int = 0
    half_written: int = 0  # records without images, or image rows without their object
    job_retries: int = 0  # executions beyond the first, over all jobs
    lost_executions: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    drain_seconds: float = 0.0

    def line(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)


class Rig:
    """Everything a fault scenario runs against. Use as a context manager."""

    def __init__(
        self,
        *,
        database: dict[str, Any],
        moto_url: str,
        bucket: str,
        workers: int = 3,
        put_failure_rate: float = 0.0,
        worker_env: dict[str, str] | None = None,
        database_proxy: bool = False,
    ) -> None:
        self.database = database
        self.bucket = bucket
        self.tag = f"fault-{uuid.uuid4().hex[:8]}"  # the workers' application_name, queue name
        self.queue = self.tag
        self.redis = RedisServer()
        self.proxy = S3FaultProxy(moto_url, put_failure_rate=put_failure_rate)
        # The workers' way to PostgreSQL, when a test takes the database away from them.
        self.database_proxy = (
            TcpProxy(database["HOST"], database["PORT"]) if database_proxy else None
        )
        self.images = ImageServer()
        self.web_port = free_port()
        self.web: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.worker_count = workers
        self.extra_env = worker_env or {}
        self.logs = Path(os.environ.get("FAULT_LOG_DIR") or tempfile.gettempdir()) / self.tag
        self.logs.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> Rig:
        self.redis.start()
        self.web = self._spawn(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{self.web_port}",
                "--workers",
                "2",
                "--timeout",
                "60",
            ],
            application_name=f"{self.tag}-web",
        )
        for _ in range(self.worker_count):
            self.start_worker()
        wait_for(self._web_answers, timeout=60, interval=0.2, what="the web server")
        return self

    def __exit__(self, *exc: object) -> None:
        for name in list(self.workers):
            self.kill_worker(name)
        if self.web:
            self.web.terminate()
            try:
                self.web.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.web.kill()
                self.web.wait(timeout=20)
        self.redis.stop()
        self.proxy.close()
        if self.database_proxy:
            self.database_proxy.close()
        self.images.close()

    # Processes.

    def env(self, application_name: str, *, proxied: bool = False) -> dict[str, str]:
        db = self.database
        port = self.database_proxy.port if proxied and self.database_proxy else db["PORT"]
        keep = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "PYTHONPATH"}}
        return {
            **keep,
            "DATABASE_URL": (
                f"postgres://{db['USER']}@{db['HOST']}:{port}/{db['NAME']}"
                f"?application_name={application_name}"
            ),
            "REDIS_URL": self.redis.url,
            "INGEST_QUEUE": self.queue,
            "RENDITIONS_QUEUE": f"{self.queue}-renditions",
            # Visibility jobs on the rig's first queue, which every worker serves.
            "VISIBILITY_QUEUE": self.queue,
            "INGEST_SECRETS": SECRET_A,
            "INGEST_FETCH_ALLOWED_HOSTS": "127.0.0.1",
            "INGEST_IMAGE_RETRY_BACKOFF": "0.05",
            # More attempts than any scenario has faults for one job; no scheduler wait.
            "INGEST_RETRY_INTERVALS": "0,0,0,0,0",
            "INGEST_WORKER_HEARTBEAT_SECONDS": "2",
            "AWS_STORAGE_BUCKET_NAME": self.bucket,
            "AWS_S3_ENDPOINT_URL": self.proxy.url,
            "AWS_S3_REGION_NAME": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "SECURE_SSL_REDIRECT": "false",
            # Renditions are follow-up jobs of their own (tested with their feature); here they
            # would only double the CPU the suite needs on a 2-core machine.
            "RENDITIONS_AT_INGEST": "false",
            "LOG_LEVEL": "WARNING",
            **self.extra_env,
        }

    def _spawn(
        self, name: str, command: list[str], *, application_name: str, proxied: bool = False
    ) -> subprocess.Popen:
        log = (self.logs / f"{name}.log").open("ab")
        env = self.env(application_name, proxied=proxied)
        return subprocess.Popen(  # noqa: S603 - our own commands with fixed arguments
            command, cwd=ROOT, env=env, stdout=log, stderr=log
        )

    def start_worker(self) -> str:
        name = f"{self.tag}-w{len(self.workers) + 1}-{uuid.uuid4().hex[:4]}"
        self.workers[name] = self._spawn(
            name,
            [
                sys.executable,
                "manage.py",
                "rqworker",
                self.queue,  # served first, then the renditions queue, as in production
                f"{self.queue}-renditions",
                "--with-scheduler",
                "--name",
                name,
            ],
            application_name=f"{self.tag}-worker",
            proxied=True,
        )
        return name

    def kill_worker(self, name: str, *, horse_only: bool = False) -> bool:
        """SIGKILL a worker with its children (work horse, scheduler), or only its work horse.
        True if a work horse (a job in progress) died."""
        process = self.workers[name]
        children = descendants(process.pid)
        horses = [pid for pid in children if _is_horse(pid)]
        for pid in horses if horse_only else [*children, process.pid]:
            _kill(pid)
        if not horse_only:
            process.wait(timeout=30)
            del self.workers[name]
        return bool(horses)

    def scheduler_holder(self) -> str | None:
        """The worker whose scheduler process holds rq's scheduler lock for the queue."""
        import redis

        client = redis.Redis.from_url(self.redis.url)
        try:
            owner = client.get(f"rq:scheduler-lock:{self.queue}")
            pid = client.hget(f"rq:scheduler:{owner.decode()}", "pid") if owner else None
        finally:
            client.close()
        if not pid:
            return None
        for name, process in self.workers.items():
            if int(pid) in descendants(process.pid):
                return name
        return None

    def workers_alive(self) -> list[str]:
        return [name for name, process in self.workers.items() if process.poll() is None]

    def _web_answers(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=2)
            connection.request("GET", "/api/v1/brands/")
            return connection.getresponse().status < 500
        except OSError:
            return False

    # Crawling.

    def album(self, n: int, *, images: int = 2) -> dict[str, Any]:
        from ingest.management.commands.ingest_demo import demo_image, encode

        urls = [
            self.images.add(
                f"/{self.tag}/{n}/{i}.jpg", encode(demo_image(n * 100 + i, size=(72, 108)))
            )
            for i in range(images)
        ]
        return runway_album(
            urls,
            source_url=f"https://example.com/{self.tag}/{n}",
            season_code=f"FW{n % 100:02d}",
            collection_type=("ready-to-wear", "couture", "menswear", "resort")[n // 100 % 4],
        )

    def post(self, album: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        body = json.dumps(album)
        connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=30)
        try:
            connection.request(
                "POST",
                "/api/ingest/v1/albums",
                body=body,
                headers={"Content-Type": "application/json", **signed_headers(body)},
            )
            answer = connection.getresponse()
            return answer.status, json.loads(answer.read() or b"{}")
        finally:
            connection.close()


def _is_horse(pid: int) -> bool:
    # rq's work horse leads a process group of its own (os.setpgrp); the scheduler does not.
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return int(fields[2]) == pid


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# --- A run: crawl, inject faults, drain, check ------------------------------------------------


def crawl_and_drain(
    rig: Rig,
    scenario: str,
    albums: int,
    *,
    faults: Any = None,
    drain_timeout: float = 240,
) -> tuple[Figures, list[int], list[dict[str, Any]]]:
    """Post ``albums`` albums, with ``faults()`` running in a thread meanwhile; then run
    reconcile every second until every accepted job has finished (or ``drain_timeout``).

    Returns the figures, the accepted job ids and the albums. Nothing is asserted here.
    """
    from ingest.maintenance import ingest_jobs_reconcile
    from ingest.models import IngestJob

    sent = [rig.album(n) for n in range(albums)]
    figures = Figures(scenario=scenario, albums=albums)
    started = time.monotonic()
    injector = threading.Thread(target=faults, daemon=True) if faults else None
    if injector:
        injector.start()
    job_ids, refused = [], []
    for album in sent:
        status, body = rig.post(album)
        if status == 202:
            job_ids.append(body["job_id"])
        else:
            refused.append((status, body))
    figures.accepted = len(job_ids)
    figures.faults["non_202"] = len(refused)

    deadline = time.monotonic() + drain_timeout
    jobs = IngestJob.objects.filter(pk__in=job_ids)
    while time.monotonic() < deadline:
        finished = jobs.filter(status__in=FINISHED).count()
        if finished == len(job_ids) and not (injector and injector.is_alive()):
            break
        ingest_jobs_reconcile()
        time.sleep(1)
    figures.drain_seconds = round(time.monotonic() - started, 1)
    if injector:
        injector.join(timeout=60)
    for line in _unfinished(rig, job_ids):
        print(f"unfinished: {line}")  # what a failing scenario needs to be understood
    return figures, job_ids, sent


def _unfinished(rig: Rig, job_ids: list[int]) -> list[str]:
    """One line per job that did not finish: its row, and what rq knows of it."""
    from django_rq import get_queue

    from ingest.models import IngestJob
    from ingest.queueing import rq_job_id

    lines = []
    rows = IngestJob.objects.filter(pk__in=job_ids).exclude(status__in=FINISHED)
    for job in rows.order_by("pk"):
        row = (
            f"job {job.pk} {job.status} attempts={job.attempts} lost={job.lost_executions} "
            f"enqueued={job.enqueued_at} started={job.started_at} lease={job.heartbeat_at} "
            f"error={job.error!r}"
        )
        try:
            queue = get_queue(rig.queue)
            redis = queue.connection
            rq_id = rq_job_id(job.pk)
            rq = (
                f"rq status={redis.hget(f'rq:job:{rq_id}', 'status')} "
                f"worker={redis.hget(f'rq:job:{rq_id}', 'worker_name')} "
                f"on_queue={redis.lpos(queue.key, rq_id)} "
                f"taken={redis.lpos(queue.intermediate_queue_key, rq_id)}"
            )
        except Exception as exc:  # noqa: BLE001 - a diagnostic must not hide the failure
            rq = f"rq unknown: {exc}"
        lines.append(f"{row}; {rq}")
    return lines


def check(figures: Figures, job_ids: list[int], albums: list[dict[str, Any]], s3) -> Figures:
    """Fill in what the database and the bucket hold after a run."""
    from django.db.models import Count, F, Q, Sum

    from catalog.models import Runway, RunwayImage
    from ingest.models import IngestJob

    client, bucket = s3
    jobs = IngestJob.objects.filter(pk__in=job_ids)
    figures.jobs_finished = jobs.filter(status__in=FINISHED).count()
    figures.succeeded = jobs.filter(status="succeeded").count()
    totals = jobs.aggregate(attempts=Sum("attempts"), lost=Sum("lost_executions"))
    figures.job_retries = (totals["attempts"] or 0) - len(job_ids)
    figures.lost_executions = totals["lost"] or 0

    urls = [album["source_url"] for album in albums]
    records = Runway.objects.filter(source_url__in=urls)
    figures.records = records.count()
    per_album = records.values("source_url").annotate(n=Count("pk"))
    figures.duplicate_records = sum(row["n"] - 1 for row in per_album if row["n"] > 1)

    keys: set[str] = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys.update(item["Key"] for item in page.get("Contents", []))
    live = Q(images__deleted_at__isnull=True)
    without_images = records.annotate(n=Count("images", filter=live)).filter(
        Q(n=0) | ~Q(image_count=F("n"))
    )
    images = RunwayImage.objects.filter(runway__in=records)
    missing = [key for key in images.values_list("storage_key", flat=True) if key not in keys]
    figures.half_written = without_images.count() + len(missing)
    figures.faults["missing_objects"] = len(missing)
    return figures
