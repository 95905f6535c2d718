"""The public API's PostgreSQL role (PUBLIC_DATABASE_URL): what it may read
(`manage.py create_public_role`).

The role may connect and SELECT the public_* views, and nothing else: no table, no write, no
temporary objects (so no functions of its own). The views read the public rows
(catalog/public_rows.py), tables that hold exactly what the public may see, with their owner's
rights; so whatever SQL the role runs, no plan, statistic or error of it has a hidden row to
count. What it can still learn is in docs/operations.md ("The public database role").
"""

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


def role_statements(connection, name: str, password: str | None) -> list[sql.Composable]:
    """Create the role, or bring an existing one to LOGIN (with this password, if given).

    Whether it exists is asked first, rather than left to a DO block: a password (or name)
    inside a DO block's dollar quotes ends the block at its first `$$`, and what follows runs
    as SQL of the operator's."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
        exists = cursor.fetchone() is not None
    login = (
        sql.SQL("LOGIN PASSWORD {}").format(sql.Literal(password)) if password else sql.SQL("LOGIN")
    )
    verb = sql.SQL("ALTER ROLE") if exists else sql.SQL("CREATE ROLE")
    return [sql.SQL("{} {} {}").format(verb, sql.Identifier(name), login)]


def access_statements(connection, name: str) -> list[sql.Composable]:
    """What the role may read: the views, after every right it had on any table or sequence
    of the schema is taken back (an older version of this command gave it columns of
    catalog's tables). Idempotent."""
    role = sql.Identifier(name)
    database = sql.Identifier(connection.settings_dict["NAME"])
    return [
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, role),
        # TEMPORARY is PUBLIC's by default, so it cannot be taken from one role alone. The
        # database's owner and superusers keep it; the application uses no temporary tables.
        sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(database),
        sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM {}").format(database, role),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role),
        sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(role),
        sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}").format(role),
        sql.SQL("GRANT SELECT ON {} TO {}").format(
            sql.SQL(", ").join(sql.Identifier(view) for view in public_views(connection)), role
        ),
    ]
