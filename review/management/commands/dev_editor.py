"""Create the development editor account (or bring it back) and print its credentials.

`make run` passes `--password-file .dev/editor-password`, so the password an editor typed into
the browser yesterday still works today; `--reset` makes a new one.
"""

import secrets
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

EDITORS_GROUP = "Editors"


class Command(BaseCommand):
    help = (
        "Create the local 'editor' account, a staff member of the Editors group, not a "
        "superuser (development only). Without --password-file every run makes a new password; "
        "with it, the password in the file is kept (and written there the first time)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="editor")
        parser.add_argument(
            "--password-file",
            type=Path,
            help="keep the password in this file between runs (created with mode 600)",
        )
        parser.add_argument(
            "--reset", action="store_true", help="a new password even if the file holds one"
        )

    @transaction.atomic
    def handle(self, *args, username: str, password_file: Path | None, reset: bool, **options):
        from django.conf import settings

        if not settings.DEBUG:
            raise CommandError("dev_editor is for development (DEBUG=true) only.")
        # The group comes from review's data migration; without it the account could not
        # do anything an editor does.
        group = Group.objects.filter(name=EDITORS_GROUP).first()
        if group is None:
            raise CommandError(f"The {EDITORS_GROUP} group is missing: run `manage.py migrate`.")
        kept = None if reset or password_file is None else _read(password_file)
        password = kept or secrets.token_urlsafe(12)
        user, created = get_user_model().objects.get_or_create(username=username)
        # Set even when kept: the database may be new (a deleted db.sqlite3) while the file is
        # not, and the printed password must be the one that works.
        user.set_password(password)
        # An editor works with exactly the Editors group's permissions, like a real one.
        user.is_staff = True
        user.is_superuser = False
        user.is_active = True
        user.save()
        user.groups.add(group)
        if password_file is not None and password != kept:
            password_file.parent.mkdir(parents=True, exist_ok=True)
            password_file.touch(mode=0o600)
            password_file.write_text(password + "\n")
        if created:
            verb = "Created"
        else:
            verb = "Kept" if kept else "Reset"
        where = f"  (kept in {password_file}; --reset for a new one)" if password_file else ""
        self.stdout.write(
            f"{verb} the editor account.  username: {username}  password: {password}{where}"
        )


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None
