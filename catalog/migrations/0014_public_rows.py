"""The public rows (catalog/public_rows.py): tables holding exactly what the public may see,
kept by triggers on the catalog's tables, filled from them. The public views read them from
publicapi's 0008 on."""

from django.db import migrations

from catalog import public_rows


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = public_rows.create_tables(vendor) + public_rows.drop_triggers(vendor)
    statements += public_rows.create_triggers(vendor) + public_rows.refresh_all(vendor)
    for statement in statements:
        schema_editor.execute(statement, params=None)


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in public_rows.drop_triggers(vendor) + public_rows.drop_tables(vendor):
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0013_embargo")]

    operations = [migrations.RunPython(forwards, backwards)]
