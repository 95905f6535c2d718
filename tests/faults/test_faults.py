"""The fault suite: the real processes (gunicorn, rq workers, PostgreSQL, a Redis and an S3
server of the test's own) under the faults of a bad day, and nothing lost.

Each scenario crawls a batch of distinct albums through the HTTP endpoint while it injects its
fault, drains with reconcile running beside the workers as cron would, and then checks every
accepted job finished, exactly one record per album, no record without its images, and no
image row pointing at a missing object. The figures go to stdout (and to bench/faults.py).
Every loop is bounded; a scenario takes 20-60 s on a quiet 2-core machine.
"""

import random
import sys
import time
from urllib.parse import urlsplit

import psycopg
import pytest
from django.db import connection

from tests.faults.harness import FINISHED, Figures, check, crawl_and_drain, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def assert_nothing_lost(figures) -> None:
    assert figures.accepted == figures.albums, figures
    assert figures.jobs_finished == figures.accepted, figures
    assert figures.succeeded == figures.accepted, figures
    assert figures.records == figures.albums, figures
    assert figures.duplicate_records == 0, figures
    assert figures.half_written == 0, figures


def test_workers_sigkilled_ten_times_lose_nothing(rig_for, bucket, report_figures):
    # Ten kills could all land on one job: the bound on lost executions is set above them,
    # so that every album must end as a record (the bound itself is tested on its own).
    rig = rig_for(workers=3, worker_env={"INGEST_MAX_LOST_EXECUTIONS": "11"})
    chance = random.Random(1015)  # noqa: S311 - the moments of the kills
    kills = {"horse": 0, "worker": 0, "jobs_hit": 0}

    def faults() -> None:
        time.sleep(2)
        for n in range(10):
            time.sleep(chance.uniform(0.5, 2.0))
            name = chance.choice(rig.workers_alive())
            what = "horse" if n % 2 == 0 else "worker"
            kills["jobs_hit"] += rig.kill_worker(name, horse_only=what == "horse")
            kills[what] += 1
            if what == "worker":
                rig.start_worker()

    # The longest scenario: on a crowded 2-core machine (load 10) it took 4-5 minutes to drain.
    # The bound only ends a stuck run; a run ends as soon as every job has.
    figures, job_ids, albums = crawl_and_drain(
        rig, "sigkill", 110, faults=faults, drain_timeout=600
    )
    figures.faults.update(kills)
    figures = check(figures, job_ids, albums, bucket)
    report_figures(figures)

    assert kills["horse"] + kills["worker"] == 10
    assert_nothing_lost(figures)


def test_a_redis_outage_loses_no_accepted_album(rig_for, bucket, report_figures):
    # Given workers busy with a crawl, Redis (the rig's own) dies for ~10 s and comes back
    # empty: its queue, its retries and its records of the workers are gone.
    rig = rig_for(workers=2)
    outage = {}

    def faults() -> None:
        time.sleep(3)
        rig.redis.stop()
        outage["started"] = time.monotonic()
        time.sleep(10)
        rig.redis.start()
        outage["seconds"] = round(time.monotonic() - outage["started"], 1)

    figures, job_ids, albums = crawl_and_drain(rig, "redis_outage", 40, faults=faults)
    figures.faults["redis_outage_seconds"] = outage.get("seconds", 0)
    figures.faults["workers_alive"] = len(rig.workers_alive())
    figures = check(figures, job_ids, albums, bucket)
    report_figures(figures)

    # Then every 202 became exactly one record, and the workers rode it out.
    assert_nothing_lost(figures)
    assert sorted(rig.workers_alive()) == sorted(rig.workers)


def test_the_workers_database_connections_killed_five_times_lose_nothing(
    rig_for, bucket, report_figures
):
    rig = rig_for(workers=3)
    db = connection.settings_dict
    terminated = []

    def faults() -> None:
        # Only this test database's connections, and only the workers' (by application_name).
        with psycopg.connect(
            host=db["HOST"], port=db["PORT"], user=db["USER"], dbname="postgres", autocommit=True
        ) as admin:
            time.sleep(1)
            deadline = time.monotonic() + 60
            while len(terminated) < 5 and time.monotonic() < deadline:
                if terminate(admin):
                    time.sleep(0.5)  # the next one hits other jobs, or their retries
                else:
                    time.sleep(0.02)  # no worker is inside a job right now

    def terminate(admin) -> int:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND application_name = %s",
            [db["NAME"], f"{rig.tag}-worker"],
        ).fetchall()
        if rows:
            terminated.append(len(rows))
        return len(rows)

    figures, job_ids, albums = crawl_and_drain(rig, "pg_terminate", 60, faults=faults)
    figures.faults["terminations"] = len(terminated)
    figures.faults["connections_terminated"] = sum(terminated)
    figures = check(figures, job_ids, albums, bucket)
    report_figures(figures)

    assert len(terminated) == 5
    assert_nothing_lost(figures)


