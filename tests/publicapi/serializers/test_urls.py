"""Image URLs (publicapi.serializers.urls): what the storage itself gives for every key,
without asking it for each one."""

import re
from urllib.parse import urlsplit

import pytest
from django.core.files.storage import storages
from django.test import RequestFactory
from hypothesis import given
from hypothesis import settings as fuzz_settings
from hypothesis import strategies as st

from publicapi.serializers import urls as public

KEY_PARTS = st.sampled_from(
    [
        "originals",
        "renditions",
        "ab",
        "0f1e",
        "400.webp",
        "a b.jpg",
        "..",
        ".",
        "",
        ".hidden",
        "é.jpg",
        "x?y",
        "x#y",
        "%41",
        "-",
        "_",
        "a+b",
        "~",
    ]
)
KEYS = st.lists(KEY_PARTS, min_size=1, max_size=5).map("/".join)

S3 = "storages.backends.s3.S3Storage"
S3_OPTIONS = {
    "bucket_name": "archive",
    "access_key": "test",
    "secret_key": "test",
    "region_name": "us-east-1",
    "endpoint_url": "http://127.0.0.1:1",  # never contacted: URLs are made locally
}
STORAGE_CASES = {
    "media folder": ({"BACKEND": "django.core.files.storage.FileSystemStorage"}, "/media/"),
    "media on a CDN": (
        {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "https://cdn.example.com/m/",
    ),
    "bucket, plain URLs": (
        {"BACKEND": S3, "OPTIONS": {**S3_OPTIONS, "querystring_auth": False}},
        None,
    ),
    "bucket on a CDN": (
        {
            "BACKEND": S3,
            "OPTIONS": {**S3_OPTIONS, "custom_domain": "img.example.com", "location": "m"},
        },
        None,
    ),
    "bucket, signed URLs": (
        {"BACKEND": S3, "OPTIONS": {**S3_OPTIONS, "querystring_auth": True}},
        None,
    ),
}


# A signed URL carries the second it was signed at, and a signature over it: two signed a
# second apart differ there and only there.
_SIGNING = re.compile(r"(X-Amz-Date|X-Amz-Signature|Expires|Signature)=[^&]*")


def outcome(url, key):
    """The URL (its signing time and signature masked), or the kind of error (a bucket refuses
    an empty key)."""
    try:
        return _SIGNING.sub(r"\1=…", url(key))
    except Exception as exc:  # noqa: BLE001 - compared, not handled
        return type(exc)


@pytest.mark.parametrize("case", STORAGE_CASES)
def test_image_urls_are_what_the_storage_gives(settings, case):
    backend, media_url = STORAGE_CASES[case]
    settings.STORAGES = {**settings.STORAGES, "public": backend}
    if media_url is not None:
        settings.MEDIA_URL = media_url

    @given(key=KEYS)
    @fuzz_settings(max_examples=150, deadline=None)
    def same(key):
        assert outcome(public.storage_url, key) == outcome(storages["public"].url, key)

    same()
    plain = "renditions/0f1e/400.webp"
    assert outcome(public.storage_url, plain) == outcome(storages["public"].url, plain)


def test_a_changed_media_url_is_seen_at_once(settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "public": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    }
    settings.MEDIA_URL = "/media/"
    before = public.storage_url("originals/ab/1.jpg")
    settings.MEDIA_URL = "https://cdn.example.com/"

    assert before == "/media/originals/ab/1.jpg"
    assert public.storage_url("originals/ab/1.jpg") == "https://cdn.example.com/originals/ab/1.jpg"


def absolute_url_as_before(key, request):
    """What an image URL is: the storage's, made absolute as build_absolute_uri makes it."""
    url = storages["public"].url(key)
    if url.startswith("/") and not url.startswith("//") and "/." not in url:
        return request.build_absolute_uri("/")[:-1] + url
    if urlsplit(url).netloc:
        return url
    return request.build_absolute_uri(url)


@pytest.mark.parametrize(
    "case", [*STORAGE_CASES, "relative media URL", "media URL with dots", "empty media URL"]
)
def test_absolute_image_urls_are_the_storages_made_absolute(settings, case):
    media_urls = {
        "relative media URL": "media/",
        "media URL with dots": "/a/../media/",
        "empty media URL": "",
    }
    backend, media_url = STORAGE_CASES.get(
        case, ({"BACKEND": "django.core.files.storage.FileSystemStorage"}, media_urls.get(case))
    )
    settings.STORAGES = {**settings.STORAGES, "public": backend}
    if media_url is not None:
        settings.MEDIA_URL = media_url

    @given(keys=st.lists(KEYS, min_size=1, max_size=4), secure=st.booleans())
    @fuzz_settings(max_examples=100, deadline=None)
    def same(keys, secure):
        request = RequestFactory().get("/api/v1/runways/7/", secure=secure)
        for key in keys:  # one request, several keys: what is kept per request
            made = outcome(lambda k: public.absolute_url(k, request), key)
            assert made == outcome(lambda k: absolute_url_as_before(k, request), key)

    same()
    plain = "renditions/0f1e/400.webp"
    made = public.absolute_url(plain, RequestFactory().get("/api/v1/runways/7/"))
    assert urlsplit(made).netloc and plain in made  # absolute, the host allowed
