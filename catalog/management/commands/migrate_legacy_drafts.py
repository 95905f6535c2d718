"""Import the legacy archive (published tables and draft tables) into the catalog.

Exit status: 0 done (or nothing left to import); 1 a check failed (an approved draft without
a published counterpart, a row that does not fit, a published row held back...) or the catalog
database refused the write, nothing written; 2 usage or connection error, or the legacy
database failed mid-read.
"""

import json
import os
import time
from pathlib import Path

import psycopg
from django.core.management.base import BaseCommand, CommandError

from catalog.legacy.report import render_report, report_dict
from catalog.legacy.services import legacy_archive_migrate
from catalog.legacy.source import LegacySourceError, PostgresLegacySource

EXIT_FAILED = 1
EXIT_USAGE = 2


class Command(BaseCommand):
    help = (
        "Import the legacy archive's published and draft tables into the catalog. Reads the "
        "legacy database only. --dry-run prints the full plan and the checks on the plan, and "
        "writes nothing (the checks on the written rows run in the real run, before it commits)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--legacy-url",
            default=None,
            help="postgres://user@host/db of the legacy archive (default: $LEGACY_DATABASE_URL)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="plan and run the checks on the plan only; write nothing",
        )
        parser.add_argument(
            "--report-file",
            type=Path,
            default=None,
            help="also write the whole report, every list in full, to this JSON file",
        )
        parser.add_argument(
            "--list-limit",
            type=int,
            default=50,
            help="rows shown per list on screen (default 50; the report file has them all)",
        )

    def handle(self, *args, legacy_url, dry_run, report_file, list_limit, **options):
        url = legacy_url or os.environ.get("LEGACY_DATABASE_URL", "")
        if not url:
            raise CommandError(
                "no legacy database: pass --legacy-url or set LEGACY_DATABASE_URL",
                returncode=EXIT_USAGE,
            )
        started = time.monotonic()

        def progress(stage: str, done: int, total: int) -> None:
            elapsed = time.monotonic() - started
            of = f" / {total:,}" if total else ""
            self.stderr.write(f"[{elapsed:7.1f}s] {stage}: {done:,}{of}")

        try:
            with PostgresLegacySource(url) as source:
                source.check_schema()
                result = legacy_archive_migrate(source=source, dry_run=dry_run, progress=progress)
        except LegacySourceError as error:
            raise CommandError(str(error), returncode=EXIT_USAGE) from error
        except psycopg.Error as error:
            # The legacy connection failed mid-run; the catalog transaction was rolled back.
            raise CommandError(
                f"reading the legacy database failed, nothing written: {error}",
                returncode=EXIT_USAGE,
            ) from error

        self.stdout.write(render_report(result, list_limit=list_limit))
        if report_file is not None:
            data = report_dict(result)
            report_file.write_text(json.dumps(data, indent=2, default=str) + "\n")
            self.stdout.write(f"report written to {report_file}")
        if not result.ok:
            raise CommandError(
                "nothing written: " + "; ".join(result.failures), returncode=EXIT_FAILED
            )
