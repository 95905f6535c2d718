from django.conf import settings
from django.core.management.base import BaseCommand

from ingest.services import media_gc


class Command(BaseCommand):
    help = (
        "Delete stored images that no image row references and that are older than "
        "INGEST_MEDIA_GC_GRACE_SECONDS (objects left by jobs that lost a race or failed). "
        "Run it from cron, e.g. daily."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="list what would be deleted, delete nothing"
        )

    def handle(self, *args, dry_run: bool = False, **options):
        result = media_gc(dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        for key in result.deleted:
            self.stdout.write(f"{verb} {key}")
        self.stdout.write(
            f"scanned {result.scanned}, referenced {result.referenced}, "
            f"younger than {settings.INGEST_MEDIA_GC_GRACE_SECONDS}s {result.too_young}, "
            f"{verb} {len(result.deleted)}"
        )
