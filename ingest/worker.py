"""The rq worker class the deployment runs (``settings.RQ["WORKER_CLASS"]``): rq's own forking
worker, made to ride out a Redis outage.

rq already waits for Redis while a worker is idle (its dequeue loop reconnects with backoff).
An outage while a job runs ends the worker, though: the heartbeat it sends while watching the
work horse raises, and its main loop quits on any such error ("found an unhandled exception,
quitting"), as does its scheduler process. The job does not need Redis: its database row is
the truth, the horse finishes it there, and reconcile enqueues whatever Redis lost. So this
worker keeps watching the horse through the outage (and still kills one that hangs), then
waits for Redis with backoff, registers again if Redis came back empty, restarts its scheduler,
and goes on.

When it sees a work horse killed (the OOM killer, a crash), it ends that job's lease
(ingest.lease), so rq's retry takes the job over at once.
"""

import time

from django.conf import settings
from django.db import DatabaseError, connections
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq.worker import Worker

from ingest import joblog
from ingest.queueing import RUN_INGEST_JOB
from ingest.services import ingest_job_lease_end

REDIS_DOWN = (RedisConnectionError, RedisTimeoutError)


class JobIdsInLogs:
    """rq's own lines about a job (its start, "Job OK", its result) carry the job's ids too,
    like every line the job itself logs (ingest.joblog.JobFilter)."""

    def perform_job(self, job, queue, execution) -> bool:
        ingest_job_id = job.args[0] if job.func_name == RUN_INGEST_JOB and job.args else None
        context = joblog.JobContext(ingest_job_id=ingest_job_id, rq_job_id=job.id)
        token = joblog.current.set(context)
        try:
            return super().perform_job(job, queue, execution)  # type: ignore[misc]
        finally:
            joblog.current.reset(token)


class IngestWorker(JobIdsInLogs, Worker):
    max_connection_wait_time = 30.0  # the longest pause between two tries to reach Redis

    def __init__(self, *args, **kwargs) -> None:
        # rq's heartbeats, by which reconcile judges a job a worker took but never claimed
        # (a claimed job is judged by its lease, renewed at the same interval).
        kwargs.setdefault("job_monitoring_interval", settings.INGEST_WORKER_HEARTBEAT_SECONDS)
        super().__init__(*args, **kwargs)
        _build_storage_client()

    def execute_job(self, job, queue) -> None:
        try:
            super().execute_job(job, queue)
        except REDIS_DOWN as exc:
            self.log.warning(
                "Worker %s: Redis unavailable after job %s: %s", self.name, job.id, exc
            )
            self.wait_for_redis()

    def handle_work_horse_killed(self, job, retpid, ret_val, rusage) -> None:
        super().handle_work_horse_killed(job, retpid, ret_val, rusage)
        if job.func_name != RUN_INGEST_JOB or not job.args:
            return
        # The horse is dead, so its job's lease is too: rq's retry (right after this) may
        # take the job over now rather than once the lease has gone silent.
        try:
            ingest_job_lease_end(job_id=job.args[0])
        except DatabaseError as exc:
            self.log.warning("Worker %s: lease of %s not ended: %s", self.name, job.id, exc)
        finally:
            # Never let a work horse fork with this process's connection (a test's own
            # transaction aside).
            for connection in connections.all(initialized_only=True):
                if not connection.in_atomic_block:
                    connection.close()

    def maintain_heartbeats(self, job, execution) -> None:
        try:
            super().maintain_heartbeats(job, execution)
        except REDIS_DOWN as exc:
            # Keep watching the horse: it needs no Redis to finish the job.
            self.log.warning("Worker %s: heartbeat failed, Redis unavailable: %s", self.name, exc)

    def heartbeat(self, timeout: int | None = None, pipeline=None) -> None:
        if pipeline is not None:  # buffered: the pipeline's execute() is where Redis is asked
            return super().heartbeat(timeout, pipeline=pipeline)
        try:
            super().heartbeat(timeout)
        except REDIS_DOWN as exc:
            # rq sends these between jobs and right before it kills a hung work horse: an
            # outage there must neither end this worker nor spare the horse. The loop's next
            # step waits for Redis (check_for_suspension).
            self.log.warning("Worker %s: heartbeat failed, Redis unavailable: %s", self.name, exc)

    def run_maintenance_tasks(self) -> None:
        try:
            super().run_maintenance_tasks()
        except REDIS_DOWN:
            self.wait_for_redis()

    def check_for_suspension(self, burst: bool) -> None:
        try:
            super().check_for_suspension(burst)
        except REDIS_DOWN:
            self.wait_for_redis()

    def wait_for_redis(self) -> None:
        """Return once Redis answers again (or a stop was asked for), re-registered in it."""
        pause = 1.0
        while not self._stop_requested:
            try:
                self.connection.ping()
                break
            except REDIS_DOWN as exc:
                self.log.warning(
                    "Worker %s: Redis unavailable (%s); trying again in %.0fs",
                    self.name,
                    exc,
                    pause,
                )
                time.sleep(pause)
                pause = min(pause * 2, self.max_connection_wait_time)
        if self._stop_requested:
            return
        try:
            if not self.connection.exists(self.key):
                self.register_birth()  # Redis restarted empty: no record of this worker is left
            scheduler = self.scheduler
            if scheduler and (not scheduler._process or not scheduler._process.is_alive()):
                scheduler.acquire_locks(auto_start=True)  # its process quits on an outage
        except REDIS_DOWN:
            self.log.warning("Worker %s: Redis went away again", self.name)
        self.log.info("Worker %s: Redis is back", self.name)


def _build_storage_client() -> None:
    """Build the S3 storage's client once, here in the worker, before any work horse forks.

    Every job runs in a fresh fork of this process, which would otherwise build its own boto3
    client (about a second of CPU loading its service models) for each job. A fork inherits
    this one instead; the worker itself never sends a request with it, so no connection is
    shared between processes.
    """
    from django.core.files.storage import default_storage

    getattr(default_storage, "connection", None)  # S3Storage only; a file system has none
