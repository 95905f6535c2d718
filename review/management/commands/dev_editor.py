"""Create (or reset) the development editor account and print its credentials."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

EDITORS_GROUP = "Editors"


class Command(BaseCommand):
    help = (
        "Create or reset the local 'editor' account with a fresh password: a staff member of "
        "the Editors group, not a superuser (development only)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="editor")

    @transaction.atomic
    def handle(self, *args, username: str, **options):
        from django.conf import settings

        if not settings.DEBUG:
            raise CommandError("dev_editor is for development (DEBUG=true) only.")
        # The group comes from review's data migration; without it the account could not
        # do anything an editor does.
        group = Group.objects.filter(name=EDITORS_GROUP).first()
        if group is None:
            raise CommandError(f"The {EDITORS_GROUP} group is missing: run `manage.py migrate`.")
        user, created = get_user_model().objects.get_or_create(username=username)
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        # An editor works with exactly the Editors group's permissions, like a real one.
        user.is_staff = True
        user.is_superuser = False
        user.is_active = True
        user.save()
        user.groups.add(group)
        verb = "Created" if created else "Reset"
        self.stdout.write(f"{verb} the editor account.  username: {username}  password: {password}")
