"""Django's own media routes, for the local store (the embedded mode has no other server):

``MEDIA_URL`` (``/media/``), anonymous: an object a published, live record shows, asked for by
its key exactly (catalog.visibility.records_showing), from the folder of public copies or,
without one, from the private one; tagged with the image's and its albums' cache tags
(catalog.edge), so withdrawing any of them purges it from the edge.
``PRIVATE_MEDIA_URL`` (``/admin/media/``), editors only: any object of the private store.
Both say how long a cache may keep the answer; a refusal is never stored (a 404 becomes a 200
when an editor publishes).
"""

import errno
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse, HttpResponseBase, HttpResponseForbidden
from django.utils.cache import patch_cache_control
from django.views.static import serve

from catalog import edge
from catalog.visibility import image_response, public_storage

FAVICON = Path(__file__).with_name("favicon.ico")


def public_media(request, path: str) -> HttpResponseBase:
    # The key itself or nothing: another spelling of it ("images//x", "images/y/../x") is no
    # key, so the edge never caches an object under a URL its purge would not name.
    shown = image_response(path)
    if shown is None:
        return _refused(Http404)
    store = public_storage() if settings.MEDIA_PUBLIC_COPIES else default_storage
    try:
        response = _serve(request, path, store.location)  # type: ignore[attr-defined]  # a FileSystemStorage
    except Http404:
        return _refused(Http404)
    left = edge.seconds_until(shown.expires_at)  # not kept once no album shows it
    patch_cache_control(response, public=True, max_age=min(settings.MEDIA_CACHE_SECONDS, left))
    if edge.purge_enabled():  # every change of what the public sees purges it (catalog.edge)
        patch_cache_control(response, s_maxage=min(settings.EDGE_CACHE_SECONDS, left))
        response["Surrogate-Key"] = edge.tags_header(shown.tags)
    return response


def private_media(request, path: str) -> HttpResponseBase:
    if not (request.user.is_authenticated and request.user.is_staff):
        return _refused(HttpResponseForbidden)
    location = getattr(default_storage, "location", None)
    try:
        if location is not None:
            response = _serve(request, path, location)
        else:  # another store behind this route: stream it
            response = FileResponse(default_storage.open(path, "rb"))
    except (Http404, FileNotFoundError):
        return _refused(Http404)
    patch_cache_control(response, private=True, max_age=3600)
    return response


def _serve(request, path: str, root) -> HttpResponseBase:
    """Django's static serve; a name too long for the file system is missing, not a 500."""
    try:
        return serve(request, path, document_root=root)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise Http404(path) from exc
        raise


def favicon(request) -> HttpResponse:
    response = HttpResponse(FAVICON.read_bytes(), content_type="image/x-icon")
    patch_cache_control(response, public=True, max_age=86400)
    return response


def _refused(kind) -> HttpResponse:
    response = HttpResponse(status=404) if kind is Http404 else kind("editors only\n")
    patch_cache_control(response, no_store=True)
    return response
