"""Image URLs (publicapi.serializers.images.absolute_url): what the public store gives for a
key, made absolute with the request's scheme and host when it is a path."""

import pytest
from django.test import RequestFactory

from publicapi.serializers.images import absolute_url

S3 = "storages.backends.s3.S3Storage"
S3_OPTIONS = {
    "bucket_name": "archive",
    "access_key": "test",
    "secret_key": "test",
    "region_name": "us-east-1",
    "endpoint_url": "http://127.0.0.1:1",  # never contacted: URLs are made locally
}
FOLDER = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
KEY = "renditions/0f/0f1e/400.webp"


@pytest.mark.parametrize(
    ("storage", "media_url", "secure", "expected"),
    [
        (FOLDER, "/media/", False, f"http://testserver/media/{KEY}"),
        (FOLDER, "/media/", True, f"https://testserver/media/{KEY}"),
        (FOLDER, "https://cdn.example.com/m/", False, f"https://cdn.example.com/m/{KEY}"),
        (
            {"BACKEND": S3, "OPTIONS": {**S3_OPTIONS, "querystring_auth": False}},
            None,
            False,
            f"http://127.0.0.1:1/archive/{KEY}",
        ),
        (
            {"BACKEND": S3, "OPTIONS": {**S3_OPTIONS, "custom_domain": "img.example.com"}},
            None,
            False,
            f"https://img.example.com/{KEY}",
        ),
    ],
)
def test_image_urls_are_the_storages_made_absolute(settings, storage, media_url, secure, expected):
    settings.STORAGES = {**settings.STORAGES, "public": storage}
    if media_url is not None:
        settings.MEDIA_URL = media_url
    request = RequestFactory().get("/api/v1/runways/7/", secure=secure)

    assert absolute_url(KEY, request) == expected


def test_a_signed_url_is_kept_whole(settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "public": {"BACKEND": S3, "OPTIONS": {**S3_OPTIONS, "querystring_auth": True}},
    }

    url = absolute_url(KEY, RequestFactory().get("/"))

    assert url.startswith(f"http://127.0.0.1:1/archive/{KEY}?")
    assert "Signature=" in url
