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


maintenance, visibility = settings.MAINTENANCE_QUEUE, settings.VISIBILITY_QUEUE
for func, schedule, timeout, queue in (
    (tasks.reconcile, settings.MAINTENANCE_RECONCILE_SCHEDULE, 300, maintenance),
    (tasks.purge_webhook_ids, settings.MAINTENANCE_PURGE_WEBHOOK_IDS_SCHEDULE, 600, maintenance),
    (tasks.gc_media, settings.MAINTENANCE_GC_MEDIA_SCHEDULE, 6 * 3600, maintenance),
    (tasks.renditions_catch_up, settings.MAINTENANCE_RENDITIONS_SCHEDULE, 300, maintenance),
    (catalog_tasks.media_sweep, settings.MAINTENANCE_MEDIA_SWEEP_SCHEDULE, 600, maintenance),
    (catalog_tasks.media_audit, settings.MAINTENANCE_MEDIA_AUDIT_SCHEDULE, 6 * 3600, maintenance),
    # The visibility job's catch-up: changes past their back-off, and a killed worker's.
    (catalog_tasks.run_media_sync, str(settings.VISIBILITY_CATCH_UP_SECONDS), 600, visibility),
):
    ttl = 0 if queue == visibility else 24 * 3600  # the catch-up runs every few seconds
    cron.register(func, queue_name=queue, job_timeout=timeout, result_ttl=ttl, **_when(schedule))
