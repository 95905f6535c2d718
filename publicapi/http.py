"""The HTTP behaviour every public endpoint shares: caching headers and conditional GET,
anonymous throttling, and one JSON shape for every error.

Applied per view (PublicAPIView), not as project middleware: the ingest API and the admin
must not be cached or throttled like the public archive.
"""

import functools
import hashlib
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

import orjson
from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import Http404
from django.middleware.http import ConditionalGetMiddleware
from django.utils.cache import patch_cache_control
from django.utils.decorators import decorator_from_middleware
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView, exception_handler

from config.breaker import redis as redis_breaker
from config.clients import client_ip
from publicapi.tags import header_value, response_tags

logger = logging.getLogger(__name__)


# The request headers a conditional response depends on (RFC 9110 13.1), as WSGI names them.
_PRECONDITIONS = (
    "HTTP_IF_NONE_MATCH",
    "HTTP_IF_MODIFIED_SINCE",
    "HTTP_IF_MATCH",
    "HTTP_IF_UNMODIFIED_SINCE",
)


class PublicConditionalGetMiddleware(ConditionalGetMiddleware):
    """Django's ETag/If-None-Match handling, with the ETag hashed by SHA-1 rather than MD5:
    twice as fast where the CPU has SHA instructions (a small response's MD5 was a
    twentieth of its time, docs/api.md), the first 128 bits of it, as long as Django's."""

    def process_response(self, request, response):
        if request.method != "GET":
            return response
        if not response.streaming and not response.has_header("ETag") and response.content:
            if self.needs_etag(response):
                digest = hashlib.sha1(response.content, usedforsecurity=False).hexdigest()
                response.headers["ETag"] = f'"{digest[:32]}"'
        meta = request.META
        if not any(name in meta for name in _PRECONDITIONS):
            # Django's get_conditional_response would parse the four absent headers and
            # give the response back as it is: most requests carry none of them.
            return response
        return super().process_response(request, response)

    def needs_etag(self, response) -> bool:
        # Django's test (no `no-store` directive) without splitting the header, unless the
        # words are there at all.
        cache_control = response.get("Cache-Control", "")
        return "no-store" not in cache_control.lower() or super().needs_etag(response)


# As a view decorator. It runs after the response is rendered, so the ETag is a hash of the
# exact body sent: it changes exactly when the content does. A match answers 304 carrying
# Cache-Control, ETag and Vary. It leaves alone responses marked no-store (errors) and
# anything but GET.
conditional_get = decorator_from_middleware(PublicConditionalGetMiddleware)


def set_cache_headers(request, response, tags: Iterable[str] = ()) -> None:
    """Successful reads may be cached by anyone (browsers, CDNs) for PUBLIC_API_CACHE_SECONDS;
    nothing else is stored.

    With a purge backend (EDGE_PURGE_BACKEND), shared caches may keep them EDGE_CACHE_SECONDS
    (``s-maxage``): every change the public may see purges them by their cache tags
    (``Surrogate-Key``, publicapi.tags). Browsers keep the short max-age either way.

    No stale-while-revalidate: an unpublished album must leave every cache within max-age.
    Errors are never stored: a 404 may become a 200 as soon as an editor publishes, and a 429
    belongs to one client, never to a shared cache.
    """
    fresh = "Cache-Control" not in response  # nearly always: written whole, not patched
    if request.method in ("GET", "HEAD") and 200 <= response.status_code < 300:
        value = f"public, max-age={settings.PUBLIC_API_CACHE_SECONDS}"
        if settings.EDGE_PURGE_BACKEND:
            value = f"{value}, s-maxage={settings.EDGE_CACHE_SECONDS}"
        if fresh:
            response.headers["Cache-Control"] = value
        else:
            patch_cache_control(response, public=True, max_age=settings.PUBLIC_API_CACHE_SECONDS)
            if settings.EDGE_PURGE_BACKEND:
                patch_cache_control(response, s_maxage=settings.EDGE_CACHE_SECONDS)
        value = header_value(tags)
        if value:
            response["Surrogate-Key"] = value
    elif fresh:
        response.headers["Cache-Control"] = "no-store"
    else:
        patch_cache_control(response, no_store=True)


