"""The public views V8 (publicapi/sql.py) over the public rows (catalog/public_rows.py): tables
holding exactly the public rows, kept by triggers on catalog's tables, shown inside each
record's embargo. V7's columns, and a record's expiry (its responses' caching stops there).

The public database role of create_public_role read V7 with its own rights, through column
grants on catalog's tables and row security beneath them; V8 needs neither. Each such role
loses every right on a table here, keeps SELECT on the views, and the row security goes: the
role reads the views and nothing else. Unapplied, the role must be made again
(create_public_role) to read V7.
"""

from django.db import migrations

from publicapi.sql import (
    DROP_VIEWS,
    VIEWS_V7,
    VIEWS_V8,
    database_kind,
    for_vendor,
    public_view_names,
)

# V7's row security, named by publicapi.roles before V8.
_POLICY_TABLES = [
    "brand_runways",
    "street_snaps",
    "brand_runway_images",
    "street_snap_images",
    "brands",
    "brand_aliases",
]


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    statements = [*DROP_VIEWS, *for_vendor(VIEWS_V8, database_kind(connection))]
    if connection.vendor == "postgresql":
        statements += _public_roles_to_views(connection)
    for statement in statements:
        schema_editor.execute(statement, params=None)


def _public_roles_to_views(connection) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT unnest(roles)::text FROM pg_policies "
            "WHERE schemaname = current_schema() AND policyname = 'public_rows'"
        )
        roles = [role for (role,) in cursor.fetchall()]
    quote = connection.ops.quote_name
    views = ", ".join(quote(name) for name in public_view_names())
    statements = []
    for role in roles:  # regrole's text: already a quoted identifier
        statements += [
            f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}",
            f"GRANT SELECT ON {views} TO {role}",
        ]
    for table in _POLICY_TABLES:
        statements += [
            f"DROP POLICY IF EXISTS public_rows ON {table}",
            f"DROP POLICY IF EXISTS every_row ON {table}",
            f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
        ]
    return statements


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    statements = [*DROP_VIEWS, *for_vendor(VIEWS_V7, database_kind(connection))]
    for statement in statements:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("publicapi", "0007_public_views_v7"),
        ("catalog", "0014_public_rows"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
