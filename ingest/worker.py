"""The rq worker class the deployment runs (``settings.RQ["WORKER_CLASS"]``): rq's own forking
worker, made to ride out a Redis outage.

rq already waits for Redis while a worker is idle (its dequeue loop reconnects with backoff),
but it logs every try (and its pubsub thread an error every 2 s), and nothing in it notices
Redis coming back: its scheduler process, which quits on the outage's first error, is
started again only at the worker's next maintenance, up to 10 minutes later (rq's
maintenance_interval, and an idle worker looks at it only between its blocking reads), so
retries with an interval wait that long. An outage while a job runs ends the worker: the
heartbeat it sends while watching the work horse raises, and its main loop quits on any such
error ("found an unhandled exception, quitting"). The job does not need Redis: its database
row is the truth, the horse finishes it there, and reconcile enqueues whatever Redis lost.

So this worker keeps watching a horse through the outage (and still kills one that hangs);
otherwise it waits for Redis itself, quietly, at most `max_connection_wait_time` between tries.
When Redis answers it registers again if Redis came back empty and runs rq's maintenance at
once, which starts the scheduler process again and retakes its lock. The log says once that
Redis went and once that it is back.

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
    # The longest pause between two tries to reach Redis: the worker (and the scheduler it
    # starts again) is back at most this long after Redis is.
    max_connection_wait_time = 10.0

    def __init__(self, *args, **kwargs) -> None:
        # rq's heartbeats, by which reconcile judges a job a worker took but never claimed
        # (a claimed job is judged by its lease, renewed at the same interval).
        kwargs.setdefault("job_monitoring_interval", settings.INGEST_WORKER_HEARTBEAT_SECONDS)
        super().__init__(*args, **kwargs)
        self._redis_lost_at: float | None = None  # time.monotonic() of the outage's start
        _build_storage_client()

    def subscribe(self) -> None:
        super().subscribe()
        # rq's handler logs an error every 2 s of an outage; the main loop says it once, and
        # redis-py subscribes again when it reconnects.
        if self.pubsub_thread is not None:
            self.pubsub_thread.exception_handler = _pubsub_waits_for_redis

    def execute_job(self, job, queue) -> None:
        try:
            super().execute_job(job, queue)
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)

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
            self._redis_lost(exc)

    def heartbeat(self, timeout: int | None = None, pipeline=None) -> None:
        if pipeline is not None:  # buffered: the pipeline's execute() is where Redis is asked
            return super().heartbeat(timeout, pipeline=pipeline)
        try:
            super().heartbeat(timeout)
        except REDIS_DOWN as exc:
            if self.horse_pid:
                # Sent while a horse runs, and right before rq kills a hung one: an outage
                # there must neither end this worker nor spare the horse.
                self._redis_lost(exc)
            else:
                # Between jobs: rq's dequeue loop sends one before each try, so its loop
                # waits here rather than logging a retry after retry.
                self.wait_for_redis(exc)
            return
        if self._redis_lost_at is not None:
            self.wait_for_redis()  # Redis came back while a job ran: catch up now

    def set_state(self, state: str, pipeline=None) -> None:
        if pipeline is not None:
            return super().set_state(state, pipeline=pipeline)
        try:
            super().set_state(state)
        except REDIS_DOWN as exc:
            # rq sets it first thing in its dequeue loop, outside the loop's own catch: an
            # outage starting right there would end the worker. The state is kept in this
            # process; the loop's heartbeat, right after, waits for Redis.
            self._redis_lost(exc)

    def run_maintenance_tasks(self) -> None:
        try:
            super().run_maintenance_tasks()
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)

    def check_for_suspension(self, burst: bool) -> None:
        try:
            super().check_for_suspension(burst)
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)

    def teardown(self) -> None:
        try:
            super().teardown()
        except REDIS_DOWN as exc:
            # Stopped during an outage: rq's record of this worker expires on its own.
            self.log.warning(
                "Worker %s: stopped without unregistering, Redis unavailable: %s", self.name, exc
            )

    def wait_for_redis(self, error: Exception | None = None) -> None:
        """Return once Redis answers again (or a stop was asked for), this worker registered
        in it again and its scheduler running again."""
        if error is not None:
            self._redis_lost(error)
        pause = 1.0
        while not self._stop_requested:
            try:
                self._catch_up()
            except REDIS_DOWN:
                time.sleep(pause)
                pause = min(pause * 2, self.max_connection_wait_time)
                continue
            lost_at, self._redis_lost_at = self._redis_lost_at, None
            self.log.info(
                "Worker %s: Redis is back%s; scheduler and registration renewed",
                self.name,
                "" if lost_at is None else f" after {time.monotonic() - lost_at:.0f} s",
            )
            return

    def _redis_lost(self, error: Exception) -> None:
        # One warning per outage, however many calls meet it.
        if self._redis_lost_at is None:
            self._redis_lost_at = time.monotonic()
            self.log.warning(
                "Worker %s: Redis unavailable (%s); waiting for it, then going on",
                self.name,
                error,
            )

    def _catch_up(self) -> None:
        self.connection.ping()
        if not self.connection.hexists(self.key, "birth"):
            # Redis came back without this worker's record (restarted empty). A heartbeat may
            # have written its last_heartbeat alone since, which register_birth refuses.
            self.connection.delete(self.key)
            self.register_birth()
        # rq's maintenance now rather than at its interval: it starts the scheduler process
        # the outage ended (retaking the lock) and cleans the registries.
        super().run_maintenance_tasks()


def _pubsub_waits_for_redis(error: BaseException, pubsub, thread) -> None:
    """The worker's pubsub thread, on an error: a Redis outage is waited out quietly; anything
    else ends the thread, as rq's own handler does."""
    if not isinstance(error, REDIS_DOWN):
        raise error
    time.sleep(2.0)


def _build_storage_client() -> None:
    """Build the S3 storage's client once, here in the worker, before any work horse forks.

    Every job runs in a fresh fork of this process, which would otherwise build its own boto3
    client (about a second of CPU loading its service models) for each job. A fork inherits
    this one instead; the worker itself never sends a request with it, so no connection is
    shared between processes.
    """
    from django.core.files.storage import default_storage

    getattr(default_storage, "connection", None)  # S3Storage only; a file system has none
