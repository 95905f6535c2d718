"""The lean path: the busiest public requests (a runway's or street snap's detail, a page of
their lists) served by a middleware, without the rest of the middleware chain, URL resolving
and DRF's dispatch.

Those were most of what such a request cost beyond its query: DRF's request, view and
response objects, content negotiation, permissions, the template response's rendering and
callbacks, seven more middleware layers, four nested URL resolvers (docs/api.md, "Against a
minimal Django project"). This middleware stands after the request id, the probes and the
metrics, before the security headers and WhiteNoise (settings.MIDDLEWARE), and answers a plain
GET or HEAD of those URLs itself, with the very pieces the full path uses, each once:

- the same data: the viewset's own classmethods (page_data, record, fast_rendered);
- the same throttle, counted once (PublicAnonRateThrottle.verdict);
- the same headers: Allow as DRF's, set_cache_headers, the ETag and 304 of
  PublicConditionalGetMiddleware, set_cors_headers, and the skipped middleware's own methods
  (SecurityMiddleware's HTTPS redirect and headers, CommonMiddleware's host check and
  Content-Length, CsrfViewMiddleware, X-Frame-Options). The headers that are the same on
  every such response (Allow, CORS, X-Frame-Options, the security headers) are made by that
  code once, on a fresh response, and copied (_fixed_headers);
- the same bytes: PublicJSONRenderer.

Anything else goes down the chain to the DRF view as before: another method or Accept, a
`format`, a filter (django-filter's forms), a bad page number, a record or page that does not
exist, a throttled client (the 429 is DRF's, from the count taken here), a host Django
refuses. tests/publicapi/test_lean.py holds both paths to the same status, headers and body.
The request id, the request line and the metrics (by the URL name, as the resolver would give
it) are the outer middleware's, on both paths. WhiteNoise, after it, serves STATIC_URL, which
is never under /api/v1/.
"""

import functools
import re
from collections.abc import Callable, ItemsView
from dataclasses import dataclass

from django.conf import settings
from django.core.handlers.exception import response_for_exception
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.http.response import ResponseHeaders
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import ResolverMatch, resolve
from rest_framework.exceptions import ValidationError

from publicapi.http import (
    JSON_RENDERER,
    PLAIN_ACCEPT,
    PublicAnonRateThrottle,
    PublicConditionalGetMiddleware,
    set_cache_headers,
    set_cors_headers,
)
from publicapi.tags import response_tags
from publicapi.urls import router
from publicapi.views import PublicRecordViewSet

# The router's list and detail URLs under config.urls's "api/v1/"; which of them are a record
# kind's is the router's registry (_routes). tests/publicapi/test_lean.py checks them against
# the resolver.
_URL = re.compile(r"/api/v1/(?P<prefix>[a-z-]+)/(?:(?P<pk>[0-9]+)/)?\Z")
# DRF's Allow of a read-only viewset's URLs (APIView.default_response_headers).
_ALLOW = "GET, HEAD, OPTIONS"
_READS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class _Route:
    viewset: type[PublicRecordViewSet]
    basename: str


@functools.cache
def _routes() -> dict[str, _Route]:
    return {
        prefix: _Route(viewset, basename)
        for prefix, viewset, basename in router.registry
        if issubclass(viewset, PublicRecordViewSet)
    }


@functools.cache
def _match_template(path: str) -> ResolverMatch:
    """What the resolver gives for one list or detail URL, resolved once per URL name."""
    return resolve(path)


def _resolver_match(path: str, pk: str | None) -> ResolverMatch:
    """The resolver's match for this request, without resolving it: the metrics middleware
    counts by its URL name."""
    kwargs = {} if pk is None else {"pk": pk}
    if pk is None:
        template = _match_template(path)
    else:
        template = _match_template(path[: -len(pk) - 1] + "1/")
    # A copy with this request's id (a ResolverMatch refuses copy.copy: it forbids pickling).
    match = ResolverMatch.__new__(ResolverMatch)
    match.__dict__.update(template.__dict__, kwargs=kwargs, captured_kwargs=kwargs)
    return match


# A header as ResponseHeaders keeps it: (lowercased name, (name, value)).
_Header = tuple[str, tuple[str, str]]


class _Headers(ResponseHeaders):
    """Django's response headers, telling a header's absence without an exception.

    CaseInsensitiveMapping answers `in` and get() through collections.abc.Mapping, which
    raises and catches a KeyError for each absent header; the middleware a lean response
    passes through asks for eight headers it does not have. The same answers, the same store.
    """

    def __contains__(self, key):
        return key.lower() in self._store

    def get(self, key, default=None):
        item = self._store.get(key.lower())
        return default if item is None else item[1]

    def items(self):
        return _HeaderItems(self)

    def add_fixed(self, headers: tuple[_Header, ...]) -> None:
        """Headers from _fixed_headers, each unless the response has it (as the code that
        made them sets them): they passed Django's checks when they were made."""
        for key, item in headers:
            self._store.setdefault(key, item)


class _HeaderItems(ItemsView):
    """The (name, value) pairs as the store keeps them: Django's handler sends them, and
    ItemsView would look each header up again by its lowercased name."""

    def __init__(self, headers: _Headers):
        super().__init__(headers)
        self.pairs = headers._store.values()

    def __iter__(self):
        return iter(self.pairs)


class _LeanResponse(HttpResponse):
    headers: _Headers

    def __init__(self, content: bytes, content_type: str):
        super().__init__(content, content_type=content_type)
        # The same object made a _Headers (a subclass that only adds methods): Django's
        # __init__ makes the ResponseHeaders itself.
        self.headers.__class__ = _Headers


