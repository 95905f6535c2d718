"""The Editors group as review's data migration makes it: on the test database, and on
empty databases migrated by `manage.py migrate` in a separate process, where Django's
post_migrate has not created any permission yet when the migration runs."""

import sqlite3
import uuid

import psycopg
import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.db import connection

from tests.test_project import manage, postgres_url

EDITOR_PERMISSIONS = {
    "catalog.view_runway",
    "catalog.change_runway",
    "catalog.publish_runway",
    "catalog.reject_runway",
    "catalog.takedown_runway",
    "catalog.view_streetsnap",
    "catalog.change_streetsnap",
    "catalog.publish_streetsnap",
    "catalog.reject_streetsnap",
    "catalog.takedown_streetsnap",
    "catalog.view_runwayimage",
    "catalog.change_runwayimage",
    "catalog.view_streetsnapimage",
    "catalog.change_streetsnapimage",
    "catalog.view_brand",
    "catalog.add_brand",
    "catalog.change_brand",
    "catalog.view_brandalias",
    "catalog.add_brandalias",
    "catalog.change_brandalias",
    "catalog.delete_brandalias",
    "review.view_reviewevent",
    "ingest.view_ingestjob",
    "ingest.retry_ingestjob",
}
GROUP_PERMISSIONS_SQL = """
    SELECT ct.app_label || '.' || p.codename
    FROM auth_group g
    JOIN auth_group_permissions gp ON gp.group_id = g.id
    JOIN auth_permission p ON p.id = gp.permission_id
    JOIN django_content_type ct ON ct.id = p.content_type_id
    WHERE g.name = 'Editors'
"""


@pytest.mark.django_db
def test_the_editors_group_has_exactly_what_editors_need():
    group = Group.objects.get(name="Editors")

    granted = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}

    assert granted == EDITOR_PERMISSIONS
    # Nothing is deleted by editors but a wrong alias (it sends a brand's shows elsewhere).
    assert {p for p in granted if "delete_" in p} == {"catalog.delete_brandalias"}
    assert not any(p.startswith(("review.add_", "review.change_")) for p in granted)


@pytest.mark.django_db
def test_an_editor_has_those_permissions_and_is_not_a_superuser(make_editor):
    editor = make_editor("anna")

    assert editor.get_all_permissions() == EDITOR_PERMISSIONS
    assert not editor.is_superuser


def test_the_group_is_made_on_an_empty_sqlite_database_and_unmade_backwards(tmp_path):
    path = tmp_path / "fresh.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{path}"}

    forward = manage("migrate", "--no-input", env=env)
    with sqlite3.connect(path) as db:
        granted = {row[0] for row in db.execute(GROUP_PERMISSIONS_SQL)}
    backward = manage("migrate", "review", "0001", "--no-input", env=env)
    with sqlite3.connect(path) as db:
        groups_after_backward = db.execute("SELECT count(*) FROM auth_group").fetchone()[0]
    again = manage("migrate", "--no-input", env=env)

    assert forward.returncode == 0, forward.stderr
    assert granted == EDITOR_PERMISSIONS
    assert backward.returncode == 0, backward.stderr
    assert groups_after_backward == 0
    assert again.returncode == 0, again.stderr


@pytest.mark.postgres
def test_the_group_is_made_on_an_empty_postgres_database():
    name = f"archive_editors_{uuid.uuid4().hex[:8]}"
    db = connection.settings_dict
    admin = psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname="postgres", autocommit=True
    )
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = postgres_url(name)

        migrated = manage("migrate", "--no-input", env={"DATABASE_URL": url})

        assert migrated.returncode == 0, migrated.stderr
        with psycopg.connect(url.replace("postgres://", "postgresql://")) as fresh:
            granted = {row[0] for row in fresh.execute(GROUP_PERMISSIONS_SQL)}
        assert granted == EDITOR_PERMISSIONS
    finally:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()


@pytest.mark.django_db
class TestDevEditor:
    def test_it_makes_a_staff_editor_not_a_superuser(self, settings, capsys):
        settings.DEBUG = True

        call_command("dev_editor")

        editor = User.objects.get(username="editor")
        password = capsys.readouterr().out.split("password: ")[1].strip()
        assert editor.is_staff and editor.is_active and not editor.is_superuser
        assert list(editor.groups.values_list("name", flat=True)) == ["Editors"]
        assert editor.check_password(password)
        assert editor.has_perm("catalog.publish_runway")
        assert not editor.has_perm("catalog.delete_runway")

    def test_a_rerun_resets_the_password_and_demotes_an_old_superuser(self, settings, capsys):
        settings.DEBUG = True
        User.objects.create_superuser("editor", password="old")

        call_command("dev_editor")

        editor = User.objects.get(username="editor")
        assert not editor.is_superuser and not editor.check_password("old")
        assert editor.groups.count() == 1

    def test_with_a_password_file_a_rerun_keeps_the_password(self, settings, capsys, tmp_path):
        settings.DEBUG = True
        password_file = tmp_path / ".dev" / "editor-password"

        call_command("dev_editor", password_file=password_file)
        first = capsys.readouterr().out.split("password: ")[1].split()[0]
        call_command("dev_editor", password_file=password_file)
        second = capsys.readouterr().out

        assert "Kept the editor account" in second
        assert second.split("password: ")[1].split()[0] == first
        assert User.objects.get(username="editor").check_password(first)
        assert password_file.read_text().strip() == first
        assert password_file.stat().st_mode & 0o777 == 0o600

    def test_a_kept_password_is_set_again_on_a_new_database(self, settings, tmp_path):
        settings.DEBUG = True
        password_file = tmp_path / "editor-password"
        password_file.write_text("from-yesterday\n")

        call_command("dev_editor", password_file=password_file)

        assert User.objects.get(username="editor").check_password("from-yesterday")

    def test_reset_makes_a_new_password_and_keeps_that(self, settings, capsys, tmp_path):
        settings.DEBUG = True
        password_file = tmp_path / "editor-password"
        password_file.write_text("old-one\n")

        call_command("dev_editor", password_file=password_file, reset=True)

        new = capsys.readouterr().out.split("password: ")[1].split()[0]
        assert new != "old-one"
        assert password_file.read_text().strip() == new
        assert User.objects.get(username="editor").check_password(new)

    def test_it_refuses_outside_debug(self, settings):
        settings.DEBUG = False

        with pytest.raises(CommandError, match="development"):
            call_command("dev_editor")

    def test_without_the_group_it_says_to_migrate(self, settings):
        settings.DEBUG = True
        Group.objects.filter(name="Editors").delete()

        with pytest.raises(CommandError, match="migrate"):
            call_command("dev_editor")

        assert not User.objects.filter(username="editor").exists()
