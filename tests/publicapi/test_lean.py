"""The lean path (publicapi.lean) answers exactly as the full path (the middleware chain and
DRF's view) would: the same status, body and headers for every request it takes, and every
other request left to the full path."""

import pytest
from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import Resolver404, resolve
from hypothesis import given
from hypothesis import settings as fuzz_settings
from hypothesis import strategies as st

from config.metrics import API_REQUESTS
from publicapi import http, lean
from tests.factories import RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db

LEAN = "publicapi.lean.LeanReadMiddleware"
# What differs between any two responses.
UNCOMPARED = {"date", "x-request-id"}


@pytest.fixture
def archive():
    runways = [RunwayFactory(published=True, images=3) for _ in range(5)]
    snaps = [StreetSnapFactory(published=True, images="MdM") for _ in range(3)]
    hidden = RunwayFactory(images=2)  # not published: not in the API
    return runways, snaps, hidden


def full_path_client() -> Client:
    # A client builds its middleware chain on its first request, from the settings then.
    with override_settings(MIDDLEWARE=[m for m in settings.MIDDLEWARE if m != LEAN]):
        client = Client()
        client.get("/api/v1/index/")
    return client


def both(method: str, url: str, **headers):
    """The same request through the lean path and the full path, the throttle's counts
    forgotten in between."""
    responses = []
    for client in (Client(), full_path_client()):
        cache.clear()
        throttle_leases_cleared()
        responses.append(getattr(client, method.lower())(url, **headers))
    return responses


def throttle_leases_cleared():
    with http._leases_lock:
        http._leases.clear()


def comparable(response):
    headers = {k.lower(): v for k, v in response.headers.items() if k.lower() not in UNCOMPARED}
    return response.status_code, headers, response.content


def assert_same(url, lean_response, full_response):
    assert comparable(lean_response) == comparable(full_response), url
    assert not served_lean(full_response)


_served: list = []  # what LeanReadMiddleware.respond returned, during a test


@pytest.fixture(autouse=True)
def _lean_responses(monkeypatch):
    respond = lean.LeanReadMiddleware.respond

    def recorded(self, *args, **kwargs):
        response = respond(self, *args, **kwargs)
        _served.append(response)
        return response

    monkeypatch.setattr(lean.LeanReadMiddleware, "respond", recorded)
    yield
    _served.clear()


def served_lean(response) -> bool:
    return any(response is served for served in _served)


def urls(archive):
    runways, snaps, hidden = archive
    runway, snap = runways[0], snaps[0]
    return {
        # Taken by the lean path.
        "/api/v1/runways/": True,
        "/api/v1/runways/?page=2&page_size=2": True,
        "/api/v1/runways/?page=3&page_size=2": True,
        "/api/v1/runways/?page_size=1": True,
        "/api/v1/runways/?page_size=500": True,
        "/api/v1/runways/?page=0001&page_size=02": True,
        "/api/v1/runways/?unknown=1": True,
        f"/api/v1/runways/{runway.pk}/": True,
        f"/api/v1/runways/{runway.pk}/?page=abc": True,
        "/api/v1/street-snaps/": True,
        "/api/v1/street-snaps/?page=2&page_size=1": True,
        f"/api/v1/street-snaps/{snap.pk}/": True,
        # Left to the full path.
        "/api/v1/runways/?page=4&page_size=2": False,  # past the last page: 404
        f"/api/v1/runways/?page={10**17}&page_size=100": False,
        "/api/v1/runways/?page=abc": False,
        "/api/v1/runways/?page_size=0": False,
        "/api/v1/runways/?page=": False,
        f"/api/v1/runways/?brand={runway.brand.slug}": False,
        "/api/v1/runways/?year=2024": False,
        "/api/v1/runways/?year=abc": False,
        "/api/v1/runways/?q=runway": False,
        "/api/v1/runways/?format=json": False,
        "/api/v1/runways/?format=api": False,
        f"/api/v1/runways/{hidden.pk}/": False,
        f"/api/v1/runways/{snap.pk + 10**6}/": False,
        f"/api/v1/runways/{10**30}/": False,
        f"/api/v1/street-snaps/{runway.pk + 10**6}/": False,
        f"/api/v1/runways/{runway.pk}": False,  # APPEND_SLASH's redirect
        "/api/v1/runways": False,
        "/api/v1/runways/facets/": False,
        "/api/v1/brands/": False,
        "/api/v1/index/": False,
        "/api/v1/nothing/": False,
    }


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_every_request_gets_the_full_paths_answer(archive, method):
    for url, taken in urls(archive).items():
        lean_response, full_response = both(method, url)

        assert_same(url, lean_response, full_response)
        assert served_lean(lean_response) == taken, url


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_ACCEPT": "application/json"},
        {"HTTP_ACCEPT": "*/*"},
        {"HTTP_ACCEPT": ""},
        {"HTTP_ORIGIN": "https://elsewhere.example"},  # a simple CORS request
        {"HTTP_X_FORWARDED_FOR": "203.0.113.9"},
        {"HTTP_COOKIE": "csrftoken=bad; sessionid=abc"},
        {"HTTP_X_REQUEST_ID": "abc-123"},
    ],
)
def test_headers_the_lean_path_takes(archive, headers):
    runway = archive[0][0]
    for url in ("/api/v1/runways/?page_size=2", f"/api/v1/runways/{runway.pk}/"):
        lean_response, full_response = both("GET", url, **headers)

        assert_same(url, lean_response, full_response)
        assert served_lean(lean_response), url


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_ACCEPT": "text/html"},  # 406
        {"HTTP_ACCEPT": "application/json; indent=2"},
        {"HTTP_ACCEPT": "application/json, */*"},
        {"HTTP_HOST": "evil.example"},  # 400
    ],
)
def test_headers_left_to_the_full_path(archive, headers):
    runway = archive[0][0]
    for url in ("/api/v1/runways/", f"/api/v1/runways/{runway.pk}/"):
        lean_response, full_response = both("GET", url, **headers)

        assert_same(url, lean_response, full_response)
        assert not served_lean(lean_response), url


