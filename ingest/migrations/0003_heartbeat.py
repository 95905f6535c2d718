from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0002_execution_count"),
    ]

    operations = [
        migrations.AddField(
            model_name="ingestjob",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="lease renewed"),
        ),
    ]
