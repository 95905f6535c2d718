from django.apps import AppConfig
from django.db import connections, transaction
from django.db.backends.signals import connection_created
from django.db.models.signals import post_delete, post_migrate, post_save, pre_migrate, pre_save


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Archive"

    def ready(self) -> None:
        from catalog.models import Brand, BrandAlias

        pre_migrate.connect(_triggers_step_aside, sender=self)
        post_migrate.connect(_triggers_come_back, sender=self)
        connection_created.connect(_sqlite_clock, dispatch_uid="catalog.sqlite_clock")

        # A brand's name, slug and featured flag are on public pages (runways, brands, the
        # index), and its aliases decide what a search finds: the edge forgets them on change.
        pre_save.connect(_brand_before, sender=Brand, dispatch_uid="visibility-brand-before")
        for model in (Brand, BrandAlias):
            post_save.connect(
                _brand_changed, sender=model, dispatch_uid=f"visibility-{model.__name__}"
            )
            post_delete.connect(
                _brand_changed, sender=model, dispatch_uid=f"visibility-{model.__name__}-delete"
            )


def _brand_before(sender, instance, **kwargs) -> None:
    # The slug it had: its pages are cached under that one.
    if instance.pk is not None:
        instance._slug_before = (
            sender.objects.filter(pk=instance.pk).values_list("slug", flat=True).first()
        )


def _brand_changed(sender, instance, created: bool = False, **kwargs) -> None:
    from catalog import edge
    from catalog.models import Brand
    from catalog.visibility import media_change_note

    if sender is Brand:
        if created:
            return  # a new brand has no public runway yet
        slugs = [getattr(instance, "_slug_before", None) or "", instance.slug]
    else:
        slugs = [
            Brand.objects.filter(pk=instance.brand_id).values_list("slug", flat=True).first() or ""
        ]
    # A brand's public pages are its runways' pages, which carry its tag: nothing to move.
    media_change_note(kind="brand", record_id=None, tags=edge.brand_tags(*slugs))


# The public rows' triggers (catalog.public_rows) pin the tables they are on: SQLite drops a
# table's triggers when it rebuilds it, and a migration may rename what a trigger reads. So a
# migrate run that changes catalog's tables runs without them, and they come back after it,
# at their latest version, with every public row made again (the run may have changed rows).
_stepped_aside: set[str] = set()


def _triggers_step_aside(sender, using, plan=None, **kwargs) -> None:
    from catalog import public_rows

    if not plan or not any(migration.app_label == "catalog" for migration, _ in plan):
        return
    connection = connections[using]
    with connection.cursor() as cursor:
        for statement in public_rows.drop_triggers(connection.vendor):
            cursor.execute(statement)
    _stepped_aside.add(using)


def _triggers_come_back(sender, using, **kwargs) -> None:
    from catalog import public_rows

    if using not in _stepped_aside:
        return
    _stepped_aside.discard(using)
    connection = connections[using]
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
    if not set(public_rows.TABLES) <= tables:
        return  # migrated back before the public rows
    with transaction.atomic(using=using), connection.cursor() as cursor:
        statements = public_rows.drop_triggers(connection.vendor)
        statements += public_rows.create_triggers(connection.vendor)
        for statement in statements + public_rows.refresh_all(connection.vendor):
            cursor.execute(statement)


def _sqlite_clock(sender, connection, **kwargs) -> None:
    # The embargo's clock the public views and the public rows' triggers read.
    if connection.vendor == "sqlite":
        from catalog.public_rows import sqlite_clock

        connection.connection.create_function("archive_now", 0, sqlite_clock)
