"""Editors may delete a brand alias: a wrong alias sends a brand's shows to another brand,
and changing its text is not always the fix (the alias may simply not belong anywhere).

A later migration than 0002, which is frozen. As there, the permission row is created when
missing: on a fresh database Django's post_migrate has not created it yet.
"""

from django.db import migrations

GROUP = "Editors"
# (app_label, model, codename, name) -- the name as Django would create it.
PERMISSION = ("catalog", "brandalias", "delete_brandalias", "Can delete brand alias")


def grant_delete_brand_alias(apps, schema_editor):
    db = schema_editor.connection.alias
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")

    app_label, model, codename, name = PERMISSION
    content_type, _ = ContentType.objects.using(db).get_or_create(
        app_label=app_label, model=model
    )
    permission, _ = Permission.objects.using(db).get_or_create(
        content_type=content_type, codename=codename, defaults={"name": name}
    )
    group, _ = Group.objects.using(db).get_or_create(name=GROUP)
    group.permissions.add(permission)


def revoke_delete_brand_alias(apps, schema_editor):
    db = schema_editor.connection.alias
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")

    app_label, model, codename, _ = PERMISSION
    permissions = Permission.objects.using(db).filter(
        content_type__app_label=app_label, content_type__model=model, codename=codename
    )
    for group in Group.objects.using(db).filter(name=GROUP):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("catalog", "0001_initial"),
        ("review", "0003_history_in_record_version_order"),
    ]

    operations = [migrations.RunPython(grant_delete_brand_alias, revoke_delete_brand_alias)]
