"""Public views V6: a published record shows once its bytes are public (publicapi/sql.py).
Same columns as V5."""

from importlib import import_module

from django.db import migrations

from publicapi.sql import VIEWS_V5, VIEWS_V6

# V4's operation: the views' statements depend on the vendor (the search column).
RunViewSQL = import_module("publicapi.migrations.0004_public_views_v4").RunViewSQL


class Migration(migrations.Migration):
    dependencies = [
        ("publicapi", "0005_public_views_v5"),
        # The column the record views read.
        ("catalog", "0009_visibility"),
    ]

    operations = [RunViewSQL(VIEWS_V6, VIEWS_V5)]
