from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema. The API has one version, and drf-spectacular would otherwise copy any
    ``?version=`` a client sends into the Content-Disposition header: a 500 on a line break."""

    def _get_version_parameter(self, request):
        return None


urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/ingest/v1/", include("ingest.urls")),
    path("api/v1/", include("publicapi.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]

if settings.SERVE_MEDIA:
    # The embedded mode has no web server in front: Django serves the local media folder.
    prefix = settings.MEDIA_URL.lstrip("/")

    def serve_media(request, path):
        # MEDIA_ROOT is read per request, not frozen at import, so a test's media folder
        # (tests/conftest.py) is the one served to a browser test's live server too.
        return serve(request, path, document_root=settings.MEDIA_ROOT)

    urlpatterns += [re_path(rf"^{prefix}(?P<path>.*)$", serve_media)]
