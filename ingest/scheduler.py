"""rq's cron scheduler, made to ride out a Redis outage (`manage.py rqcron`, config's command).

rq's CronScheduler lets the first Redis error end its loop: the process exits with a traceback,
and without a supervisor nothing is scheduled again, not reconcile nor the media sweep. This one
waits for Redis instead, saying once that it went and once that it is back. Then it registers
again (Redis may be back empty) and enqueues at once the jobs that repair what an outage leaves
undone, rather than at their next time: reconcile (ingest jobs that never reached their queue),
the visibility job's catch-up and the media sweep (a takedown or publication whose job could
not be enqueued). A job whose enqueue failed during the outage is still due, and goes out then
too.
"""

import time

from django_rq.cron import DjangoCronScheduler
from redis.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq.cron import CronJob
from rq.exceptions import StopRequested
from rq.utils import now

REDIS_DOWN = (RedisConnectionError, RedisTimeoutError)
# By the path rq records (Job.func_name): the tasks are imported by config/cron.py.
AFTER_AN_OUTAGE = frozenset(
    {"ingest.tasks.reconcile", "catalog.tasks.run_media_sync", "catalog.tasks.media_sweep"}
)


class OutageProofCronScheduler(DjangoCronScheduler):
    max_pause = 5.0  # the longest pause between two tries to reach Redis

    def start(self) -> None:
        try:
            super().start()
        except StopRequested:
            # Asked to stop while waiting for Redis at start, outside rq's own try.
            self.log.info("CronScheduler %s: stop requested", self.name)

    def register_birth(self) -> None:
        try:
            super().register_birth()
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)  # which registers once Redis answers

    def enqueue_jobs(self) -> list[CronJob]:
        try:
            return super().enqueue_jobs()
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)
            return []

    def save(self, pipeline: Pipeline | None = None) -> None:
        if pipeline is not None:  # buffered: the pipeline's execute() is where Redis is asked
            return super().save(pipeline)
        try:
            super().save()
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)

    def heartbeat(self) -> None:
        try:
            super().heartbeat()
        except REDIS_DOWN as exc:
            self.wait_for_redis(exc)

    def register_death(self, pipeline: Pipeline | None = None) -> None:
        try:
            super().register_death(pipeline)
        except REDIS_DOWN as exc:
            # Its registry entry expires on its own.
            self.log.warning(
                "CronScheduler %s: stopped without unregistering, Redis unavailable (%s)",
                self.name,
                exc,
            )

    def wait_for_redis(self, error: Exception) -> None:
        """Return once Redis answers again, with this scheduler registered in it and the jobs
        of AFTER_AN_OUTAGE due now. A stop signal ends the wait (rq's StopRequested)."""
        lost_at = time.monotonic()
        self.log.warning(
            "CronScheduler %s: Redis unavailable (%s); nothing is enqueued until it answers",
            self.name,
            error,
        )
        pause = 0.5
        while True:
            time.sleep(pause)
            pause = min(pause * 2, self.max_pause)
            try:
                self.connection.ping()
                super().register_birth()
            except REDIS_DOWN:
                continue
            break
        catching_up = [job for job in self.get_jobs() if job.func_name in AFTER_AN_OUTAGE]
        for job in catching_up:
            job.next_enqueue_time = now()
        self.log.info(
            "CronScheduler %s: Redis is back after %.0f s; enqueueing %s now",
            self.name,
            time.monotonic() - lost_at,
            ", ".join(job.name for job in catching_up) or "what is due",
        )
