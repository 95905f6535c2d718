"""catalog.edge: the purge reaches the real caches. A real Varnish (Debian's varnishd, with
config/varnish.vcl) in front of the test server caches the public API by its s-maxage and the
images by theirs; after a withdrawal the visibility job's BAN drops exactly the pages that
showed the album, and its images. CloudFront's backend sends its invalidation to moto's
server. The tag words of catalog.edge and publicapi.tags are the same."""

import json
import time

import boto3
import pytest
from django.db import transaction

from catalog import edge
from catalog.visibility import media_changes_process
from ingest import thread_pool
from publicapi import tags as public_tags
from review.services import record_approve, record_unpublish
from tests.edge_support import AppServer, FailingProxy, Varnish
from tests.support import curator
from tests.visibility_support import album, keys_of

# --- The words, the patterns, the paths ----------------------------------------------------------


def test_catalog_and_the_api_name_the_same_tags():
    assert edge.KIND_TAGS == {"runway": public_tags.RUNWAYS, "street": public_tags.STREET_SNAPS}
    assert edge.BRANDS_TAG == public_tags.BRANDS
    assert edge.record_tags("runway", 12)[0] == public_tags.runways_tags([{"id": 12}])[0]
    assert edge.record_tags("street", 5)[0] == public_tags.street_snaps_tags([{"id": 5}])[0]
    assert edge.brand_tags("acme")[0] == public_tags.brands_tags([{"slug": "acme"}])[0]


def test_a_tag_pattern_matches_whole_tags_only():
    import re

    pattern = re.compile(edge.tags_pattern(["runway:1", "runways"]))

    assert pattern.search("runway:1 brand:acme")
    assert pattern.search("brand:acme runways")
    assert not pattern.search("runway:12 runway:10 brand:acme")
    assert not pattern.search("street-snaps")


def test_a_path_pattern_matches_the_path_with_or_without_a_query():
    import re

    pattern = re.compile(edge.paths_pattern(["/media/images/ab/x.jpg"]))

    assert pattern.match("/media/images/ab/x.jpg")
    assert pattern.match("/media/images/ab/x.jpg?v=2")
    assert not pattern.match("/media/images/ab/xxjpg")
    assert not pattern.match("/media/images/ab/x.jpg/more")


def test_cloudfront_paths_stand_for_every_endpoint_a_tag_names():
    paths = edge.cloudfront_paths(["runway:12", "runways"], ["/public/images/ab/x.jpg"])

    assert paths == [
        "/api/v1/runways*",
        "/api/v1/runway-images*",
        "/api/v1/index*",
        "/api/v1/brands*",
        "/public/images/ab/x.jpg",
    ]


# --- Varnish -------------------------------------------------------------------------------------


@pytest.fixture
def app_server():
    server = AppServer()
    yield server
    server.close()


@pytest.fixture
def varnish(app_server, tmp_path, settings):
    cache = Varnish(app_server.port, tmp_path / "varnish")
    settings.EDGE_PURGE_BACKEND = "http"
    settings.EDGE_PURGE_URLS = [cache.url]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "100000/min"},
    }
    yield cache
    cache.stop()


def through(cache: Varnish, path: str) -> tuple[int, str, dict]:
    status, headers, body = cache.get(path)
    return status, headers.get("X-Cache", ""), json.loads(body) if body[:1] == b"{" else {}


def approved(**kwargs):
    record = album(status="pending", **kwargs)
    record_approve(record=record, actor=curator())
    assert thread_pool.wait_idle(timeout=60)  # the visibility job, run in-process after commit
    return record


def paths(record) -> list[str]:
    return [f"/media/{key}" for key in sorted(keys_of(record))]


@pytest.mark.django_db(transaction=True)
def test_a_withdrawal_purges_every_page_and_image_that_showed_the_album(varnish):
    a = approved(photos=("astronaut", "coffee"))
    b = approved(photos=("coffee", "rocket"))  # shares coffee's bytes with a
    pages = [f"/api/v1/runways/{a.pk}/", "/api/v1/runways/", "/api/v1/index/", "/api/v1/brands/"]
    for path in [*pages, f"/api/v1/runways/{b.pk}/", *paths(a), *paths(b)]:
        assert through(varnish, path)[0] == 200, path
        assert through(varnish, path)[:2] == (200, "hit"), path
    # The API asks shared caches to keep it long, and says what it shows.
    status, headers, _ = varnish.get(f"/api/v1/runways/{a.pk}/")
    assert "s-maxage=86400" in headers["Cache-Control"]

    with transaction.atomic():
        record_unpublish(record=a, actor=curator(), reason="the photographer's request")
    assert thread_pool.wait_idle(timeout=60)

    # Gone from the edge: its detail, every list that showed it, its own images...
    assert through(varnish, f"/api/v1/runways/{a.pk}/")[0] == 404
    status, cached, runways = through(varnish, "/api/v1/runways/")
    assert (status, cached) == (200, "miss")
    assert [r["id"] for r in runways["results"]] == [b.pk]
    assert a.pk not in [r["id"] for r in through(varnish, "/api/v1/index/")[2]["latest_runways"]]
    own = sorted(keys_of(a) - keys_of(b))
    for key in own:
        assert through(varnish, f"/media/{key}")[0] == 404, key
    # ...while what album b shows stays, cached: its detail and the bytes both albums shared.
    assert through(varnish, f"/api/v1/runways/{b.pk}/")[:2] == (200, "hit")
    for path in paths(b):
        assert through(varnish, path)[0] == 200, path


