"""The "Editors" group with exactly the permissions editors need.

Django creates content types and permissions in post_migrate, i.e. after *all* migrations of
a run: on a fresh database they do not exist yet when this runs. So the rows it needs are
created here when missing (post_migrate then finds them and adds only the rest). The lists
are frozen, as a migration must be: a later permission for editors needs a later migration.
"""

from django.db import migrations

GROUP = "Editors"

# (app_label, model, codename, name) -- names as Django would create them.
PERMISSIONS = [
    ("catalog", "runway", "view_runway", "Can view runway"),
    ("catalog", "runway", "change_runway", "Can change runway"),
    ("catalog", "runway", "publish_runway", "Can approve and unpublish runways"),
    ("catalog", "runway", "reject_runway", "Can reject runways"),
    ("catalog", "streetsnap", "view_streetsnap", "Can view street snap"),
    ("catalog", "streetsnap", "change_streetsnap", "Can change street snap"),
    ("catalog", "streetsnap", "publish_streetsnap", "Can approve and unpublish street snaps"),
    ("catalog", "streetsnap", "reject_streetsnap", "Can reject street snaps"),
    ("catalog", "runwayimage", "view_runwayimage", "Can view runway image"),
    ("catalog", "runwayimage", "change_runwayimage", "Can change runway image"),
    ("catalog", "streetsnapimage", "view_streetsnapimage", "Can view street snap image"),
    ("catalog", "streetsnapimage", "change_streetsnapimage", "Can change street snap image"),
    # An "unknown brand" ingest job is fixed by adding the brand or an alias, then retrying.
    ("catalog", "brand", "view_brand", "Can view brand"),
    ("catalog", "brand", "add_brand", "Can add brand"),
    ("catalog", "brand", "change_brand", "Can change brand"),
    ("catalog", "brandalias", "view_brandalias", "Can view brand alias"),
    ("catalog", "brandalias", "add_brandalias", "Can add brand alias"),
    ("catalog", "brandalias", "change_brandalias", "Can change brand alias"),
    ("review", "reviewevent", "view_reviewevent", "Can view review event"),
    ("ingest", "ingestjob", "view_ingestjob", "Can view ingest job"),
    ("ingest", "ingestjob", "retry_ingestjob", "Can retry failed or stale ingest jobs"),
]


def create_editors_group(apps, schema_editor):
    db = schema_editor.connection.alias
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")

    permissions = []
    for app_label, model, codename, name in PERMISSIONS:
        content_type, _ = ContentType.objects.using(db).get_or_create(
            app_label=app_label, model=model
        )
        permission, _ = Permission.objects.using(db).get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name}
        )
        permissions.append(permission)
    group, _ = Group.objects.using(db).get_or_create(name=GROUP)
    group.permissions.add(*permissions)


def remove_editors_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.using(schema_editor.connection.alias).filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("catalog", "0001_initial"),
        ("ingest", "0001_initial"),
        ("review", "0001_review_history"),
    ]

    operations = [migrations.RunPython(create_editors_group, remove_editors_group)]
