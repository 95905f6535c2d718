"""Print (or run) the SQL that makes the public API's PostgreSQL role.

The role may connect and read the public_* views, nothing else: no table, no write, no
temporary objects; the views read tables that hold only public rows (publicapi/roles.py).
Point PUBLIC_DATABASE_URL at it and the API reads through it (config.routers).

Idempotent, and run again it brings the role up to date. The SQL printed is for the database
as it is now (whether the role exists). A migrate that re-creates the views gives their SELECT
back to every role that had it (publicapi.apps), so it need not be run again after an
upgrade. docs/operations.md.
"""

from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections, transaction

from publicapi.roles import access_statements, public_views, role_statements


class Command(BaseCommand):
    help = (
        "Print the SQL creating a PostgreSQL role that may read the public_* views only "
        "(for PUBLIC_DATABASE_URL); --execute runs it on the default database."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the role's name")
        parser.add_argument(
            "--password",
            help="its password (default: the one in PUBLIC_DATABASE_URL if it names this role)",
        )
        parser.add_argument(
            "--execute",
            action="store_true",
            help="run the SQL (needs a user that may create roles and owns the tables) instead "
            "of printing it",
        )

    def handle(self, *args, name: str, password: str | None, execute: bool, **options):
        connection = connections["default"]
        if connection.vendor != "postgresql":
            raise CommandError("create_public_role needs PostgreSQL (DATABASE_URL).")
        connection.ensure_connection()
        if "public_brand_runway_rows" not in connection.introspection.table_names():
            raise CommandError(
                "Run `migrate` first: the public views are not over the public rows yet."
            )
        password = password or _password_from_url(settings.PUBLIC_DATABASE_URL, name)
        statements = role_statements(connection, name, password) + access_statements(
            connection, name
        )
        raw = connection.connection
        if not execute:
            for statement in statements:
                self.stdout.write(statement.as_string(raw) + ";")
            return
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement.as_string(raw))
        self.stdout.write(f"role {name}: may read {', '.join(public_views(connection))}")


def _password_from_url(url: str, name: str) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.username and unquote(parts.username) == name and parts.password:
        return unquote(parts.password)
    return None
