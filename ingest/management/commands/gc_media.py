from django.conf import settings
from django.core.management.base import BaseCommand

from ingest.maintenance import media_gc


class Command(BaseCommand):
    help = (
        "Delete images ingest stored that no image row references and that were last stored "
        "more than INGEST_MEDIA_GC_GRACE_SECONDS ago (left by jobs that lost a race or failed). "
        "Never touches objects ingest did not store, such as the legacy archive's. "
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
            f"stored by ingest {result.tracked}: "
            f"stored again within {settings.INGEST_MEDIA_GC_GRACE_SECONDS}s {result.too_young}, "
            f"referenced {result.referenced}, held by a running job {result.busy}, "
            f"{verb} {len(result.deleted)}; "
            f"left alone (already in storage before ingest stored them) {result.preexisting}"
        )
