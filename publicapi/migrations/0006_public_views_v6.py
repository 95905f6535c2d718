"""Public views V6: on PostgreSQL 15+, the views check the rights of whoever reads them
(security_invoker), so the public role's row security applies beneath them
(publicapi/sql.py, publicapi/roles.py). Same columns, rows and visibility as V5."""

from importlib import import_module

from django.db import migrations

from publicapi.sql import VIEWS_V5, VIEWS_V6

# V4's operation: the views' statements depend on the database.
RunViewSQL = import_module("publicapi.migrations.0004_public_views_v4").RunViewSQL


class Migration(migrations.Migration):
    dependencies = [("publicapi", "0005_public_views_v5")]

    operations = [RunViewSQL(VIEWS_V6, VIEWS_V5)]
