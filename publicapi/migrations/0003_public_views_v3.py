"""Public views V3: renditions, placeholder and colour on images (publicapi/sql.py).

The field operations only keep the migration state of the unmanaged models in step; the views
themselves are the SQL.
"""

from django.db import migrations, models

from publicapi.sql import DROP_VIEWS, VIEWS_V2, VIEWS_V3


def image_fields(model_name):
    return [
        migrations.AddField(model_name=model_name, name="renditions", field=models.JSONField()),
        migrations.AddField(
            model_name=model_name, name="placeholder", field=models.CharField(max_length=64)
        ),
        migrations.AddField(model_name=model_name, name="color", field=models.CharField(max_length=7)),
    ]


class Migration(migrations.Migration):

    dependencies = [
        ("publicapi", "0002_public_views_v2"),
        ("catalog", "0006_renditions"),
    ]

    operations = [
        *image_fields("publicrunwayimage"),
        *image_fields("publicstreetsnapimage"),
        migrations.RunSQL(
            sql=DROP_VIEWS + VIEWS_V3,
            reverse_sql=DROP_VIEWS + VIEWS_V2,
        ),
    ]