@pytest.mark.django_db(transaction=True)
def test_without_the_purge_varnish_keeps_serving_the_withdrawn_album(varnish, settings):
    # The control: the same cache, no purge; what the test above saw was the purge's doing.
    a = approved(photos=("astronaut",))
    assert through(varnish, f"/api/v1/runways/{a.pk}/")[0] == 200
    settings.EDGE_PURGE_URLS = []
    settings.EDGE_PURGE_BACKEND = ""

    with transaction.atomic():
        record_unpublish(record=a, actor=curator(), reason="embargo")
    assert thread_pool.wait_idle(timeout=60)

    assert through(varnish, f"/api/v1/runways/{a.pk}/")[:2] == (200, "hit")


@pytest.mark.django_db(transaction=True)
def test_a_purge_the_cache_did_not_confirm_is_kept_and_retried(varnish, settings):
    a = approved(photos=("astronaut",))
    assert through(varnish, f"/api/v1/runways/{a.pk}/")[0] == 200
    proxy = FailingProxy(varnish.url)
    settings.EDGE_PURGE_URLS = [proxy.url]
    proxy.failing = True
    try:
        settings.MEDIA_PUBLIC_COPIES = False
        with transaction.atomic():
            record_unpublish(record=a, actor=curator(), reason="embargo")
        assert thread_pool.wait_idle(timeout=60)
        from catalog.models import MediaChange

        change = MediaChange.objects.get()
        assert change.bytes_done and "HTTP 503" in change.error
        assert through(varnish, f"/api/v1/runways/{a.pk}/")[0] == 200  # still cached

        proxy.failing = False
        run = media_changes_process()

        assert run.ok and not MediaChange.objects.exists()
        assert through(varnish, f"/api/v1/runways/{a.pk}/")[0] == 404
    finally:
        proxy.close()


# --- CloudFront (moto's server) ------------------------------------------------------------------


@pytest.mark.django_db
def test_cloudfront_gets_one_invalidation_per_batch(settings, moto_s3, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    client = boto3.client("cloudfront", endpoint_url=moto_s3)
    distribution = client.create_distribution(
        DistributionConfig={
            "CallerReference": str(time.time()),
            "Comment": "archive",
            "Enabled": True,
            "Origins": {
                "Quantity": 1,
                "Items": [
                    {
                        "Id": "archive",
                        "DomainName": "archive.example.com",
                        "CustomOriginConfig": {
                            "HTTPPort": 80,
                            "HTTPSPort": 443,
                            "OriginProtocolPolicy": "https-only",
                        },
                    }
                ],
            },
            "DefaultCacheBehavior": {
                "TargetOriginId": "archive",
                "ViewerProtocolPolicy": "redirect-to-https",
                "MinTTL": 0,
                "ForwardedValues": {"QueryString": True, "Cookies": {"Forward": "none"}},
            },
        }
    )["Distribution"]["Id"]
    settings.EDGE_PURGE_BACKEND = "cloudfront"
    settings.CLOUDFRONT_DISTRIBUTION_ID = distribution
    settings.CLOUDFRONT_ENDPOINT_URL = moto_s3
    runway = album(status="pending", photos=("astronaut",))
    record_approve(record=runway, actor=curator())
    media_changes_process()
    before = invalidation_ids(client, distribution)
    record_unpublish(record=runway, actor=curator(), reason="embargo")

    run = media_changes_process()

    # The unpublish's: its pages at once (the API dropped it at commit), its images once
    # their bytes are private.
    assert run.ok
    new = [i for i in invalidation_ids(client, distribution) if i not in before]
    assert len(new) == 2
    sent = [
        client.get_invalidation(DistributionId=distribution, Id=i)["Invalidation"][
            "InvalidationBatch"
        ]["Paths"]["Items"]
        for i in new
    ]
    assert {"/api/v1/runways*", "/api/v1/index*"} <= {p for paths in sent for p in paths}
    assert {f"/media/{key}" for key in keys_of(runway)} <= {p for paths in sent for p in paths}


def invalidation_ids(client, distribution: str) -> list[str]:
    listed = client.list_invalidations(DistributionId=distribution)["InvalidationList"]
    return [item["Id"] for item in listed.get("Items", [])]


@pytest.mark.django_db
def test_cloudfront_refusing_keeps_the_change(settings, moto_s3):
    settings.EDGE_PURGE_BACKEND = "cloudfront"
    settings.CLOUDFRONT_DISTRIBUTION_ID = "E0NOSUCHDIST"
    settings.CLOUDFRONT_ENDPOINT_URL = moto_s3
    runway = album(status="published")
    from catalog.visibility import record_change_note

    with transaction.atomic():
        record_change_note(runway)

    run = media_changes_process()

    assert "CloudFront invalidation" in run.purge_error
    from catalog.models import MediaChange

    assert MediaChange.objects.get().attempts == 1
