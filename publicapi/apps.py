from django.apps import AppConfig
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder
from django.db.models.signals import post_migrate, pre_migrate


class PublicApiConfig(AppConfig):
    name = "publicapi"
    verbose_name = "Public API"

    def ready(self) -> None:
        pre_migrate.connect(drop_views_before_catalog_changes, sender=self)
        post_migrate.connect(restore_views, sender=self)


# Views pin the base tables they read: SQLite cannot rebuild a table a view refers to, and
# PostgreSQL cannot change the type of a column a view selects. So when a migrate run is about
# to change catalog's tables, the views step aside and come back once the run is over, at the
# version of the newest applied publicapi migration. publicapi's own migrations still create
# every version, so history replays.


def drop_views_before_catalog_changes(sender, using, plan=None, **kwargs) -> None:
    from publicapi.sql import DROP_VIEWS

    if not plan or not any(migration.app_label == "catalog" for migration, _ in plan):
        return
    with connections[using].cursor() as cursor:
        for statement in DROP_VIEWS:
            cursor.execute(statement)


def restore_views(sender, using, **kwargs) -> None:
    from publicapi.sql import DROP_VIEWS, for_vendor, views_for

    connection = connections[using]
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return
    applied = {name for app, name in recorder.applied_migrations() if app == "publicapi"}
    views = views_for(applied)
    if not views:
        return  # publicapi migrated to zero: no views wanted.
    with connection.cursor() as cursor:
        for statement in DROP_VIEWS + for_vendor(views, connection.vendor):
            cursor.execute(statement)
