"""The public API's PostgreSQL role (PUBLIC_DATABASE_URL): what it may read, and the guard
PostgreSQL keeps beneath the views for it (`manage.py create_public_role`).

A view's WHERE alone does not keep hidden rows from whoever queries the view: PostgreSQL
pushes the query's own conditions down to the tables and may evaluate them first, so a cheap
function, or an expression that fails on some value ("1 / 0 when the title is ..."), would
see or betray the rows of pending albums. So for this role:

- the views check the reader's own rights (V6, security_invoker), and the role holds SELECT
  on exactly the table columns the views read (no private column, and nothing of any other
  table);
- row security on those tables (publicapi.sql.ROW_POLICIES, a restrictive policy naming the
  public roles) shows it only the rows the views show, and PostgreSQL applies it before
  anything of the query's own that is not leakproof;
- it has no TEMPORARY on the database, so it cannot create functions of its own (PostgreSQL
  15 gives PUBLIC no CREATE on the public schema).

Every other role is unaffected: a permissive policy lets every role see every row, so only
the restrictive one narrows anything, and the tables' owner (the application) is exempt from
row security anyway, so its queries plan as before.
"""

from django.db import connections
from psycopg import sql

from publicapi.sql import ROW_POLICIES, public_view_names

# One of each per table: the restrictive policy naming every public role, and the permissive
# one that leaves every other role as it was.
PUBLIC_ROWS = "public_rows"
EVERY_ROW = "every_row"

# The columns of the tables under the public views that the views read (their dependencies).
_VIEW_COLUMNS_SQL = """
    SELECT DISTINCT t.relname, a.attname
    FROM pg_class v
    JOIN pg_rewrite rw ON rw.ev_class = v.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid
         AND d.refclassid = 'pg_class'::regclass AND d.refobjsubid > 0
    JOIN pg_class t ON t.oid = d.refobjid AND t.relkind IN ('r', 'p')
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
    WHERE v.relnamespace = current_schema()::regnamespace AND v.relname = ANY(%s)
    ORDER BY 1, 2
"""


def public_views(connection=None) -> list[str]:
    """Every public view the database has (the views version decides which): the models'
    views and the ones only raw SQL reads (search's brand names, similar images' hashes)."""
    connection = connection or connections["default"]
    with connection.cursor() as cursor:
        present = set(connection.introspection.table_names(cursor, include_views=True))
    return sorted(name for name in public_view_names() if name in present)


def view_columns(connection) -> dict[str, list[str]]:
    """Table -> the columns of it the public views read."""
    columns: dict[str, list[str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_VIEW_COLUMNS_SQL, [public_views(connection)])
        for table, column in cursor.fetchall():
            columns.setdefault(table, []).append(column)
    return columns


def public_roles(connection) -> list[str]:
    """The roles the public_rows policies name: the ones create_public_role made."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT unnest(roles)::text FROM pg_policies "
            "WHERE schemaname = current_schema() AND policyname = %s",
            [PUBLIC_ROWS],
        )
        return sorted(role for (role,) in cursor.fetchall())


def unguarded_views(connection) -> list[str]:
    """Public views that check their owner's rights rather than the reader's (before V6, or
    on PostgreSQL 14): row security would not apply beneath them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relkind = 'v' AND relname = ANY(%s) "
            "AND NOT coalesce('security_invoker=true' = ANY(reloptions), false)",
            [public_views(connection)],
        )
        return sorted(name for (name,) in cursor.fetchall())


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
    """What the role may read, and the row security beneath it, for `name` and every public
    role already there. Idempotent: the policies are dropped and made again."""
    role = sql.Identifier(name)
    database = sql.Identifier(connection.settings_dict["NAME"])
    roles = sql.SQL(", ").join(sql.Identifier(r) for r in sorted({*public_roles(connection), name}))
    statements: list[sql.Composable] = [
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, role),
        # TEMPORARY is PUBLIC's by default, so it cannot be taken from one role alone. The
        # database's owner and superusers keep it; the application uses no temporary tables.
        sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(database),
        sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM {}").format(database, role),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role),
        sql.SQL("GRANT SELECT ON {} TO {}").format(
            sql.SQL(", ").join(sql.Identifier(view) for view in public_views(connection)), role
        ),
        *column_grants(connection, [name]),
    ]
    for table, visible in ROW_POLICIES.items():
        t = sql.Identifier(table)
        statements += [
            sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(t),
            sql.SQL("DROP POLICY IF EXISTS {} ON {}").format(sql.Identifier(EVERY_ROW), t),
            sql.SQL(
                "CREATE POLICY {} ON {} AS PERMISSIVE FOR ALL TO PUBLIC USING (true) "
                "WITH CHECK (true)"
            ).format(sql.Identifier(EVERY_ROW), t),
            sql.SQL("DROP POLICY IF EXISTS {} ON {}").format(sql.Identifier(PUBLIC_ROWS), t),
            sql.SQL("CREATE POLICY {} ON {} AS RESTRICTIVE FOR SELECT TO {} USING ({})").format(
                sql.Identifier(PUBLIC_ROWS), t, roles, sql.SQL(visible)
            ),
        ]
    return statements


def column_grants(connection, roles: list[str]) -> list[sql.Composable]:
    """SELECT on the columns the views read, for these roles (a new views version may read
    more: publicapi.apps gives them after every migrate)."""
    grantees = sql.SQL(", ").join(sql.Identifier(r) for r in roles)
    return [
        sql.SQL("GRANT SELECT ({}) ON {} TO {}").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in columns), sql.Identifier(table), grantees
        )
        for table, columns in view_columns(connection).items()
    ]
