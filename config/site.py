"""Django's session, authentication and messages middleware, skipped for reads of the
public API.

They do nothing for an anonymous JSON GET of /api/v1/ (its views authenticate no one, keep no
state and take no form: REST_FRAMEWORK has no authentication classes), yet each ran on every
one of them: together about a tenth of what a small response cost (docs/api.md,
"Throughput"). Subclasses rather than one wrapper around a list of them: the admin's system
checks look for these classes in MIDDLEWARE. For every other request they are Django's own.
CSRF stays Django's own class (`check --deploy` looks for it by name); DRF's views are exempt
from it, so for an API read it only reads a cookie.
What the public API needs (request ids and the request line, metrics, the security headers,
X-Frame-Options) runs for every request; django-axes' middleware only reads two attributes of
the request after the view and stays as it is.
"""

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware

PUBLIC_API_PREFIX = "/api/v1/"
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_public_api_read(request) -> bool:
    return request.method in _READS and request.path_info.startswith(PUBLIC_API_PREFIX)


class _SiteOnly:
    """Django's middleware for any request but a public API read, which goes past it."""

    def __call__(self, request):
        if is_public_api_read(request):
            return self.get_response(request)  # type: ignore[attr-defined]  # MiddlewareMixin's
        return super().__call__(request)  # type: ignore[misc]  # MiddlewareMixin's


class SiteSessionMiddleware(_SiteOnly, SessionMiddleware):
    pass


class SiteAuthenticationMiddleware(_SiteOnly, AuthenticationMiddleware):
    pass


class SiteMessageMiddleware(_SiteOnly, MessageMiddleware):
    pass
