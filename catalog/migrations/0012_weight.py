"""What no query uses any more, or reads badly, at millions of images.

- The keys of public_objects and stored_objects: one unique index each, not the unique field's
  index and its twin for LIKE (varchar_pattern_ops), which no query uses: 15 % of the database
  at a million images (bench/scale.py).
- The band indexes hold what the near-duplicate lookup reads of a candidate (its id and
  hash): it reads them alone, not a heap page per candidate.
- The public views read the public rows (publicapi 0008) since, with indexes of their own:
  the partial indexes over catalog's published rows that served the views before (0007's
  newest-first and search indexes, 0008's facet indexes) serve nothing. The search columns
  stay: the public rows copy them.
"""

from django.db import migrations, models

FACETS = {
    "runway_public_facets": ("brand_runways", "season_code, year, collection_type, brand_id"),
    "street_public_facets": ("street_snaps", "city, year, month"),
}
NEWEST = {"runway_public_newest": "brand_runways", "street_public_newest": "street_snaps"}
SEARCH = {
    "runway_search": "brand_runways",
    "street_search": "street_snaps",
    "brand_search": "brands",
    "brand_alias_search": "brand_aliases",
}
PUBLIC = "WHERE status = 'published' AND deleted_at IS NULL"


def _newest(nulls_last: str) -> list[str]:
    return [
        f"CREATE INDEX {name} ON {table} (published_at DESC{nulls_last}, id DESC) {PUBLIC}"
        for name, table in NEWEST.items()
    ]


def _run(statements):
    def apply(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement, params=None)

    return apply


_DROP = [f"DROP INDEX IF EXISTS {name}" for name in [*FACETS, *NEWEST]]
FORWARD = {
    "postgresql": _DROP + [f"DROP INDEX IF EXISTS {name}" for name in SEARCH],
    "sqlite": _DROP,
}
_FACETS = [f"CREATE INDEX {name} ON {t} ({columns}) {PUBLIC}" for name, (t, columns) in FACETS.items()]
BACKWARD = {
    "postgresql": _newest(" NULLS LAST")
    + _FACETS
    + [f"CREATE INDEX {name} ON {t} USING GIN (search_vector)" for name, t in SEARCH.items()],
    "sqlite": _newest("") + _FACETS,
}


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0011_outbox_due'),
    ]

    operations = [
        migrations.RunPython(_run(FORWARD), _run(BACKWARD)),
        migrations.RemoveIndex(
            model_name='runwayimage',
            name='runway_image_band0_live',
        ),
        migrations.RemoveIndex(
            model_name='runwayimage',
            name='runway_image_band1_live',
        ),
        migrations.RemoveIndex(
            model_name='runwayimage',
            name='runway_image_band2_live',
        ),
        migrations.RemoveIndex(
            model_name='runwayimage',
            name='runway_image_band3_live',
        ),
        migrations.RemoveIndex(
            model_name='streetsnapimage',
            name='street_image_band0_live',
        ),
        migrations.RemoveIndex(
            model_name='streetsnapimage',
            name='street_image_band1_live',
        ),
        migrations.RemoveIndex(
            model_name='streetsnapimage',
            name='street_image_band2_live',
        ),
        migrations.RemoveIndex(
            model_name='streetsnapimage',
            name='street_image_band3_live',
        ),
        migrations.AlterField(
            model_name='publicobject',
            name='key',
            field=models.CharField(max_length=512),
        ),
        migrations.AlterField(
            model_name='storedobject',
            name='key',
            field=models.CharField(max_length=512),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band0'], include=('id', 'phash'), name='runway_image_band0_live'),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band1'], include=('id', 'phash'), name='runway_image_band1_live'),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band2'], include=('id', 'phash'), name='runway_image_band2_live'),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band3'], include=('id', 'phash'), name='runway_image_band3_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band0'], include=('id', 'phash'), name='street_image_band0_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band1'], include=('id', 'phash'), name='street_image_band1_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band2'], include=('id', 'phash'), name='street_image_band2_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band3'], include=('id', 'phash'), name='street_image_band3_live'),
        ),
        migrations.AddConstraint(
            model_name='publicobject',
            constraint=models.UniqueConstraint(fields=('key',), name='public_object_key_once'),
        ),
        migrations.AddConstraint(
            model_name='storedobject',
            constraint=models.UniqueConstraint(fields=('key',), name='stored_object_key_once'),
        ),
    ]