def test_s3_answering_503_to_30_percent_of_puts_loses_no_object(rig_for, bucket, report_figures):
    rig = rig_for(workers=3, put_failure_rate=0.3)

    figures, job_ids, albums = crawl_and_drain(rig, "s3_503", 40)
    figures.faults.update(puts=rig.proxy.counts["puts"], put_503=rig.proxy.counts["503"])
    figures = check(figures, job_ids, albums, bucket)
    report_figures(figures)

    assert_nothing_lost(figures)
    # The faults happened, and every one was retried: by boto3 itself, or by the job.
    assert figures.faults["put_503"] > 0.2 * figures.faults["puts"]
    assert figures.faults["puts"] - figures.faults["put_503"] >= 2 * figures.albums


def post_held_in_download(rig) -> tuple[dict, dict]:
    """POST album 0; once a worker is in its first image's download, which the image server
    holds until the test sets ``rig.images.release``, return the album and the 202's body."""
    album = rig.album(0)
    rig.images.routes[urlsplit(album["images"][0]["url"]).path].hold_first = True
    status, accepted = rig.post(album)
    assert status == 202
    assert rig.images.held.wait(timeout=60), "the worker never started the download"
    return album, accepted


def test_a_worker_running_a_job_rides_out_a_redis_outage(rig_for):
    # Given a worker in the middle of a job (the image server holds its download).
    rig = rig_for(workers=1)
    _, first = post_held_in_download(rig)

    # When Redis goes away while it runs, the job finishes (its row is the truth), and Redis
    # comes back empty a few seconds later.
    rig.redis.stop()
    rig.images.release.set()
    wait_for(lambda: job_status(first["job_id"]) == "succeeded", timeout=60, what="the job")
    time.sleep(3)  # the worker meets the outage after its job
    rig.redis.start()

    # Then the same worker process is still there and runs the next job.
    status, second = rig.post(rig.album(1))
    assert status == 202
    wait_for(lambda: job_status(second["job_id"]) == "succeeded", timeout=90, what="job 2")
    assert rig.workers_alive() == list(rig.workers)


def test_a_workers_scheduler_comes_back_with_redis(rig_for):
    # Given a worker running rq's scheduler (its retries with an interval need one), on the
    # rig's own Redis; retries 2 s apart, each image tried once per attempt.
    from ingest.models import IngestJob

    rig = rig_for(
        workers=1,
        worker_env={
            "INGEST_RETRY_INTERVALS": "2,2,2",
            "INGEST_IMAGE_TRIES": "1",
            "LOG_LEVEL": "INFO",
        },
    )
    (name,) = rig.workers
    log = rig.logs / f"{name}.log"
    wait_for(lambda: rig.scheduler_holder() == name, timeout=60, what="the scheduler")

    # When Redis stops for a few seconds and comes back empty on the same port.
    rig.redis.stop()
    time.sleep(5)
    rig.redis.start()
    wait_for(lambda: "Redis is back" in log.read_text(), timeout=60, what="the worker's notice")

    # Then an album whose images all fail once has its retry moved to the queue by the
    # scheduler (nothing runs reconcile here) and succeeds in bounded time, not at rq's next
    # maintenance 10 minutes on; the same worker process ran it, and the log said once that
    # Redis went and once that it came back.
    album = rig.album(0)
    for image in album["images"]:
        rig.images.routes[urlsplit(image["url"]).path].failures_first = (503,)
    status, accepted = rig.post(album)
    assert status == 202
    job = IngestJob.objects.filter(pk=accepted["job_id"])
    wait_for(lambda: job.filter(status__in=FINISHED).exists(), timeout=90, what="the retry")
    assert job.values_list("status", "attempts").get() == ("succeeded", 2)
    assert rig.workers_alive() == [name]
    text = log.read_text()
    assert text.count(": Redis unavailable (") == 1, text
    assert text.count(": Redis is back after") == 1, text


