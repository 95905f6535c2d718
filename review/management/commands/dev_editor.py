"""Create (or reset) the development editor account and print its credentials."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction


class Command(BaseCommand):
    help = "Create or reset the local 'editor' account with a fresh password (development only)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="editor")

    @transaction.atomic
    def handle(self, *args, username: str, **options):
        from django.conf import settings

        if not settings.DEBUG:
            raise CommandError("dev_editor is for development (DEBUG=true) only.")
        user, created = get_user_model().objects.get_or_create(username=username)
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.is_staff = True
        user.is_superuser = True
        user.save()
        verb = "Created" if created else "Reset"
        self.stdout.write(f"{verb} the editor account.  username: {username}  password: {password}")
