"""The WSGI handler gunicorn and runserver serve (config.wsgi): Django's, with a request that
validates its host once.

Django checks the Host header against ALLOWED_HOSTS each time get_host() is asked:
CommonMiddleware's host check asks, and so does the first absolute URL a response builds (a
list's links, the local media folder's image URLs). Each check was about 2 % of a public
API detail's instructions (docs/api.md).
"""

from django.core.handlers.wsgi import WSGIHandler, WSGIRequest


class ArchiveRequest(WSGIRequest):
    def get_host(self) -> str:
        """Django's answer, kept for the rest of the request once it is one; a refused host
        (DisallowedHost) is refused again each time it is asked."""
        host = self.__dict__.get("_validated_host")
        if host is None:
            host = self._validated_host = super().get_host()
        return host


class ArchiveWSGIHandler(WSGIHandler):
    request_class = ArchiveRequest
