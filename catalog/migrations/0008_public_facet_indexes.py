"""Partial indexes over the rows the public views show, holding the columns the public facets
group and filter by (publicapi.facets), on both databases.

A facet count reads every public record: without these, a sequential scan of the whole
table (on PostgreSQL, 40 MB for 50,000 runways, as every row carries its text and search
vector) for a handful of short columns. With them, an index-only scan of about 2 MB
(bench/public_api.py; docs/api.md "Speed"). The runway index does not lead with brand_id:
PostgreSQL would then probe it for a search's "word or brand named by the word" and, finding
that cheap, stop intersecting the words' own matches (a search's candidates, 4.5 ms instead
of 6.7 on the bench); the plain brand_id index stays the one searches use.

An index-only scan reads only these columns: the record views take the cover through a
scalar subquery (publicapi V5), not a join that would need the row's id and cover_id.
Not on the models, like 0007's partial indexes: their condition is the public views'.
"""

from django.db import migrations

PUBLIC = "WHERE status = 'published' AND deleted_at IS NULL"
INDEXES = {
    "runway_public_facets": ("brand_runways", "season_code, year, collection_type, brand_id"),
    "street_public_facets": ("street_snaps", "city, year, month"),
}
FORWARD = [
    f"CREATE INDEX {name} ON {table} ({columns}) {PUBLIC}"
    for name, (table, columns) in INDEXES.items()
]
BACKWARD = [f"DROP INDEX {name}" for name in INDEXES]


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0007_search"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD, elidable=False)]
