"""The public API's PostgreSQL role (PUBLIC_DATABASE_URL): what it may read
(`manage.py create_public_role`)."""

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