@pytest.mark.parametrize("secure", [False, True])
def test_the_security_and_frame_headers_follow_the_settings(archive, settings, secure):
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_HSTS_PRELOAD = True
    settings.SECURE_REFERRER_POLICY = "no-referrer, strict-origin"
    settings.SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin-allow-popups"
    settings.X_FRAME_OPTIONS = "sameorigin"
    for url in ("/api/v1/runways/?page_size=2", f"/api/v1/runways/{archive[0][0].pk}/"):
        lean_response, full_response = both("GET", url, secure=secure)

        assert_same(url, lean_response, full_response)
        assert served_lean(lean_response), url
        assert lean_response["X-Frame-Options"] == "SAMEORIGIN"
        assert lean_response["Referrer-Policy"] == "no-referrer,strict-origin"
        assert lean_response.has_header("Strict-Transport-Security") == secure


def test_the_https_redirect_is_the_full_paths(archive, settings):
    settings.SECURE_SSL_REDIRECT = True
    url = f"/api/v1/runways/{archive[0][0].pk}/"

    lean_response, full_response = both("GET", url)
    assert_same(url, lean_response, full_response)
    assert lean_response.status_code == 301
    assert not served_lean(lean_response)

    lean_response, full_response = both("GET", url, secure=True)
    assert_same(url, lean_response, full_response)
    assert served_lean(lean_response)


def test_the_fixed_headers_are_remade_when_a_setting_changes(archive, settings):
    url = "/api/v1/street-snaps/"
    assert Client().get(url)["X-Frame-Options"] == "DENY"

    settings.X_FRAME_OPTIONS = "SAMEORIGIN"

    assert Client().get(url)["X-Frame-Options"] == "SAMEORIGIN"


HEADER_NAMES = st.sampled_from(["ETag", "etag", "Cache-Control", "X-Frame-Options", "Vary", "A"])


@fuzz_settings(max_examples=100, deadline=None)
@given(
    present=st.dictionaries(HEADER_NAMES, st.sampled_from(["abc", "", "a, b=c"]), max_size=4),
    asked=HEADER_NAMES,
)
def test_a_lean_responses_headers_answer_as_djangos(present, asked):
    djangos = HttpResponse(b"{}", content_type="application/json")
    leans = lean._LeanResponse(b"{}", "application/json")
    for name, value in present.items():
        djangos[name] = leans[name] = value

    assert (asked in leans, leans.get(asked), leans.get(asked, "-")) == (
        asked in djangos,
        djangos.get(asked),
        djangos.get(asked, "-"),
    )
    assert (asked in leans.headers, leans.headers.get(asked)) == (
        asked in djangos.headers,
        djangos.headers.get(asked),
    )
    assert list(leans.items()) == list(djangos.items())
    assert ((asked, "abc") in leans.items()) == ((asked, "abc") in djangos.items())
    assert len(leans.items()) == len(djangos.items())


def test_an_error_in_the_lean_path_is_djangos_500_with_the_security_headers(archive, monkeypatch):
    def broken(cls, pk):
        raise RuntimeError("the database said something odd")

    monkeypatch.setattr(lean.PublicRecordViewSet, "record", classmethod(broken))
    client = Client(raise_request_exception=False)

    response = client.get(f"/api/v1/runways/{archive[0][0].pk}/")

    assert response.status_code == 500
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == settings.SECURE_REFERRER_POLICY
    assert response["X-Request-ID"]


def test_a_cors_preflight_is_the_full_paths(archive):
    url = f"/api/v1/runways/{archive[0][0].pk}/"
    lean_response, full_response = both(
        "OPTIONS",
        url,
        HTTP_ORIGIN="https://elsewhere.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="if-none-match",
    )

    assert lean_response.status_code == 200
    assert_same(url, lean_response, full_response)