def test_a_database_blip_mid_job_costs_one_retry(rig_for, bucket, report_figures):
    # Given a worker in the middle of a job (the image server holds its download), its database
    # reached through the test's own TCP proxy; retries 2 s apart and a lease of 3 x 2 s, in
    # production's proportions (30 s, 3 x 30 s).
    from ingest.maintenance import ingest_jobs_reconcile
    from ingest.models import IngestJob

    blip = 4.0
    rig = rig_for(workers=1, database_proxy=True, worker_env={"INGEST_RETRY_INTERVALS": "2,2,2"})
    album, accepted = post_held_in_download(rig)

    # When the database goes away for a few seconds as the job comes to write its record.
    rig.database_proxy.cut()
    rig.images.release.set()
    time.sleep(blip)
    rig.database_proxy.restore()
    back = time.monotonic()

    # Then, with reconcile running as cron would, the job succeeds on its second attempt: the
    # blip cost one retry, and its first execution is not counted as lost.
    job = IngestJob.objects.filter(pk=accepted["job_id"])

    def finished() -> bool:
        ingest_jobs_reconcile()
        return job.filter(status__in=FINISHED).exists()

    wait_for(finished, timeout=120, interval=0.5, what="the job")
    figures = Figures(scenario="db_blip", albums=1, accepted=1)
    figures.drain_seconds = round(time.monotonic() - back, 1)  # from the database's return
    figures.faults["blip_seconds"] = int(blip)
    figures = check(figures, [accepted["job_id"]], [album], bucket)
    report_figures(figures)
    ended = job.get()
    assert (ended.status, ended.attempts, ended.lost_executions) == ("succeeded", 2, 0), ended.error
    assert (figures.records, figures.half_written) == (1, 0)


def test_a_retry_outlives_the_worker_holding_the_scheduler_lock(rig_for):
    # Given two workers and an album whose images all fail once (503): its first execution
    # hands the job back, and rq schedules the retry for 5 s later.
    import redis

    from ingest.maintenance import ingest_jobs_reconcile
    from ingest.models import IngestJob
    from ingest.queueing import rq_job_id

    rig = rig_for(
        workers=2, worker_env={"INGEST_RETRY_INTERVALS": "5,5,5", "INGEST_IMAGE_TRIES": "1"}
    )
    album = rig.album(0)
    for image in album["images"]:
        rig.images.routes[urlsplit(image["url"]).path].failures_first = (503,)
    status, accepted = rig.post(album)
    assert status == 202
    job = IngestJob.objects.filter(pk=accepted["job_id"])
    client = redis.Redis.from_url(rig.redis.url)

    def retry_scheduled() -> bool:
        score = client.zscore(f"rq:scheduled:{rig.queue}", rq_job_id(accepted["job_id"]))
        return score is not None

    wait_for(retry_scheduled, timeout=60, what="the retry")
    assert job.filter(status="queued", attempts=1).exists()

    # When the worker holding rq's scheduler lock is SIGKILLed before the retry is due (its
    # lock lives on for a minute; the other worker would try to take it in 10 minutes).
    wait_for(lambda: rig.scheduler_holder() is not None, timeout=30, what="a scheduler")
    holder = rig.scheduler_holder()
    assert holder is not None
    rig.kill_worker(holder)
    assert retry_scheduled(), "the retry was no longer waiting for a scheduler"
    client.close()

    # Then, with reconcile running as cron would, the retry runs all the same, in bounded time.
    def finished() -> bool:
        ingest_jobs_reconcile()
        return job.filter(status__in=FINISHED).exists()

    wait_for(finished, timeout=60, interval=1, what="the retry")
    ended = job.get()
    assert (ended.status, ended.attempts, ended.lost_executions) == ("succeeded", 2, 0), ended.error


def job_status(job_id: int) -> str:
    from ingest.models import IngestJob

    return IngestJob.objects.values_list("status", flat=True).get(pk=job_id)


def test_an_album_that_kills_its_worker_every_time_ends_as_worker_died(rig_for):
    # Given an album whose every execution dies with its work horse (here: SIGKILLed while it
    # downloads from a server that trickles the bytes; in life, the OOM killer or a crash).
    from ingest.models import IngestJob

    rig = rig_for(workers=1)
    album = rig.album(0)
    for image in album["images"]:
        rig.images.routes[urlsplit(image["url"]).path].trickle_interval = 0.05
    status, accepted = rig.post(album)
    assert status == 202
    job = IngestJob.objects.filter(pk=accepted["job_id"])
    (name,) = rig.workers

    # When three executions in a row are killed mid-job.
    for attempt in (1, 2, 3):
        wait_for(
            lambda n=attempt: job.filter(status="running", attempts=n).exists(),
            timeout=60,
            what=f"execution {attempt}",
        )
        wait_for(lambda: rig.kill_worker(name, horse_only=True), timeout=30, what="a horse")

    # Then the next claim ends the job instead of running it a fourth time, readably.
    wait_for(lambda: job.filter(status="failed").exists(), timeout=60, what="the job's end")
    ended = job.get()
    assert (ended.reason, ended.lost_executions, ended.attempts) == ("worker_died", 3, 3)
    assert "died 3 times" in ended.error
    assert rig.workers_alive() == [name]


