from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/ingest/v1/", include("ingest.urls")),
    path("api/v1/", include("publicapi.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]

if settings.SERVE_MEDIA:
    # The embedded mode has no web server in front: Django serves the local media folder.
    prefix = settings.MEDIA_URL.lstrip("/")
    urlpatterns += [
        re_path(rf"^{prefix}(?P<path>.*)$", serve, {"document_root": settings.MEDIA_ROOT}),
    ]