class _PlainRead(HttpRequest):
    """A plain GET, over HTTPS or not: all that the fixed headers' code reads of a request."""

    def __init__(self, secure: bool):
        super().__init__()
        self.method = "GET"
        self.secure = secure

    def is_secure(self) -> bool:
        return self.secure


@dataclass(frozen=True)
class _FixedHeaders:
    first: tuple[_Header, ...]  # DRF's Allow
    after_etag: tuple[_Header, ...]  # CORS, X-Frame-Options
    last: tuple[_Header, ...]  # SecurityMiddleware's, on the way out


@functools.cache
def _fixed_headers(secure: bool) -> _FixedHeaders:
    """The headers that are the same on every lean 200, made by their own code on a fresh
    response and kept until a setting changes: each depends only on the settings, on the
    request being a GET (CORS) and on its scheme (HSTS)."""
    request, response = _PlainRead(secure), HttpResponse()
    store = response.headers._store

    def added_by(*steps: Callable[[], object]) -> tuple[_Header, ...]:
        before = set(store)
        for step in steps:
            step()
        return tuple((key, item) for key, item in store.items() if key not in before)

    return _FixedHeaders(
        first=added_by(functools.partial(response.__setitem__, "Allow", _ALLOW)),
        after_etag=added_by(
            functools.partial(set_cors_headers, request, response),
            functools.partial(_XFRAME.process_response, request, response),
        ),
        last=added_by(
            functools.partial(SecurityMiddleware(HttpResponse).process_response, request, response)
        ),
    )


_XFRAME = XFrameOptionsMiddleware(HttpResponse)


@receiver(setting_changed)
def _forget_fixed_headers(**kwargs) -> None:
    # Tests change the security and frame settings; in production they are fixed at start.
    _fixed_headers.cache_clear()


class LeanReadMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        # Django's own middleware the lean path leaves out of the chain, called for their
        # part of its responses: the same code, without the layers around it.
        self.security = SecurityMiddleware(get_response)
        self.common = CommonMiddleware(get_response)
        self.csrf = CsrfViewMiddleware(get_response)
        self.conditional = PublicConditionalGetMiddleware(get_response)

    def __call__(self, request):
        match = _URL.match(request.path_info)
        if match is not None and request.method in _READS:
            route = _routes().get(match["prefix"])
            if route is not None:
                try:
                    response = self.serve(request, route, match["pk"])
                except Exception as exc:
                    # Django's 500 (logged, got_request_exception sent), as the layer around
                    # this middleware would make it, with the security headers it had when
                    # SecurityMiddleware stood outside.
                    response = response_for_exception(request, exc)
                    return self.security.process_response(request, response)
                if response is not None:
                    return response
        return self.get_response(request)

    def serve(self, request, route: _Route, pk: str | None) -> HttpResponseBase | None:
        """The response to a plain read of a list or detail URL, or None to leave the request
        to the full path."""
        if request.META.get("HTTP_ACCEPT") not in PLAIN_ACCEPT:
            return None
        query = request.GET
        if "format" in query:
            return None
        viewset = route.viewset
        if pk is None:
            serializer_class = viewset.serializer_class
            if viewset.names_a_filter(query):
                return None
            pagination = viewset.pagination_class()
            try:
                number, size = pagination.page_number(query), pagination.size(query)
            except ValidationError:
                return None
        else:
            serializer_class = viewset.detail_serializer_class  # type: ignore[assignment]
        if not serializer_class.fast:
            return None
        try:
            # HTTPS, host, user agent, PREPEND_WWW: a refusal or a redirect is the chain's.
            if self.security.process_request(request) is not None:
                return None
            if self.common.process_request(request) is not None:
                return None
        except Exception:
            return None
        if not PublicAnonRateThrottle().verdict(request):
            return None
        if pk is None:
            action = "list"
            render = functools.partial(viewset.fast_rendered, serializer_class, request=request)
            data = viewset.page_data(request, number, size, None, render)
        else:
            action = "retrieve"
            record = viewset.record(pk)
            data = None
            if record is not None:
                data = viewset.fast_rendered(serializer_class, record, request)
        if data is None:
            return None
        request.resolver_match = _resolver_match(request.path_info, pk)
        return self.respond(request, route, action, data)

    def respond(self, request, route: _Route, action: str, data) -> HttpResponseBase:
        """The full path's response, header for header, in its order: DRF's (Allow, the
        cache headers of finalize_response, the rendering), the ETag or 304, CORS, then the
        middleware's on the way out."""
        # Django's CSRF middleware reads the CSRF cookie, and sets a new one in place of a
        # malformed one; without any cookie it does nothing.
        csrf = settings.CSRF_USE_SESSIONS or "HTTP_COOKIE" in request.META
        if csrf:
            self.csrf.process_request(request)
        fixed = _fixed_headers(request.is_secure())
        media_type = JSON_RENDERER.media_type
        fresh = _LeanResponse(JSON_RENDERER.render(data, media_type, {}), media_type)
        fresh.headers.add_fixed(fixed.first)
        set_cache_headers(request, fresh, response_tags(route.viewset.cache_kind, action, data))
        response = self.conditional.process_response(request, fresh)
        if response is fresh:
            fresh.headers.add_fixed(fixed.after_etag)
        else:  # Django's 304, which has headers of its own: their code, not the copies
            set_cors_headers(request, response)
            response = _XFRAME.process_response(request, response)
        if csrf:
            response = self.csrf.process_response(request, response)
        response = self.common.process_response(request, response)
        if response is fresh:
            fresh.headers.add_fixed(fixed.last)
            return fresh
        return self.security.process_response(request, response)  # type: ignore[arg-type]  # any response
