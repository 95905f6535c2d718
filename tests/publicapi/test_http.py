"""HTTP behaviour of the public API: ETag / 304, Cache-Control, CORS, the JSON error shape,
and the anonymous throttle (in local memory and in a Redis shared between processes)."""

import uuid
from urllib.parse import quote

import pytest
import redis
from django.core.cache import caches
from hypothesis import given
from hypothesis import settings as fuzz_settings
from hypothesis import strategies as st

from catalog.models import Runway
from tests.factories import RunwayFactory, RunwayImageFactory
from tests.support import run_with_settings

pytestmark = pytest.mark.django_db

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def runway():
    runway = RunwayFactory(published=True, title="Before")
    RunwayImageFactory(runway=runway)
    return runway


def public_urls(runway):
    return [
        "/api/v1/runways/",
        f"/api/v1/runways/{runway.pk}/",
        "/api/v1/street-snaps/",
        "/api/v1/brands/",
        f"/api/v1/brands/{runway.brand.slug}/",
        "/api/v1/index/",
    ]


# --- caching ------------------------------------------------------------------------------


ORIGIN = {"Origin": "https://frontend.example"}


def test_every_public_response_carries_an_etag_and_public_cache_control(client, runway):
    for url in public_urls(runway):
        response = client.get(url, headers=ORIGIN)

        assert response.status_code == 200, url
        assert response["Cache-Control"] == "public, max-age=60", url
        assert response["ETag"].startswith('"'), url
        assert response["Access-Control-Allow-Origin"] == "*", url
        assert response["Access-Control-Expose-Headers"] == "ETag, Retry-After", url
        # Nothing that would split or bypass a shared cache.
        assert "Cookie" not in response.get("Vary", ""), url
        assert not response.cookies, url


def test_a_matching_if_none_match_is_a_304_with_the_caching_headers(client, runway):
    for url in public_urls(runway):
        first = client.get(url)

        again = client.get(url, headers={**ORIGIN, "If-None-Match": first["ETag"]})

        assert again.status_code == 304, url
        assert again.content == b""
        assert again["ETag"] == first["ETag"]
        assert again["Cache-Control"] == "public, max-age=60"
        # A browser app on another origin must be allowed to use the 304 too.
        assert again["Access-Control-Allow-Origin"] == "*"
        assert again["Access-Control-Expose-Headers"] == "ETag, Retry-After"


def test_a_preflight_allows_a_cross_origin_if_none_match(client, runway):
    for url in public_urls(runway):
        response = client.options(
            url,
            headers={
                "Origin": "https://frontend.example",
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "if-none-match",
            },
        )

        assert response.status_code == 200, url
        assert response["Access-Control-Allow-Origin"] == "*", url
        assert "GET" in response["Access-Control-Allow-Methods"], url
        assert "If-None-Match" in response["Access-Control-Allow-Headers"], url


@pytest.mark.parametrize(
    "header",
    ["{etag}", "W/{etag}", '"other", {etag}', "*"],
    ids=["strong", "weak", "list", "star"],
)
def test_if_none_match_forms_that_match(client, runway, header):
    etag = client.get("/api/v1/runways/")["ETag"]

    response = client.get("/api/v1/runways/", headers={"If-None-Match": header.format(etag=etag)})

    assert response.status_code == 304


def test_the_etag_changes_when_the_content_changes(client, runway):
    detail = f"/api/v1/runways/{runway.pk}/"
    before_detail = client.get(detail)["ETag"]
    before_list = client.get("/api/v1/runways/")["ETag"]

    Runway.objects.filter(pk=runway.pk).update(title="After")
    after = client.get(detail, headers={"If-None-Match": before_detail})

    assert after.status_code == 200
    assert after.json()["title"] == "After"
    assert after["ETag"] != before_detail
    assert client.get(detail, headers={"If-None-Match": after["ETag"]}).status_code == 304

    RunwayFactory(published=True)
    listed = client.get("/api/v1/runways/", headers={"If-None-Match": before_list})
    assert listed.status_code == 200
    assert listed["ETag"] != before_list


def test_an_unpublished_record_is_404_even_for_a_client_holding_its_etag(client, runway):
    detail = f"/api/v1/runways/{runway.pk}/"
    etag = client.get(detail)["ETag"]

    Runway.objects.filter(pk=runway.pk).update(status="rejected")
    response = client.get(detail, headers={"If-None-Match": etag})

    assert response.status_code == 404
    assert response["Cache-Control"] == "no-store"
    assert "ETag" not in response


