"""Print (or run) the SQL that creates the public API's PostgreSQL role.

The role may connect, and SELECT the public_* views, nothing else: no base table, no write.
A view runs with its owner's rights, so reading a view needs no right on the tables under it.
Point PUBLIC_DATABASE_URL at this role and the API reads through it (config.routers).

Idempotent. A migrate that re-creates the views gives their SELECT back to every role that
had it (publicapi.apps), so it need not be run again after an upgrade. docs/operations.md.
"""

from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from psycopg import sql

from publicapi.sql import public_view_names


def public_views(connection=None) -> list[str]:
    """Every public view the database has (the views version decides which): the models'
    views and the ones only raw SQL reads (search's brand names, similar images' hashes)."""
    connection = connection or connections["default"]
    with connection.cursor() as cursor:
        present = set(connection.introspection.table_names(cursor, include_views=True))
    return sorted(name for name in public_view_names() if name in present)


def role_sql(name: str, password: str | None, database: str) -> list[sql.Composable]:
    role = sql.Identifier(name)
    login = (
        sql.SQL("LOGIN PASSWORD {}").format(sql.Literal(password)) if password else sql.SQL("LOGIN")
    )
    create = sql.SQL(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {name}) THEN "
        "CREATE ROLE {role} {login}; END IF; END $$"
    ).format(name=sql.Literal(name), role=role, login=login)
    statements: list[sql.Composable] = [create]
    if password:
        statements.append(sql.SQL("ALTER ROLE {} {}").format(role, login))
    statements += [
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), role),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role),
        sql.SQL("GRANT SELECT ON {} TO {}").format(
            sql.SQL(", ").join(sql.Identifier(view) for view in public_views()), role
        ),
    ]
    return statements


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
            help="run the SQL (needs a user that may create roles) instead of printing it",
        )

    def handle(self, *args, name: str, password: str | None, execute: bool, **options):
        connection = connections["default"]
        if connection.vendor != "postgresql":
            raise CommandError("create_public_role needs PostgreSQL (DATABASE_URL).")
        password = password or _password_from_url(settings.PUBLIC_DATABASE_URL, name)
        connection.ensure_connection()
        statements = role_sql(name, password, connection.settings_dict["NAME"])
        raw = connection.connection
        if not execute:
            for statement in statements:
                self.stdout.write(statement.as_string(raw) + ";")
            return
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement.as_string(raw))
        self.stdout.write(f"role {name}: may read {', '.join(public_views())}")


def _password_from_url(url: str, name: str) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.username and unquote(parts.username) == name and parts.password:
        return unquote(parts.password)
    return None
