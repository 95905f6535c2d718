from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config import media
from review import previews


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema. The API has one version, and drf-spectacular would otherwise copy any
    ``?version=`` a client sends into the Content-Disposition header: a 500 on a line break."""

    def _get_version_parameter(self, request):
        return None


class JSONSchemaView(SchemaView):
    """The same schema as JSON, served as application/json first so that a browser shows it
    rather than downloading a file (the docs page links to it)."""

    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer]


urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/ingest/v1/", include("ingest.urls")),
    path("api/v1/", include("publicapi.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/schema.json", JSONSchemaView.as_view(), name="schema-json"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    # Browsers ask for it on every page, the admin's included.
    path("favicon.ico", media.favicon),
    # Press previews: no login, never cached (review/previews.py).
    path("preview/images/<str:signed>/", previews.preview_image, name="preview-image"),
    path("preview/<str:token>/", previews.preview_page, name="preview"),
]

# The private store for editors, who see every image of the albums they review (a bucket's
# URLs are signed instead). Before the admin's own URLs, which would take admin/media/.
private_prefix = settings.PRIVATE_MEDIA_URL.lstrip("/")
urlpatterns.insert(0, re_path(rf"^{private_prefix}(?P<path>.+)$", media.private_media))

if settings.SERVE_MEDIA:
    # The embedded mode has no web server in front: Django serves the public local media, and
    # answers each request from the database (config/media.py).
    prefix = settings.MEDIA_URL.lstrip("/")
    urlpatterns += [re_path(rf"^{prefix}(?P<path>.+)$", media.public_media)]
