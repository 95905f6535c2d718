from django.core.management.base import BaseCommand

from ingest.maintenance import webhook_ids_purge


class Command(BaseCommand):
    help = (
        "Delete used webhook ids older than twice the signature tolerance: a request that "
        "old is refused by its timestamp already. Run it from cron, e.g. hourly."
    )

    def handle(self, *args, **options):
        deleted = webhook_ids_purge()
        self.stdout.write(f"purged {deleted} webhook id(s)")
