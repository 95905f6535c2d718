"""`manage.py media_sweep [--full]`: converge the public store and the edge with the database
(catalog.visibility.media_sweep), as the scheduler does every five minutes; `--full` checks
every public object against the rule too (daily, and after an upgrade to public copies)."""

from django.core.management.base import BaseCommand

from catalog.visibility import SWEEP_RECORDS, media_sweep


class Command(BaseCommand):
    help = (
        "Make the public store hold exactly what published albums show, and purge the edge of "
        "what changed: runs the changes no job ran, albums published or withdrawn by SQL, "
        "objects left pending by an error. --full also checks every public object. Exits 1 "
        "when something could not be fixed (the store or the edge failed)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--full", action="store_true", help="also check every public object and image"
        )

    def handle(self, *args, full: bool = False, **options):
        # A first full run after an upgrade copies the whole archive: one batch at a time.
        while True:
            run = media_sweep(full=full)
            self.stdout.write(f"{run.summary()}; failed {run.failed}")
            if run.failed:
                raise SystemExit(1)
            # A run takes SWEEP_RECORDS records of each kind and direction; fewer: done.
            noted = run.fixed.get("records_to_publish", 0) + run.fixed.get("records_to_withdraw", 0)
            if noted < SWEEP_RECORDS:
                return
