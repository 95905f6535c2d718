"""Running the command in tests, and counting what the catalog holds."""

from io import StringIO

from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.models import Brand, LegacyIdMap, Runway, RunwayImage, StreetSnap, StreetSnapImage

MODELS = [Brand, Runway, StreetSnap, RunwayImage, StreetSnapImage, LegacyIdMap]


def migrate(conninfo: str, *args: str) -> tuple[int, str, str]:
    """Run the command; (exit status, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    try:
        call_command(
            "migrate_legacy_drafts", "--legacy-url", conninfo, *args, stdout=out, stderr=err
        )
    except CommandError as error:
        return error.returncode, out.getvalue(), f"{err.getvalue()}{error}"
    return 0, out.getvalue(), err.getvalue()


def catalog_counts() -> dict[str, int]:
    return {m._meta.db_table: m.objects.count() for m in MODELS}