def test_max_age_follows_the_setting(client, settings, runway):
    settings.PUBLIC_API_CACHE_SECONDS = 300

    assert client.get("/api/v1/runways/")["Cache-Control"] == "public, max-age=300"


def test_head_gets_the_caching_headers_without_a_body(client, runway):
    response = client.head("/api/v1/runways/")

    assert response.status_code == 200
    assert response.content == b""
    assert response["Cache-Control"] == "public, max-age=60"


# --- errors ---------------------------------------------------------------------------------


def assert_error(response, status, code):
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    assert "ETag" not in response
    body = response.json()
    assert set(body) == {"status", "code", "detail", "errors"}
    assert (body["status"], body["code"]) == (status, code)
    assert body["detail"]
    return body


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/",
        "/api/v1/nothing/",
        "/api/v1/runways/abc/",
        "/api/v1/runways/a%0Ab/",
        "/api/v1/runways/%F0%9F%91%97/",
        "/api/v1/runways/1/images/",
        "/api/v1/runways/99999999999999999999999999/",
        "/api/v1/street-snaps/0/",
        "/api/v1/brands/no-such-brand/",
    ],
)
def test_anything_not_public_under_the_api_is_a_json_404(client, url):
    body = assert_error(client.get(url), 404, "not_found")

    assert body == {"status": 404, "code": "not_found", "detail": "Not found.", "errors": {}}


def test_a_path_without_its_trailing_slash_redirects(client):
    response = client.get("/api/v1/runways")

    assert response.status_code == 301
    assert response["Location"] == "/api/v1/runways/"


def test_a_bad_filter_is_a_json_400(client):
    body = assert_error(client.get("/api/v1/runways/", {"year": "abc"}), 400, "invalid")

    assert body["errors"] == {"year": ["Enter a whole number."]}


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_writes_are_a_json_405(client, runway, method):
    response = getattr(client, method)(f"/api/v1/runways/{runway.pk}/")

    assert_error(response, 405, "method_not_allowed")


def test_an_unacceptable_accept_header_is_a_json_406(client):
    response = client.get("/api/v1/runways/", headers={"Accept": "text/html"})

    assert_error(response, 406, "not_acceptable")


# --- throttling -----------------------------------------------------------------------------


def test_the_throttle_answers_429_with_retry_after_per_client(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min"},
    }

    statuses = [client.get("/api/v1/runways/").status_code for _ in range(3)]
    throttled = client.get("/api/v1/brands/")
    other_client = client.get("/api/v1/runways/", REMOTE_ADDR="192.0.2.7")

    assert statuses == [200, 200, 200]
    body = assert_error(throttled, 429, "throttled")
    assert "available in" in body["detail"]
    assert 0 < int(throttled["Retry-After"]) <= 60
    assert other_client.status_code == 200


def test_a_forged_x_forwarded_for_does_not_reset_the_count(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/min"},
    }

    statuses = [
        client.get("/api/v1/runways/", headers={"X-Forwarded-For": f"198.51.100.{n}"}).status_code
        for n in range(4)
    ]

    assert statuses == [200, 200, 429, 429]


def test_behind_one_proxy_the_client_is_the_address_it_appended(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/min"},
        "NUM_PROXIES": 1,
    }

    def get(forwarded_for):
        return client.get("/api/v1/runways/", headers={"X-Forwarded-For": forwarded_for})

    # The proxy appends the address it saw; what the client put before it is ignored.
    first = [get(f"203.0.113.{n}, 192.0.2.1").status_code for n in range(3)]
    other_client = get("192.0.2.2").status_code

    assert first == [200, 200, 429]
    assert other_client == 200


def test_behind_a_proxy_a_forwarded_value_that_is_not_an_address_is_no_new_identity(
    client, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/min"},
        "NUM_PROXIES": 1,
    }

    # A client that reaches the app without the proxy writes a new value each time: they
    # all count as its own address.
    statuses = [
        client.get("/api/v1/runways/", headers={"X-Forwarded-For": f"1.2.3.4, evil-{n}"})
        for n in range(3)
    ]

    assert [response.status_code for response in statuses] == [200, 200, 429]


def test_the_default_rate_comes_from_the_environment():
    script = (
        "from django.conf import settings as s;"
        "print(s.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']['anon'])"
    )

    default = run_with_settings(script, {})
    configured = run_with_settings(script, {"PUBLIC_API_THROTTLE_RATE": "30/min"})

    assert (default, configured) == ("120/min", "30/min")


def test_the_cache_is_redis_when_redis_url_is_set_and_local_memory_otherwise():
    script = "from django.conf import settings as s; print(s.CACHES['default']['BACKEND'])"

    assert run_with_settings(script, {}) == "django.core.cache.backends.locmem.LocMemCache"
    assert run_with_settings(script, {"REDIS_URL": REDIS_URL}) == "django_redis.cache.RedisCache"