class HangingEdge:
    """A cache whose purges hang while ``hanging`` (as a paused Varnish does), and are
    confirmed as config/varnish.vcl confirms them otherwise."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.hanging = threading.Event()
        self.hung = threading.Event()  # a purge is waiting on us
        self.release = threading.Event()
        self.purged: list[str] = []
        edge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_PURGE(self):  # noqa: N802 - the method's name
                if edge.hanging.is_set():
                    edge.hung.set()
                    edge.release.wait(timeout=120)
                    return
                edge.purged.append(self.headers.get("xkey-purge", ""))
                self.send_response(200)
                self.send_header("X-Purged", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


MAINTENANCE_JOBS = (
    "RECONCILE",
    "PURGE_WEBHOOK_IDS",
    "GC_MEDIA",
    "RENDITIONS",
    "MEDIA_SWEEP",
    "MEDIA_AUDIT",
)


def test_a_worker_killed_mid_visibility_job_delays_a_takedown_by_at_most_30_s(
    rig_for, settings, tmp_path
):
    # Given a worker whose visibility job hangs on the edge (a paused Varnish) while it runs
    # the unpublish of album A, public copies in a folder, and the purge on.
    from catalog.models import MediaChange
    from review.services import Action, record_approve, record_reject
    from tests.support import curator
    from tests.visibility_support import album, keys_of, public_files

    edge = HangingEdge()
    public = tmp_path / "public"
    settings.MEDIA_PUBLIC_COPIES = True
    settings.STORAGES = {
        **settings.STORAGES,
        "public": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": public, "base_url": "/media/"},
        },
    }
    settings.EDGE_PURGE_BACKEND = "http"
    settings.EDGE_PURGE_URLS = [edge.url]
    worker_env = {
        "AWS_STORAGE_BUCKET_NAME": "",  # the folders below, as the test process has them
        "MEDIA_ROOT": str(tmp_path / "media"),
        "PUBLIC_MEDIA_ROOT": str(public),
        "EDGE_PURGE_BACKEND": "http",
        "EDGE_PURGE_URLS": edge.url,
        "EDGE_PURGE_TIMEOUT": "120",
        "VISIBILITY_CATCH_UP_SECONDS": "10",
        # Only the visibility catch-up, from the cron scheduler below.
        **{f"MAINTENANCE_{job}_SCHEDULE": "3600" for job in MAINTENANCE_JOBS},
    }
    cron = None
    try:
        rig = rig_for(workers=1, worker_env=worker_env)
        cron = rig._spawn(
            "cron", [sys.executable, "manage.py", "rqcron", "config.cron"], application_name="cron"
        )
        a, b, c = (album(status="pending", photos=(p,)) for p in ("astronaut", "rocket", "coffee"))
        for record in (a, b, c):
            record_approve(record=record, actor=curator())
        wait_for(lambda: not MediaChange.objects.exists(), timeout=60, what="the approvals")
        assert public_files() == keys_of(a) | keys_of(b) | keys_of(c)

        # When the worker is killed while its job waits on the edge for A's purge...
        edge.hanging.set()
        record_reject(
            record=a, actor=curator(), reason="the photographer's request", action=Action.UNPUBLISH
        )
        wait_for(edge.hung.is_set, timeout=60, what="a job waiting on the edge")
        assert rig.kill_worker(*rig.workers)
        killed = time.monotonic()
        edge.hanging.clear()
        edge.release.set()
        rig.start_worker()

        # ...then A's change runs without any new one (the scheduler's catch-up), within 30 s
        # of the kill.
        wait_for(lambda: not MediaChange.objects.exists(), timeout=30, what="A's change")
        assert time.monotonic() - killed <= 30
        assert not public_files() & keys_of(a)

        # And a worker killed again: the next takedown does not wait for the dead run's lock.
        edge.release.clear()
        edge.hung.clear()
        edge.hanging.set()
        record_reject(record=b, actor=curator(), reason="a licence ended", action=Action.UNPUBLISH)
        wait_for(edge.hung.is_set, timeout=60, what="a job waiting on the edge")
        assert rig.kill_worker(*rig.workers)
        edge.hanging.clear()
        edge.release.set()
        rig.start_worker()
        unpublished = time.monotonic()
        record_reject(record=c, actor=curator(), reason="a takedown", action=Action.UNPUBLISH)
        wait_for(lambda: not MediaChange.objects.exists(), timeout=30, what="B's and C's")
        assert time.monotonic() - unpublished <= 30
        assert public_files() == set()
        assert {f"runway:{pk}" for pk in (a.pk, b.pk, c.pk)} <= {
            tag for header in edge.purged for tag in header.split(" ")
        }
    finally:
        if cron is not None:
            cron.terminate()
            cron.wait(timeout=20)
        edge.close()
