"""The near-duplicate band indexes leave out hashes ingest never compares with its own
(the legacy archive's, of an unknown algorithm, and rows without a hash): see
catalog.models.COMPARABLE_PHASH and docs/hashing.md."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0002_stored_objects'),
    ]

    operations = [
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
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band0'], name='runway_image_band0_live'),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band1'], name='runway_image_band1_live'),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band2'], name='runway_image_band2_live'),
        ),
        migrations.AddIndex(
            model_name='runwayimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band3'], name='runway_image_band3_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band0'], name='street_image_band0_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band1'], name='street_image_band1_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band2'], name='street_image_band2_live'),
        ),
        migrations.AddIndex(
            model_name='streetsnapimage',
            index=models.Index(condition=models.Q(('deleted_at__isnull', True), models.Q(('phash_algorithm__in', ['legacy', '']), _negated=True)), fields=['phash_band3'], name='street_image_band3_live'),
        ),
    ]
