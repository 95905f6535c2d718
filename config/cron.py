"""The maintenance schedule, for rq's cron scheduler: `python manage.py rqcron config.cron`
(`make scheduler`). It only enqueues; the workers serving the `maintenance` queue run the jobs.

Each schedule is a cron string or a number of seconds (settings.MAINTENANCE_*_SCHEDULE). Two
schedulers running by mistake enqueue each job twice: harmless, every job is idempotent and
gc_media runs one at a time (ingest.tasks). One scheduler is the intended set-up.
"""

from django.conf import settings
from rq import cron

from catalog import tasks as catalog_tasks
from ingest import tasks


def _when(schedule: str) -> dict:
    schedule = schedule.strip()
    return {"interval": int(schedule)} if schedule.isdigit() else {"cron": schedule}


for func, schedule, timeout in (
    (tasks.reconcile, settings.MAINTENANCE_RECONCILE_SCHEDULE, 300),
    (tasks.purge_webhook_ids, settings.MAINTENANCE_PURGE_WEBHOOK_IDS_SCHEDULE, 600),
    (tasks.gc_media, settings.MAINTENANCE_GC_MEDIA_SCHEDULE, 6 * 3600),
    (tasks.renditions_catch_up, settings.MAINTENANCE_RENDITIONS_SCHEDULE, 300),
    (catalog_tasks.media_sweep, settings.MAINTENANCE_MEDIA_SWEEP_SCHEDULE, 600),
    (catalog_tasks.media_audit, settings.MAINTENANCE_MEDIA_AUDIT_SCHEDULE, 6 * 3600),
):
    cron.register(
        func,
        queue_name=settings.MAINTENANCE_QUEUE,
        job_timeout=timeout,
        result_ttl=24 * 3600,
        **_when(schedule),
    )

# The visibility job's catch-up, on its own queue: changes whose back-off is over, and those
# of a run whose worker died (its lock died with it). A run with nothing due is a few queries.
cron.register(
    catalog_tasks.run_media_sync,
    queue_name=settings.VISIBILITY_QUEUE,
    job_timeout=600,
    result_ttl=0,
    interval=settings.VISIBILITY_CATCH_UP_SECONDS,
)
