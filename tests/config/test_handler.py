"""The project's WSGI handler (config.handler, served by config.wsgi): Django's, with the
request's host validated once."""

import pytest
from django.core.exceptions import DisallowedHost
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.http import request as django_request

from config.handler import ArchiveRequest, ArchiveWSGIHandler
from tests.factories import RunwayFactory
from tests.support import wsgi_environ as environ


@pytest.fixture
def validations(monkeypatch):
    """How many times ALLOWED_HOSTS is checked."""
    counted = []
    validate = django_request.validate_host

    def counting(host, allowed_hosts):
        counted.append(host)
        return validate(host, allowed_hosts)

    monkeypatch.setattr(django_request, "validate_host", counting)
    return counted


def serve(handler, env) -> tuple[str, bytes]:
    # As Django's test client does: the handler would otherwise close the test's database
    # connection, inside its transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        answer = []
        response = handler(env, lambda status, headers: answer.append(status))
        body = b"".join(response)
        response.close()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return answer[0], body


@pytest.mark.django_db
def test_a_list_page_checks_its_host_once(settings, validations):
    settings.MEDIA_URL = "/media/"  # image URLs made absolute with the request's host
    RunwayFactory(published=True, images=2)
    RunwayFactory(published=True, images=1)

    status, body = serve(ArchiveWSGIHandler(), environ("localhost", "/api/v1/runways/"))

    assert status == "200 OK"
    assert b"http://localhost/media/" in body
    assert validations == ["localhost"]


@pytest.mark.django_db
def test_a_refused_host_is_refused_each_time_it_is_asked(validations):
    request = ArchiveRequest(environ("evil.example"))

    for _ in range(2):
        with pytest.raises(DisallowedHost):
            request.get_host()
    assert validations == ["evil.example", "evil.example"]

    status, _ = serve(ArchiveWSGIHandler(), environ("evil.example"))
    assert status.startswith("400")


def test_config_wsgi_serves_the_projects_handler():
    from config.wsgi import application

    assert type(application) is ArchiveWSGIHandler