@pytest.mark.parametrize("url", ["/api/v1/runways/?page_size=3", "/api/v1/street-snaps/"])
def test_if_none_match_gives_the_same_304(archive, url):
    etag = Client().get(url)["ETag"]
    for value in (etag, f"W/{etag}", f'"other", {etag}', "*", '"other"'):
        lean_response, full_response = both("GET", url, HTTP_IF_NONE_MATCH=value)

        assert_same(value, lean_response, full_response)
        assert lean_response.status_code == (200 if value == '"other"' else 304)


def test_the_throttle_counts_each_request_once_and_answers_429_alike(archive, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min"},
    }
    runway = archive[0][0]
    sequence = [
        f"/api/v1/runways/{runway.pk + 10**6}/",  # counted here, answered 404 by DRF
        "/api/v1/runways/?page=abc",  # left to DRF before counting: counted there, 400
        f"/api/v1/runways/{runway.pk}/",
        "/api/v1/runways/",  # the fourth: 429
        f"/api/v1/runways/{runway.pk}/",
    ]
    answers = []
    for client in (Client(), full_path_client()):
        cache.clear()
        throttle_leases_cleared()
        answers.append([client.get(url) for url in sequence])

    lean_answers, full_answers = answers
    assert [r.status_code for r in lean_answers] == [404, 400, 200, 429, 429]
    for url, lean_response, full_response in zip(sequence, *answers, strict=True):
        assert_same(url, lean_response, full_response)
    assert lean_answers[3]["Retry-After"]


def test_the_metrics_count_lean_responses_by_their_url_name(archive):
    runway = archive[0][0]

    def count(view, status):
        return API_REQUESTS.labels(view, status)._value.get()

    before = count("public-runway-detail", "200"), count("public-runway-list", "200")
    Client().get(f"/api/v1/runways/{runway.pk}/")
    Client().get("/api/v1/runways/")

    after = count("public-runway-detail", "200"), count("public-runway-list", "200")
    assert after == (before[0] + 1, before[1] + 1)


def test_the_request_line_is_logged_with_the_request_id(archive, caplog):
    caplog.set_level("INFO", logger="config.requests")

    response = Client().get("/api/v1/runways/", HTTP_X_REQUEST_ID="lean-1")

    assert served_lean(response)
    assert response["X-Request-ID"] == "lean-1"
    (line,) = [r for r in caplog.records if r.name == "config.requests"]
    assert line.getMessage() == "GET /api/v1/runways/ 200"
    assert line.request_id == "lean-1"


# --- Properties -----------------------------------------------------------------------------

PATHS = st.sampled_from(
    ["/api/v1/runways/", "/api/v1/street-snaps/", "/api/v1/runways/{}/", "/api/v1/street-snaps/{}/"]
)
NUMBERS = st.sampled_from(["1", "2", "3", "0", "01", "", "x", "-1", "99", str(10**19)])
NAMES = st.sampled_from(["page", "page_size", "year", "format", "other", "brand"])


@fuzz_settings(max_examples=40, deadline=None)
@given(
    path=PATHS,
    record=st.integers(0, 9),
    query=st.lists(st.tuples(NAMES, NUMBERS), max_size=3),
    method=st.sampled_from(["GET", "HEAD"]),
    if_none_match=st.sampled_from([None, "*", '"x"']),
)
def test_any_read_gets_the_full_paths_answer(archive, path, record, query, method, if_none_match):
    runways, snaps, _ = archive
    ids = [r.pk for r in runways] + [s.pk for s in snaps]
    url = path.format(ids[record] if record < len(ids) else 10**6 + record)
    if query:
        url += "?" + "&".join(f"{name}={value}" for name, value in query)
    headers = {} if if_none_match is None else {"HTTP_IF_NONE_MATCH": if_none_match}

    lean_response, full_response = both(method, url, **headers)

    assert_same(url, lean_response, full_response)


@fuzz_settings(max_examples=200, deadline=None)
@given(
    prefix=st.sampled_from(["runways", "street-snaps", "brands", "index", "runway", "x-y"]),
    rest=st.text(alphabet="0123456789/a\n.", max_size=6),
)
def test_the_lean_path_takes_only_what_the_resolver_routes_to_a_record_viewset(prefix, rest):
    path = f"/api/v1/{prefix}/{rest}"
    match = lean._URL.match(path)
    route = lean._routes().get(match["prefix"]) if match else None
    if route is None:
        return
    try:
        resolved = resolve(path)
    except Resolver404:
        pytest.fail(f"the lean path would take {path!r}, which resolves to nothing")
    action = "detail" if match["pk"] else "list"
    assert resolved.url_name == f"{route.basename}-{action}"
    assert resolved.func.cls is route.viewset  # type: ignore[attr-defined]
    assert resolved.kwargs == ({"pk": match["pk"]} if match["pk"] else {})
    made = lean._resolver_match(path, match["pk"])
    assert (made.url_name, made.kwargs, made.route, made.func) == (
        resolved.url_name,
        resolved.kwargs,
        resolved.route,
        resolved.func,
    )
