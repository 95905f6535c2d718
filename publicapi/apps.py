from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.migrations.recorder import MigrationRecorder
from django.db.models.signals import post_migrate, pre_migrate


class PublicApiConfig(AppConfig):
    name = "publicapi"
    verbose_name = "Public API"

    def ready(self) -> None:
        from publicapi import checks  # noqa: F401 - registers the system checks
        from publicapi.search import register_sqlite_functions as search_functions
        from publicapi.similar import register_sqlite_functions as similar_functions

        connection_created.connect(search_functions)
        connection_created.connect(similar_functions)

        pre_migrate.connect(drop_views_before_catalog_changes, sender=self)
        post_migrate.connect(restore_views, sender=self)


# Before V8 the views read catalog's tables: SQLite cannot rebuild a table a view refers to,
# and PostgreSQL cannot change the type of a column a view selects. So when a migrate run is
# about to change catalog's tables, such views step aside and come back once the run is over,
# at the version of the newest applied publicapi migration. (From V8 on they read the public
# rows, catalog.public_rows: they stay.) publicapi's own migrations still create every version,
# so history replays.


# Dropping a view drops its grants: the read-only role of PUBLIC_DATABASE_URL
# (create_public_role) would lose them at every migrate. Who may read the views is noted before
# the run and given back, on every view there is then, after it.
_readers: dict[str, list[str]] = {}

_READERS_SQL = """
    SELECT DISTINCT a.grantee::regrole::text
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
    CROSS JOIN LATERAL aclexplode(c.relacl) a
    WHERE c.relkind = 'v' AND c.relname LIKE 'public\\_%' AND a.privilege_type = 'SELECT'
      AND a.grantee <> c.relowner AND a.grantee <> 0
"""
# The first views version over the public rows.
_ROWS_MIGRATION = "0008_public_rows"


def _applied(connection) -> set[str]:
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return set()
    return {name for app, name in recorder.applied_migrations() if app == "publicapi"}


def drop_views_before_catalog_changes(sender, using, plan=None, **kwargs) -> None:
    from publicapi.sql import DROP_VIEWS

    connection = connections[using]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_READERS_SQL)
            _readers[using] = [grantee for (grantee,) in cursor.fetchall()]
    if not plan or not any(migration.app_label == "catalog" for migration, _ in plan):
        return
    if any(name >= _ROWS_MIGRATION for name in _applied(connection)):
        return  # over the public rows: the views stay
    with connection.cursor() as cursor:
        for statement in DROP_VIEWS:
            cursor.execute(statement)


def restore_views(sender, using, **kwargs) -> None:
    from publicapi.sql import DROP_VIEWS, database_kind, for_vendor, views_for

    connection = connections[using]
    views = views_for(_applied(connection))
    if not views:
        return  # publicapi migrated to zero: no views wanted.
    with connection.cursor() as cursor:
        for statement in DROP_VIEWS + for_vendor(views, database_kind(connection)):
            cursor.execute(statement)
    readers = _readers.pop(using, [])
    if readers:
        from publicapi.roles import public_views

        names = ", ".join(connection.ops.quote_name(name) for name in public_views(connection))
        with connection.cursor() as cursor:
            for grantee in readers:  # regrole's text: already a quoted identifier
                cursor.execute(f"GRANT SELECT ON {names} TO {grantee}")
