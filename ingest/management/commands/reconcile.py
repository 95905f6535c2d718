from django.conf import settings
from django.core.management.base import BaseCommand

from ingest import thread_pool
from ingest.maintenance import ingest_jobs_reconcile


class Command(BaseCommand):
    help = (
        "Re-enqueue accepted ingest jobs that are not on the queue (Redis was down or lost "
        "them, or a worker took them and died), and reclaim running jobs whose worker is gone "
        "(or that run far longer than any real job) as stale; a job that lost its worker "
        "INGEST_MAX_LOST_EXECUTIONS times fails as worker_died. Run it from cron every few "
        "minutes."
    )

    def handle(self, *args, **options):
        result = ingest_jobs_reconcile()
        if not settings.REDIS_URL and result.enqueued:
            # Embedded mode: the jobs run in this process; wait for them before exiting.
            thread_pool.wait_idle()
        self.stdout.write(
            f"stale: {len(result.stale)} {result.stale or ''}\n"
            f"failed as worker_died: {len(result.worker_died)} {result.worker_died or ''}\n"
            f"enqueued: {len(result.enqueued)} {result.enqueued or ''}\n"
            f"not enqueued (queue unavailable): {len(result.not_enqueued)} "
            f"{result.not_enqueued or ''}"
        )
        if result.not_enqueued:
            raise SystemExit(1)
