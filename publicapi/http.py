"""The HTTP behaviour every public endpoint shares: caching headers and conditional GET,
anonymous throttling, and one JSON shape for every error.

Applied per view (PublicAPIView), not as project middleware: the ingest API and the admin
must not be cached or throttled like the public archive. CORS is django-cors-headers'
(settings.CORS_URLS_REGEX).
"""

from collections.abc import Iterable

from django.conf import settings
from django.http import Http404
from django.middleware.http import ConditionalGetMiddleware
from django.utils.cache import patch_cache_control
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


def set_cache_headers(request, response, tags: Iterable[str] = ()) -> None:
    """Successful reads may be cached by anyone for PUBLIC_API_CACHE_SECONDS; with a purge
    backend, shared caches for EDGE_CACHE_SECONDS (``s-maxage``): every change the public may
    see purges them by their cache tags (``Surrogate-Key``, publicapi.tags). No
    stale-while-revalidate: an unpublished album must leave every cache within max-age.
    Errors are never stored: a 404 may become a 200 as soon as an editor publishes, and a 429
    belongs to one client."""
    if request.method in ("GET", "HEAD") and 200 <= response.status_code < 300:
        patch_cache_control(response, public=True, max_age=settings.PUBLIC_API_CACHE_SECONDS)
        if settings.EDGE_PURGE_BACKEND:
            patch_cache_control(response, s_maxage=settings.EDGE_CACHE_SECONDS)
        value = header_value(tags)
        if value:
            response["Surrogate-Key"] = value
    else:
        patch_cache_control(response, no_store=True)


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
