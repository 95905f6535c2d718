from django.urls import path, re_path
from rest_framework.routers import SimpleRouter

from publicapi.views import (
    BrandViewSet,
    IndexView,
    NotFoundView,
    RunwayImageSimilarView,
    RunwayViewSet,
    StreetSnapImageSimilarView,
    StreetSnapViewSet,
)

router = SimpleRouter()
router.register("runways", RunwayViewSet, basename="public-runway")
router.register("street-snaps", StreetSnapViewSet, basename="public-street-snap")
router.register("brands", BrandViewSet, basename="public-brand")

urlpatterns = [
    path("index/", IndexView.as_view(), name="public-index"),
    re_path(
        r"^runway-images/(?P<pk>[0-9]+)/similar/$",
        RunwayImageSimilarView.as_view(),
        name="public-runway-image-similar",
    ),
    re_path(
        r"^street-snap-images/(?P<pk>[0-9]+)/similar/$",
        StreetSnapImageSimilarView.as_view(),
        name="public-street-snap-image-similar",
    ),
    *router.urls,
    # Last: any other path ending in "/" (and the API root) is a JSON 404; [\s\S], not ".",
    # so a path with a line break in it is one too. A path without its trailing slash
    # matches nothing here, so APPEND_SLASH still redirects it first.
    re_path(r"^(?:[\s\S]*/)?$", NotFoundView.as_view(), name="public-not-found"),
]
