"""The HTTP behaviour every public endpoint shares: caching headers and conditional GET,
anonymous throttling, and one JSON shape for every error.

Applied per view (PublicAPIView), not as project middleware: the ingest API and the admin
must not be cached or throttled like the public archive. CORS is django-cors-headers'
(settings.CORS_URLS_REGEX).
"""

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.http import Http404
from django.middleware.http import ConditionalGetMiddleware
from django.utils import timezone
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.decorators import decorator_from_middleware
from rest_framework import exceptions
from rest_framework.settings import api_settings
from rest_framework.views import APIView, exception_handler

from publicapi.tags import header_value, response_tags
from publicapi.throttling import PublicAnonRateThrottle

# As a view decorator. It runs after the response is rendered, so the ETag is a hash of the
# exact body sent: it changes exactly when the content does. A match answers 304 carrying
# Cache-Control, ETag and Vary. It leaves alone responses marked no-store (errors) and
# anything but GET.
conditional_get = decorator_from_middleware(ConditionalGetMiddleware)


def set_cache_headers(
    request,
    response,
    tags: Iterable[str] = (),
    *,
    lists: bool = False,
    until: datetime | None = None,
) -> None:
    """Successful reads may be cached by anyone for PUBLIC_API_CACHE_SECONDS. With a purge
    backend, shared caches may keep a detail EDGE_CACHE_SECONDS (``s-maxage``) and a page
    that lists records (``lists``) EDGE_LIST_SECONDS, and serve it EDGE_GRACE_SECONDS more
    while they fetch its next version (``X-Edge-Grace``, config/varnish.vcl): a change purges
    what showed the record by its cache tags (``Surrogate-Key``, publicapi.tags), and a new
    publication reaches the lists by their short ``s-maxage``, not by purging them all.
    Browsers get no grace: an unpublished album leaves their cache within max-age. Errors are
    never stored: a 404 may become a 200 as soon as an editor publishes, and a 429 belongs to
    one client. Behind a proxy that says the scheme, the URLs a response builds depend on it
    (``Vary: X-Forwarded-Proto``). A response showing an album that expires (``until``, the
    earliest such expiry) is cached by no one past it, and never served in grace: the
    expiry's job purges it too, this holds when that job is late."""
    if request.method in ("GET", "HEAD") and 200 <= response.status_code < 300:
        browsers = settings.PUBLIC_API_CACHE_SECONDS
        edge = settings.EDGE_LIST_SECONDS if lists else settings.EDGE_CACHE_SECONDS
        left = None if until is None else seconds_until(until)
        if left is not None:
            browsers, edge = min(browsers, left), min(edge, left)
        patch_cache_control(response, public=True, max_age=browsers)
        if settings.EDGE_PURGE_BACKEND:
            patch_cache_control(response, s_maxage=edge)
            if left is None:
                response["X-Edge-Grace"] = str(settings.EDGE_GRACE_SECONDS)
        value = header_value(tags)
        if value:
            response["Surrogate-Key"] = value
    else:
        patch_cache_control(response, no_store=True)
    if settings.SECURE_PROXY_SSL_HEADER:
        patch_vary_headers(response, ["X-Forwarded-Proto"])


def seconds_until(moment: datetime) -> int:
    """Whole seconds from now to ``moment``, rounded down (a cache may keep a response that
    long and no longer), never below 0."""
    return max(0, int((moment - timezone.now()).total_seconds()))


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

    @classmethod
    def as_view(cls, *args, **kwargs):
        return conditional_get(super().as_view(*args, **kwargs))

    def dispatch(self, request, *args, **kwargs):
        # The expiries to come of the albums this response shows (its serializers add them).
        # Here, not in setup(): a viewset's view does not call setup().
        self.expiries: list[datetime] = []
        return super().dispatch(request, *args, **kwargs)

    def get_exception_handler(self):
        return public_exception_handler

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        tags: list[str] = []
        action = getattr(self, "action", None)
        if 200 <= response.status_code < 300:
            tags = response_tags(self.cache_kind, action, getattr(response, "data", None))
        until = min(self.expiries, default=None)
        set_cache_headers(request, response, tags, lists=action != "retrieve", until=until)
        return response
