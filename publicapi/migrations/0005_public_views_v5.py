"""Public views V5: the record views' cover through a scalar subquery, so PostgreSQL checks
it for a page's rows only (publicapi/sql.py). Same columns, rows and visibility as V4."""

from importlib import import_module

from django.db import migrations

from publicapi.sql import VIEWS_V4, VIEWS_V5

# V4's operation: the views' statements depend on the vendor (the search column).
RunViewSQL = import_module("publicapi.migrations.0004_public_views_v4").RunViewSQL


class Migration(migrations.Migration):
    dependencies = [
        ("publicapi", "0004_public_views_v4"),
        # The indexes the V5 views let the facets read alone.
        ("catalog", "0008_public_facet_indexes"),
    ]

    operations = [RunViewSQL(VIEWS_V5, VIEWS_V4)]
