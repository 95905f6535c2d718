"""Django's session, CSRF, authentication and messages middleware, skipped for reads of the
public API.

They do nothing for an anonymous JSON GET of /api/v1/ (its views authenticate no one, keep no
state and take no form: REST_FRAMEWORK has no authentication classes), yet each ran on every
one of them: together about a tenth of what a small response cost (docs/api.md,
"Throughput"). Subclasses rather than one wrapper around a list of them: the admin's system
checks look for these classes in MIDDLEWARE. For every other request they are Django's own.
What the public API needs (request ids and the request line, metrics, the security headers,
X-Frame-Options) runs for every request; django-axes' middleware only reads two attributes of
the request after the view and stays as it is.
"""

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware.csrf import CsrfViewMiddleware

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


class SiteCsrfViewMiddleware(_SiteOnly, CsrfViewMiddleware):
    def process_view(self, request, callback, callback_args, callback_kwargs):
        # Django calls every middleware's process_view itself, past __call__.
        if is_public_api_read(request):
            return None
        return super().process_view(request, callback, callback_args, callback_kwargs)


class SiteAuthenticationMiddleware(_SiteOnly, AuthenticationMiddleware):
    pass


class SiteMessageMiddleware(_SiteOnly, MessageMiddleware):
    pass