# A public, read-only API without credentials: any origin may read it from a browser. "*" on
# every response, whether or not the request named an Origin (not the caller's Origin echoed
# back, and not only when asked, as django-cors-headers does): a CDN then keeps one copy that
# is valid for every site, with no `Vary: Origin`. Scripts may read the ETag (to send
# If-None-Match themselves) and Retry-After (after a 429).
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "ETag, Retry-After",
}
# The answer to a preflight (OPTIONS): If-None-Match is not a CORS-safelisted request header.
CORS_PREFLIGHT_HEADERS = {
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Allow-Headers": "Accept, If-None-Match",
    "Access-Control-Max-Age": "86400",
}


def set_cors_headers(request, response) -> None:
    for name, value in CORS_HEADERS.items():
        response.headers.setdefault(name, value)
    if request.method == "OPTIONS":
        for name, value in CORS_PREFLIGHT_HEADERS.items():
            response.headers.setdefault(name, value)


class PublicJSONRenderer(JSONRenderer):
    """The bytes DRF's JSONRenderer writes (compact, UTF-8, U+2028/U+2029 escaped), by orjson:
    a tenth of json.dumps's time on a list page (bench/public_api.py). Whatever orjson does
    not know (a lazy translation) goes through DRF's encoder; an indent asked for in Accept
    goes to DRF's renderer whole."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.get_indent(accepted_media_type or "", renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        body = orjson.dumps(data, default=self._default)
        return body.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")

    def _default(self, value):
        # DRF's encoder, made only for a value orjson does not know (nearly never).
        return self.encoder_class().default(value)


JSON_RENDERER = PublicJSONRenderer()
# What DRF's negotiation picks for these, without parsing them.
PLAIN_ACCEPT = {None, "", "*/*", "application/json"}


class PublicAnonRateThrottle(AnonRateThrottle):
    """The `anon` rate of REST_FRAMEWORK (PUBLIC_API_THROTTLE_RATE), read per request.

    DRF's own class reads the rates once, at import; reading them per request lets tests (and
    only tests) change the rate with override_settings. The counters live in the default
    cache: Redis in production, so every web process counts the same client together.

    A fixed window per client, one counter: the first request opens a window as long as the
    rate's period, each request increments the counter, and the window's end is the
    Retry-After. DRF's own throttle keeps every request time of the period in a list that it
    reads and rewrites whole per request (two round trips, and at a high rate thousands of
    floats pickled each time); this is at most one round trip to Redis whatever the rate
    (bench/public_api.py), and usually none: see :func:`take_token`. A client may so send up
    to twice the rate across a window's edge.
    """

    # Set by SimpleRateThrottle.__init__ from the rate; the stubs leave them out.
    num_requests: int
    duration: int

    def get_ident(self, request) -> str:
        # DRF's rule (NUM_PROXIES), but only ever an address: an X-Forwarded-For entry that is
        # not one would be a fresh identity of the client's choosing per request.
        return client_ip(request)

    def get_rate(self) -> str | None:
        # The stubs type the rates as numbers (DRF's are "100/min") and the scope as optional
        # (AnonRateThrottle sets it).
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[arg-type,return-value]

    @property
    def cache(self):  # type: ignore[override]  # DRF's class attribute, read-only here
        # The backend itself, not DRF's proxy of it: count_in_window checks for Redis.
        return caches[DEFAULT_CACHE_ALIAS]

    def get_cache_key(self, request, view) -> str:
        # Every client is anonymous (REST_FRAMEWORK has no authentication classes), so no
        # request.user to ask: the lean path (publicapi.lean) has none.
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def verdict(self, request) -> bool:
        """Count the request, once: the lean path counts it first and keeps the answer on
        the request, so that the DRF view it may hand the request on to (a 404, a 429, a bad
        parameter) does not count it again."""
        allowed = self.allow_request(request, None)
        request.public_throttle = (allowed, getattr(self, "seconds_left", None))
        return allowed

    def allow_request(self, request, view) -> bool:
        counted = getattr(request, "public_throttle", None)  # by the lean path: verdict()
        if counted is not None:
            allowed, self.seconds_left = counted
            return allowed
        # The throttle protects the archive; it must not take it down. If the cache (Redis)
        # is unreachable, the request is served unthrottled; after a few failures the breaker
        # skips Redis for a while (config.breaker), so a Redis that hangs costs each request
        # nothing, and the log says so once, not with a traceback per request.
        if self.rate is None:
            return True
        try:
            key = self.get_cache_key(request, view)
            cache = self.cache
            scope = (_cache_scope(cache), key, self.num_requests, self.duration)
            left = leased_token(scope)
        except Exception:
            return True
        if left is not None:  # most requests: no Redis, so nothing for the breaker to learn
            self.seconds_left = left
            return True
        if not redis_breaker.allow():
            return True
        try:
            with redis_breaker.call():
                allowed, self.seconds_left = lease_tokens(
                    cache, key, scope, limit=self.num_requests, seconds=self.duration
                )
                return allowed
        except Exception:
            return True

    def wait(self) -> float:
        return self.seconds_left


def redis_client(cache: RedisCache):
    """The cache's Redis client, made once per cache object (caches are per thread). Django
    makes a new one per call, and a redis-py client builds its table of reply parsers on
    creation: more time than the round trip itself (bench/public_api.py's profile)."""
    client = getattr(cache, "_public_throttle_client", None)
    if client is None:
        client = cache._cache.get_client(None, write=True)
        cache._public_throttle_client = client  # type: ignore[attr-defined]  # our memo
    return client


# Count (ARGV[2] requests at once), and open the window (its expiry) on the first request of
# it. One command, atomic: a window can neither expire between the count and the expiry nor
# be left without one. The time left in milliseconds.
_COUNT_IN_WINDOW = """
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1] * 1000)
    ttl = tonumber(ARGV[1]) * 1000
end
return {count, ttl}
"""


def count_script(cache: RedisCache):
    """The counting script, registered once per cache object (redis-py sends its SHA1 and
    the text only if Redis does not know it yet)."""
    script = getattr(cache, "_public_throttle_script", None)
    if script is None:
        script = redis_client(cache).register_script(_COUNT_IN_WINDOW)
        cache._public_throttle_script = script  # type: ignore[attr-defined]  # our memo
    return script


def count_in_window(cache, key: str, seconds: int, amount: int = 1) -> tuple[int, float]:
    """Count `amount` more requests under `key`; returns (requests counted in this window,
    seconds left of it)."""
    if isinstance(cache, RedisCache):
        # One round trip and one command: a pipeline of SET NX, INCR and TTL (or Django's
        # add-then-incr, three round trips) cost the web process twice the CPU in redis-py.
        count, ttl = count_script(cache)(
            keys=[cache.make_and_validate_key(key)], args=[seconds, amount]
        )
        return count, max(ttl, 1) / 1000
    cache.add(key, 0, seconds)
    try:
        return cache.incr(key, amount), seconds
    except ValueError:  # expired between the two calls
        cache.set(key, amount, seconds)
        return amount, seconds


# A web process takes a twentieth of a client's rate from the shared count at once (at most
# LEASE_MAX, at least one request), and hands those out itself, without a round trip, until
# they are used or the window ends: at the bench's rate one request in ten goes to Redis
# (bench/public_api.py). What a process has taken and not handed out is counted all the same,
# so the rate is never exceeded (with Redis; the local-memory cache of the embedded mode does
# not say when a window ends, so a lease taken late in a window may serve a few requests of the
# next one); a client whose requests are spread over several processes may be refused a
# little early, by at most LEASE_MAX - 1 requests per other process (at the default 120/min,
# 5 of 120). Below 40 requests per window every request is counted in Redis, exactly as it
# comes.
LEASE_SHARE = 20
LEASE_MAX = 10


@dataclass(slots=True)
class _Lease:
    tokens: int
    ends: float  # time.monotonic() at the window's end


_leases: dict[tuple, _Lease] = {}
_leases_lock = threading.Lock()
_LEASES_KEPT = 10_000  # clients with a lease in one process; beyond, the ended ones go


def take_token(cache, key: str, *, limit: int, seconds: int) -> tuple[bool, float]:
    """One request of the client `key` under `limit` requests per `seconds`: whether it is
    allowed, and the seconds left of its window."""
    scope = (_cache_scope(cache), key, limit, seconds)
    left = leased_token(scope)
    if left is not None:
        return True, left
    return lease_tokens(cache, key, scope, limit=limit, seconds=seconds)


def leased_token(scope: tuple) -> float | None:
    """A token of this process's lease for `scope` (take_token's), without a round trip: the
    seconds left of its window, or None if the lease is used up, ended or was never taken."""
    now = time.monotonic()
    with _leases_lock:
        lease = _leases.get(scope)
        if lease is not None and lease.tokens > 0 and now < lease.ends:
            lease.tokens -= 1
            return lease.ends - now
    return None


def lease_tokens(cache, key: str, scope: tuple, *, limit: int, seconds: int) -> tuple[bool, float]:
    """Count a new lease for `scope` in the shared window, and take its first token: whether
    the request is allowed, and the seconds left of the window."""
    now = time.monotonic()
    size = max(1, min(LEASE_MAX, limit // LEASE_SHARE))
    count, left = count_in_window(cache, key, seconds, size)
    # This request is the (count - size + 1)th of the window; the lease holds what of the
    # rest is within the limit.
    granted = max(0, min(size, limit - (count - size)))
    if not granted:
        return False, left
    with _leases_lock:
        if len(_leases) >= _LEASES_KEPT:
            for ended in [s for s, kept in _leases.items() if kept.ends <= now]:
                del _leases[ended]
        lease = _leases.get(scope)
        if lease is not None and now < lease.ends:  # another thread took one meanwhile
            lease.tokens += granted - 1
        else:
            _leases[scope] = _Lease(tokens=granted - 1, ends=now + left)
    return True, left


@receiver(setting_changed)
def _forget_leases(*, setting, **kwargs) -> None:
    # Tests change the caches and the rates; in production both are fixed at start.
    if setting in ("CACHES", "REST_FRAMEWORK"):
        with _leases_lock:
            _leases.clear()


def _cache_scope(cache) -> object:
    """What identifies the counts a cache holds, alike in every thread (Django makes a cache
    object per thread): Redis's servers and key prefix, or a local-memory cache's store."""
    scope = getattr(cache, "_public_throttle_scope", None)
    if scope is None:
        if isinstance(cache, RedisCache):
            scope = ("redis", tuple(cache._servers), cache.key_prefix, cache.version)  # type: ignore[attr-defined]  # set by RedisCache.__init__
        else:
            scope = ("local", id(getattr(cache, "_cache", cache)))
        cache._public_throttle_scope = scope  # our memo, as redis_client's
    return scope


def public_exception_handler(exc, context):
    """Every error as {"status", "code", "detail", "errors"}; `errors` maps a query parameter
    to its messages for a 400 and is empty otherwise."""
    if isinstance(exc, Http404):
        # Not the model's name ("No PublicRunway matches..."): the same words for every 404.
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        return None
    errors: dict[str, list[str]] = {}
    if isinstance(exc, exceptions.ValidationError):
        detail = "Invalid query parameters."
        code = "invalid"
        if isinstance(exc.detail, dict):
            errors = {
                name: [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])]
                for name, msgs in exc.detail.items()
            }
        else:
            errors = {api_settings.NON_FIELD_ERRORS_KEY: [str(m) for m in exc.detail]}
    else:
        # Every other APIException carries one message and one code (not_found, throttled...).
        detail = str(exc.detail)
        code = exc.detail.code if hasattr(exc.detail, "code") else exc.default_code
    response.data = {
        "status": response.status_code,
        "code": code,
        "detail": detail,
        "errors": errors,
    }
    return response


class PublicAPIView(APIView):
    """Base of every public endpoint (views and viewsets mix it in first)."""

    # What its responses show, for their cache tags (publicapi.tags.response_tags).
    cache_kind: str | None = None

    throttle_classes = [PublicAnonRateThrottle]
    renderer_classes = [PublicJSONRenderer]

    def perform_content_negotiation(self, request, force=False):
        # The one renderer, for a request that accepts anything or JSON (nearly all); any
        # other Accept or a ?format= goes through DRF's negotiation (and its 406 or 404).
        if request.META.get("HTTP_ACCEPT") in PLAIN_ACCEPT and "format" not in request.GET:
            return JSON_RENDERER, JSON_RENDERER.media_type
        return super().perform_content_negotiation(request, force)

    @classmethod
    def as_view(cls, *args, **kwargs):
        # functools.wraps keeps the attributes DRF, the router and drf-spectacular read from
        # the view function (cls, actions, initkwargs, csrf_exempt).
        view = conditional_get(super().as_view(*args, **kwargs))

        # The CORS headers go on whichever response is sent, the 304 included: conditional_get
        # builds that one anew, carrying only the caching headers, from a post-render
        # callback (DRF renders its Response late). This callback runs after it.
        @functools.wraps(view)
        def view_with_cors(request, *args, **kwargs):
            response = view(request, *args, **kwargs)
            # A DRF Response (a SimpleTemplateResponse); the stubs say HttpResponseBase.
            response.add_post_render_callback(lambda sent: set_cors_headers(request, sent))  # type: ignore[attr-defined]
            return response

        return view_with_cors

    def get_exception_handler(self):
        return public_exception_handler

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        tags: list[str] = []
        if 200 <= response.status_code < 300:
            data = getattr(response, "data", None)
            tags = response_tags(self.cache_kind, getattr(self, "action", None), data)
        set_cache_headers(request, response, tags)
        return response
