"""The admin login locks a username for one address after 5 failures (django-axes)."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"  # noqa: S105


@pytest.fixture(autouse=True)
def _fast_hashing(settings):
    # Each attempt checks a password; the production hasher costs ~0.3 s a try here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # noqa: S303


@pytest.fixture
def editor():
    return get_user_model().objects.create_user(username="editor", password=PASSWORD, is_staff=True)


def log_in(client, password, *, username="editor", address="203.0.113.7"):
    return client.post(
        "/admin/login/?next=/admin/",
        {"username": username, "password": password},
        REMOTE_ADDR=address,
    )


def test_five_failures_lock_the_username_from_that_address(client, editor):
    for _ in range(4):
        assert log_in(client, "wrong").status_code == 200  # the form again, with its error

    locked = log_in(client, "wrong")

    assert locked.status_code == 429
    assert "locked for 15 minutes" in locked.content.decode()
    # locked: even the right password is refused now
    again = log_in(client, PASSWORD)
    assert again.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_lock_is_per_username_and_address(client, editor):
    for _ in range(5):
        log_in(client, "wrong")

    # the same user from another address, and another user from the same address, still may
    assert log_in(client, PASSWORD, address="198.51.100.9").status_code == 302
    client.logout()
    get_user_model().objects.create_user(username="other", password=PASSWORD, is_staff=True)
    assert log_in(client, PASSWORD, username="other").status_code == 302


def test_a_successful_login_resets_the_count(client, editor):
    for _ in range(4):
        log_in(client, "wrong")

    assert log_in(client, PASSWORD).status_code == 302
    client.logout()

    # four more failures do not lock: the count started again
    for _ in range(4):
        assert log_in(client, "wrong").status_code == 200
    assert log_in(client, PASSWORD).status_code == 302


def test_the_lock_expires_after_the_cool_off(client, editor, settings):
    for _ in range(5):
        log_in(client, "wrong")
    assert log_in(client, PASSWORD).status_code == 429

    # fifteen minutes later (the attempt is dated back instead of waiting)
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16)
    )

    assert log_in(client, PASSWORD).status_code == 302


def test_behind_proxies_the_lock_counts_the_client(client, editor, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    for _ in range(5):
        client.post(
            "/admin/login/",
            {"username": "editor", "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR="203.0.113.7",
        )

    # another client behind the same proxy is not locked out
    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": "editor", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR="198.51.100.9",
    )
    assert response.status_code == 302


def test_a_forwarded_value_that_is_not_an_address_counts_as_the_peer(client, editor, settings):
    # given: one proxy in front, and a client that writes its own X-Forwarded-For
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    # when: it fails to log in with values that are not addresses
    for forwarded in ("1.2.3.4, evil", "evil-2", "1.2.3.4, 5.6.7.8.9"):
        response = client.post(
            "/admin/login/",
            {"username": "editor", "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR=forwarded,
        )
        assert response.status_code == 200  # the form again, not a 500

    # then: every failure counted against the peer's address, one lockout identity
    [attempt] = AccessAttempt.objects.all()
    assert (attempt.ip_address, attempt.failures_since_start) == ("10.0.0.1", 3)
