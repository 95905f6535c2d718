"""Public views V7: a published record shows once its bytes are public (publicapi/sql.py).
Same columns as V6."""

from importlib import import_module

from django.db import migrations

from publicapi.sql import VIEWS_V6, VIEWS_V7

# V4's operation: the views' statements depend on the database.
RunViewSQL = import_module("publicapi.migrations.0004_public_views_v4").RunViewSQL


class Migration(migrations.Migration):
    dependencies = [
        ("publicapi", "0006_public_views_v6"),
        # The column the record views read.
        ("catalog", "0010_visibility"),
    ]

    operations = [RunViewSQL(VIEWS_V7, VIEWS_V6)]
