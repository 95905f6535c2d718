"""Public views V4: the search column on the record views, brand names for search, and the
public images' perceptual hashes for similar images (publicapi/sql.py).

The models are unchanged: `search` is only ever filtered on, and the two new views are read
with SQL of publicapi.search and publicapi.similar.
"""

from django.db import migrations

from publicapi.sql import DROP_VIEWS, VIEWS_V3, VIEWS_V4, database_kind, for_vendor


class RunViewSQL(migrations.RunSQL):
    """RunSQL whose statements depend on the database (V4's search column, V6's
    security_invoker)."""

    def __init__(self, views, reverse_views):
        self.views, self.reverse_views = views, reverse_views
        super().__init__(sql=DROP_VIEWS, reverse_sql=DROP_VIEWS)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        vendor = database_kind(schema_editor.connection)
        self.sql = DROP_VIEWS + for_vendor(self.views, vendor)
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        vendor = database_kind(schema_editor.connection)
        self.reverse_sql = DROP_VIEWS + for_vendor(self.reverse_views, vendor)
        super().database_backwards(app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    dependencies = [
        ("publicapi", "0003_public_views_v3"),
        # The search columns the views select.
        ("catalog", "0007_search"),
    ]

    operations = [RunViewSQL(VIEWS_V4, VIEWS_V3)]
