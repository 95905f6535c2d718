"""Objects ingest put in storage: the only objects gc_media may delete (catalog.storage)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='StoredObject',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=512, unique=True)),
                ('last_stored_at', models.DateTimeField()),
                ('preexisting', models.BooleanField(default=False)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'db_table': 'stored_objects',
            },
        ),
        migrations.AddIndex(
            model_name='storedobject',
            index=models.Index(condition=models.Q(('preexisting', False)), fields=['last_stored_at'], name='stored_object_collectable'),
        ),
    ]