@pytest.fixture
def redis_cache(settings):
    """The production cache: Redis, under a key prefix of this test's own."""
    prefix = f"test-publicapi-{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    }
    connection = redis.Redis.from_url(REDIS_URL)
    yield connection, prefix
    for key in connection.scan_iter(f"{prefix}:*"):
        connection.delete(key)
    connection.close()


def test_throttle_counts_live_in_redis_so_every_web_process_shares_them(
    client, settings, redis_cache
):
    connection, prefix = redis_cache
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/min"},
    }

    assert client.get("/api/v1/runways/").status_code == 200
    # Another web process: no state of ours in memory, only what Redis holds.
    caches["default"].close()
    del caches["default"]
    assert client.get("/api/v1/runways/").status_code == 200
    throttled = client.get("/api/v1/runways/")

    assert throttled.status_code == 429
    assert [key.decode() for key in connection.scan_iter(f"{prefix}:*")] == [
        f"{prefix}:1:throttle_anon_127.0.0.1"
    ]


def test_an_unreachable_cache_lets_requests_through(client, settings, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            # Nothing listens on port 1: the connection is refused at once.
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "1/min"},
    }

    statuses = [client.get("/api/v1/runways/").status_code for _ in range(2)]

    assert statuses == [200, 200]
    assert "Redis is unavailable (ConnectionError" in caplog.text  # the breaker, once


# --- odd bytes: every public URL answers 4xx, never 500 ----------------------------------------

# Where a client's bytes land: a record's id or slug, a path under the API, a query value.
PATH_TEMPLATES = (
    "/api/v1/runways/{}/",
    "/api/v1/street-snaps/{}/",
    "/api/v1/brands/{}/",
    "/api/v1/{}/",
    "/api/v1/runways/{}",
    "/api/{}/",
    "/api/schema/{}",
    "/api/docs/{}",
)
QUERY_URLS = (
    "/api/v1/runways/",
    "/api/v1/street-snaps/",
    "/api/v1/brands/",
    "/api/v1/index/",
    "/api/v1/brands/acme/",
    "/api/schema/",
    "/api/docs/",
)
QUERY_NAMES = (
    "brand",
    "season_code",
    "year",
    "collection_type",
    "city",
    "month",
    "featured",
    "page",
    "page_size",
    "format",
    "lang",
    "version",
)
# Bytes a client can put in a URL, weighted towards the ones that have broken servers: NUL and
# other controls, a lone UTF-8 continuation byte, overlong and surrogate encodings, "%" itself.
ODD_BYTES = st.lists(
    st.one_of(
        st.binary(min_size=1, max_size=4),
        st.sampled_from([b"\x00", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"%", b"/", b"..", b"\n"]),
    ),
    min_size=1,
    max_size=6,
).map(b"".join)


def odd(data: bytes) -> str:
    return quote(data, safe="")


def assert_not_a_server_error(response, url):
    assert response.status_code < 500, (url, response.status_code)
    if response.status_code >= 400 and url.startswith("/api/v1/"):
        assert_error(response, response.status_code, response.json()["code"])


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/brands/%00/",
        "/api/v1/brands/a%00b/",
        "/api/v1/runways/?brand=%00",
        "/api/v1/runways/?page=%00",
        "/api/v1/runways/?page_size=%00",
        "/api/v1/street-snaps/?city=%00",
        "/api/v1/brands/?featured=%00",
        "/api/v1/runways/?format=%00",
        "/api/v1/%00/",
    ],
)
def test_a_nul_byte_anywhere_is_a_4xx(client, runway, url):
    response = client.get(url)

    assert 400 <= response.status_code < 500, response.status_code
    assert_not_a_server_error(response, url)


@fuzz_settings(max_examples=150, deadline=None)
@given(template=st.sampled_from(PATH_TEMPLATES), data=ODD_BYTES)
def test_any_bytes_in_a_path_are_never_a_server_error(client, template, data):
    url = template.format(odd(data))

    assert_not_a_server_error(client.get(url), url)


@fuzz_settings(max_examples=150, deadline=None)
@given(
    url=st.sampled_from(QUERY_URLS),
    name=st.one_of(st.sampled_from(QUERY_NAMES), ODD_BYTES.map(odd)),
    value=ODD_BYTES,
)
def test_any_bytes_in_a_query_are_never_a_server_error(client, url, name, value):
    full = f"{url}?{name}={odd(value)}"

    assert_not_a_server_error(client.get(full), full)
