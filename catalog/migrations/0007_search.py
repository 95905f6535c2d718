"""Full-text search columns for the public API's `?q=` (PostgreSQL only).

Each searchable table gets a generated `search_vector` (tsvector, STORED) and a GIN index; the
public views select it (publicapi/sql.py), so a search filters published rows only and never
reads another table's text. The text search configuration `archive_search` is `simple` (no
stemming: brand names and cities are not English words) with `unaccent` first, so matching
ignores case and accents. ASCII punctuation becomes spaces before parsing, so
"Fall/Winter" and "ready-to-wear" are words a visitor can type, not a file path or one
hyphenated token; publicapi.search splits a query the same way.

Weights rank a match (publicapi.search): A title (and brand names and aliases, city),
B season, season code, collection type and year, C description.

Also a partial index in the public lists' order (publicapi.search.NEWEST_FIRST) over the rows
the public views show, on both databases: page 1 is an index scan that stops after a page, not
a sort of every published row. (SQLite takes no NULLS LAST in an index; it sorts NULLs last
in a descending order anyway.) Not on the models either: Django cannot say NULLS LAST for
one database and not the other.

On SQLite no search column is added: publicapi.search falls back to matching in Python. The columns
are not on the Django models (a GeneratedField cannot hold a PostgreSQL-only expression and
still build on SQLite); every write leaves them to the database.
"""

from django.db import migrations

CONFIG = "archive_search"
# string.punctuation, as an SQL literal (quote doubled); translate() maps each to a space.
PUNCTUATION = "!\"#$%&''()*+,-./:;<=>?@[\\]^_`{|}~"
SPACES = " " * 32


def document(*weighted: tuple[str, str]) -> str:
    parts = [
        f"setweight(to_tsvector('{CONFIG}'::regconfig, "
        f"translate({expression}, '{PUNCTUATION}', '{SPACES}')), '{weight}')"
        for expression, weight in weighted
    ]
    return " || ".join(parts)


COLUMNS = {
    "brand_runways": document(
        ("title", "A"),
        ("season_code || ' ' || season || ' ' || collection_type || ' ' || year::text", "B"),
        ("description", "C"),
    ),
    "street_snaps": document(("city || ' ' || title", "A"), ("description", "C")),
    "brands": document(("name", "A")),
    "brand_aliases": document(("alias", "A")),
}
INDEXES = {
    "brand_runways": "runway_search",
    "street_snaps": "street_search",
    "brands": "brand_search",
    "brand_aliases": "brand_alias_search",
}

FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    f"CREATE TEXT SEARCH CONFIGURATION {CONFIG} (COPY = simple)",
    f"ALTER TEXT SEARCH CONFIGURATION {CONFIG} ALTER MAPPING FOR "
    "word, hword, hword_part, numword, numhword, hword_numpart WITH unaccent, simple",
]
for table, expression in COLUMNS.items():
    FORWARD.append(
        f"ALTER TABLE {table} ADD COLUMN search_vector tsvector "
        f"GENERATED ALWAYS AS ({expression}) STORED"
    )
    FORWARD.append(f"CREATE INDEX {INDEXES[table]} ON {table} USING GIN (search_vector)")

NEWEST = {"brand_runways": "runway_public_newest", "street_snaps": "street_public_newest"}


def newest_indexes(nulls_last: str) -> list[str]:
    return [
        f"CREATE INDEX {name} ON {table} (published_at DESC{nulls_last}, id DESC) "
        "WHERE status = 'published' AND deleted_at IS NULL"
        for table, name in NEWEST.items()
    ]


FORWARD += newest_indexes(" NULLS LAST")
SQLITE_FORWARD = newest_indexes("")
SQLITE_BACKWARD = [f"DROP INDEX {name}" for name in NEWEST.values()]

BACKWARD = [*SQLITE_BACKWARD]
BACKWARD += [f"ALTER TABLE {table} DROP COLUMN search_vector" for table in COLUMNS]
# The extension stays: another database object may have come to use it.
BACKWARD.append(f"DROP TEXT SEARCH CONFIGURATION {CONFIG}")


def run(postgresql, sqlite):
    def apply(apps, schema_editor):
        vendor = schema_editor.connection.vendor
        for statement in {"postgresql": postgresql, "sqlite": sqlite}.get(vendor, []):
            schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0006_renditions"),
    ]

    operations = [
        migrations.RunPython(
            run(FORWARD, SQLITE_FORWARD), run(BACKWARD, SQLITE_BACKWARD), elidable=False
        ),
    ]
