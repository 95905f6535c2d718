"""Public views V2: brand slug and name on runways, mime_type on images (publicapi/sql.py).

The field operations only keep the migration state of the unmanaged models in step (Django
does not touch the database for an unmanaged model); the views themselves are the SQL.
"""

from django.db import migrations, models

from publicapi.sql import DROP_VIEWS, VIEWS_V1, VIEWS_V2


class Migration(migrations.Migration):

    dependencies = [
        ("publicapi", "0001_public_views"),
    ]

    operations = [
        migrations.AddField(
            model_name="publicrunway",
            name="brand_slug",
            field=models.SlugField(max_length=128),
        ),
        migrations.AddField(
            model_name="publicrunway",
            name="brand_name",
            field=models.CharField(max_length=128),
        ),
        migrations.AddField(
            model_name="publicrunwayimage",
            name="mime_type",
            field=models.CharField(max_length=64),
        ),
        migrations.AddField(
            model_name="publicstreetsnapimage",
            name="mime_type",
            field=models.CharField(max_length=64),
        ),
        migrations.RunSQL(
            sql=DROP_VIEWS + VIEWS_V2,
            reverse_sql=DROP_VIEWS + VIEWS_V1,
        ),
    ]
