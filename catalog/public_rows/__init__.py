"""The public rows: tables that hold exactly what the public may see, under the public views.

A record's row (and its images') is in ``public_*_rows`` while it is published, live and its
bytes are public, and nowhere else: the public views (publicapi/sql.py, V8 on) select from
these tables only, and the public database role may read the views and nothing else. So no
plan, statistic or error of the role's own SQL has a hidden row to count: the tables hold none.

The database keeps them, not the application: triggers on catalog's tables refresh the rows of
every record a statement touches (its images', its brand's), in the statement's transaction,
whoever writes (a service, the admin, the legacy import, an operator's SQL). A refresh of a
record deletes its public rows and selects them again from catalog's tables, with the rules
the views had before V8: a cover only while it is a live image of the album, a street detail's
parent only while it is a live main image of the album (else the detail shows as a main
image), a brand while it has a public runway, with its count and its names for search.

PostgreSQL: statement-level triggers with transition tables, so a bulk write refreshes each
record once; two writers of one album take turns at its refresh (its catalog row, locked), so
neither reads the other's half-written rows. SQLite (the embedded
mode, one writer): row-level triggers with the same statements.

Triggers pin catalog's tables (SQLite drops them with a table it rebuilds), so they step aside
while catalog migrates and come back, with every row refreshed, after it (catalog/apps.py).
publicapi reads these tables through its views only (the import contract keeps it off catalog).

One module per part: `tables` (the tables, their indexes, the embargo's clock), `refresh` (a
refresh as SQL over a set of ids), `postgresql` and `sqlite` (each database's triggers). The
names a migration and catalog.apps use are here.
"""

from catalog.public_rows.postgresql import postgresql_drop_triggers, postgresql_triggers
from catalog.public_rows.refresh import refresh_all
from catalog.public_rows.sqlite import sqlite_drop_triggers, sqlite_triggers
from catalog.public_rows.tables import CLOCK, TABLES, create_tables, drop_tables, sqlite_clock

__all__ = [
    "CLOCK",
    "TABLES",
    "create_tables",
    "create_triggers",
    "drop_tables",
    "drop_triggers",
    "refresh_all",
    "sqlite_clock",
]

# --- What a migration and publicapi.apps run ---------------------------------------------------


def create_triggers(vendor: str) -> list[str]:
    return postgresql_triggers() if vendor == "postgresql" else sqlite_triggers()


def drop_triggers(vendor: str) -> list[str]:
    return postgresql_drop_triggers() if vendor == "postgresql" else sqlite_drop_triggers()
