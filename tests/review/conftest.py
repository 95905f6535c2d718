"""Fixtures for the review app: editors as the Editors group makes them (the helpers are in
tests/review/support.py; the browser is a shared fixture, tests/conftest.py)."""

import pytest
from django.contrib.auth.models import Group, User

from tests.review.support import editors_group


@pytest.fixture
def make_editor(db):
    """A staff user in the Editors group (created by review's data migration)."""

    def make(username: str = "anna", *, publish: bool = True) -> User:
        user = User.objects.create_user(username=username, password="pw-" + username)
        user.is_staff = True
        user.save()
        user.groups.add(editors_group())
        if not publish:
            # The same group minus approve/unpublish: a junior editor who may only reject.
            junior, _ = Group.objects.get_or_create(name="Editors without publish")
            junior.permissions.set(
                editors_group()
                .permissions.exclude(codename__startswith="publish_")
                .values_list("pk", flat=True)
            )
            user.groups.set([junior])
        return User.objects.get(pk=user.pk)  # fresh: no cached permissions

    return make


@pytest.fixture
def editor(make_editor):
    return make_editor("anna")


@pytest.fixture
def editor_client(client, editor):
    client.force_login(editor)
    return client
