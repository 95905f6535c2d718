"""`rqcron` (`make scheduler`) with a cron scheduler that rides out a Redis outage
(ingest.scheduler), in place of django-rq's (config comes first in INSTALLED_APPS)."""

import logging
from typing import Any

from django_rq.management.commands import rqcron

from ingest.scheduler import OutageProofCronScheduler


class Command(rqcron.Command):
    help = "Starts rq's cron scheduler, which rides out a Redis outage"

    def handle(self, *args: Any, **options: Any) -> None:
        scheduler = OutageProofCronScheduler(
            logging_level=getattr(logging, options["logging_level"])
        )
        self.stdout.write(f"Loading cron configuration from {options['config_path']}")
        scheduler.load_config_from_file(options["config_path"])
        jobs = len(scheduler.get_jobs())
        self.stdout.write(self.style.SUCCESS(f"Starting cron scheduler with {jobs} jobs..."))
        scheduler.start()
