from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="ingestjob",
            name="lost_executions",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="ingestjob",
            name="downloaded",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
