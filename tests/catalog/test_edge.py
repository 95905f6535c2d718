"""catalog.edge: the purge reaches the real caches. A real Varnish (Debian's varnishd, with
config/varnish.vcl) in front of the test server caches the public API by its s-maxage and the
images by theirs; after a withdrawal the visibility job's BAN drops exactly the pages that
showed the album, and its images. CloudFront's backend sends its invalidation to moto's
server. The tag words of catalog.edge and publicapi.tags are the same."""

import json
import time
from urllib.parse import unquote

import boto3
import pytest
import time_machine
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from catalog import edge
from catalog.visibility import media_changes_process
from ingest import thread_pool
from publicapi import tags as public_tags
from review.services import Action, record_approve, record_reject
from tests.catalog.conftest import through
from tests.edge_support import AppServer, FailingProxy, Varnish
from tests.support import curator
from tests.visibility_support import album, keys_of

# --- The words, the headers, the paths -----------------------------------------------------------


def test_catalog_and_the_api_name_the_same_tags():
    assert edge.record_tags("runway", 12)[0] == public_tags.runways_tags([{"id": 12}])[0]
    assert edge.record_tags("street", 5)[0] == public_tags.street_snaps_tags([{"id": 5}])[0]
    assert edge.brand_tags("acme")[0] == public_tags.brands_tags([{"slug": "acme"}])[0]


@given(st.text(min_size=1, max_size=40))
def test_any_tag_is_one_token_of_ascii(tag):
    encoded = edge.encode_tag(tag)

    assert encoded.isascii() and encoded.isprintable() and " " not in encoded
    assert edge.tags_header([tag, "runway:1"]).split(" ") == [encoded, "runway:1"]
    assert unquote(encoded) == tag


def test_a_plain_tag_is_sent_as_it_is_and_a_spaced_slug_stays_one_tag():
    assert edge.encode_tag("runway:12") == "runway:12"
    assert edge.brand_tags("acme studio") == ["brand:acme studio"]
    assert edge.tags_header(edge.brand_tags("acme studio", "łódź")) == (
        "brand:acme%20studio brand:%C5%82%C3%B3d%C5%BA"
    )


def test_an_image_and_its_renditions_share_one_tag():
    sha1 = "eb" + "4" * 38

    assert edge.image_tag(f"images/eb/{sha1}.jpg") == f"image:{sha1}"
    assert edge.image_tag(f"renditions/eb/{sha1}/400.webp") == f"image:{sha1}"
    assert edge.image_tag("legacy/old name.jpg") == "image:legacy/old name.jpg"


def test_a_thousand_albums_purge_in_a_few_requests():
    tags = [tag for pk in range(1_000_000, 1_001_000) for tag in edge.record_tags("street", pk)]

    chunks = edge.tag_chunks(tags)

    assert len(chunks) <= 4
    assert all(len(chunk) <= 6000 for chunk in chunks)
    assert [t for chunk in chunks for t in chunk.split(" ")] == tags


@pytest.mark.django_db
def test_cloudfront_paths_stand_for_every_endpoint_and_image_a_tag_names(settings):
    settings.MEDIA_URL = "/public/"
    runway = album(status="published", photos=("astronaut",))
    sha1 = runway.images.get().sha1

    paths = edge.cloudfront_paths([f"runway:{runway.pk}", "brand:acme"])

    assert paths == [
        "/api/v1/runways*",
        "/api/v1/runway-images*",
        "/api/v1/street-snap-images*",
        "/api/v1/index*",
        "/api/v1/brands*",
        f"/public/images/{sha1[:2]}/{sha1}*",
        f"/public/renditions/{sha1[:2]}/{sha1}/*",
    ]


@pytest.mark.django_db
def test_too_many_images_for_cloudfront_invalidate_the_media_prefix():
    tags = [f"image:{n:040x}" for n in range(600)]

    assert edge.cloudfront_paths(tags) == ["/media/*"]


# --- Varnish -------------------------------------------------------------------------------------


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
        record_reject(
            record=a, actor=curator(), reason="the photographer's request", action=Action.UNPUBLISH
        )
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
        record_reject(record=a, actor=curator(), reason="embargo", action=Action.UNPUBLISH)
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
            record_reject(record=a, actor=curator(), reason="embargo", action=Action.UNPUBLISH)
        assert thread_pool.wait_idle(timeout=60)
        from catalog.models import MediaChange

        change = MediaChange.objects.get()
        assert change.bytes_done and "HTTP 503" in change.error
        assert through(varnish, f"/api/v1/runways/{a.pk}/")[0] == 200  # still cached

        proxy.failing = False
        with time_machine.travel(change.due_at):  # its back-off over
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
    record_reject(record=runway, actor=curator(), reason="embargo", action=Action.UNPUBLISH)

    run = media_changes_process()

    # The unpublish's: its pages at once (the API dropped it at commit), then again once its
    # bytes are private, with its images' paths.
    assert run.ok
    new = [i for i in invalidation_ids(client, distribution) if i not in before]
    assert len(new) == 2
    sent = {
        path
        for i in new
        for path in client.get_invalidation(DistributionId=distribution, Id=i)["Invalidation"][
            "InvalidationBatch"
        ]["Paths"]["Items"]
    }
    sha1 = runway.images.get().sha1
    assert {"/api/v1/runways*", "/api/v1/index*", f"/media/images/{sha1[:2]}/{sha1}*"} <= sent


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


# --- Every spelling of an image, every tag, every scheme ------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_image_is_cached_under_one_spelling_and_purged_by_its_tag(varnish, app_server):
    runway = approved(photos=("astronaut",))
    key = runway.images.get().storage_key  # images/<ab>/<sha1>.jpg
    prefix, fan, name = key.split("/")
    canonical = f"/media/{key}"
    escaped = "".join(f"%{ord(c):02X}" if c in "0123456789abcdef" else c for c in name[:3])
    spellings = [
        f"/media/{prefix}/{fan}/{escaped}{name[3:]}",  # %65 for "e": needs no escape
        f"/media/{prefix}/{fan}/%{ord(name[0]):02x}{name[1:]}",  # a lower-case escape
        f"/media//{key}",
        f"/media/{prefix}/./{fan}/{name}",
        f"/media/{prefix}/x/../{fan}/{name}",
        f"/media/{prefix}%2F{fan}%2F{name}",
        f"/media/{prefix}/{fan}/{name}%",
        f"/media\\{key}",
    ]
    assert through(varnish, canonical)[0] == 200
    assert through(varnish, f"{canonical}?v=2")[:2] == (200, "hit")  # the query names nothing

    for spelling in spellings:
        assert through(varnish, spelling)[0] == 404, spelling
        assert through(varnish, spelling)[1] != "hit", spelling
    # The origin answers the key, not another path to the same file.
    for spelling in spellings[2:5]:
        assert origin_status(app_server, spelling) == 404, spelling

    # Its tag names it, and the album's does too: the purge needs no path.
    status, headers, _ = app_server_get(app_server, canonical)
    assert headers["Surrogate-Key"].split(" ") == [edge.image_tag(key), f"runway:{runway.pk}"]
    with transaction.atomic():
        record_reject(record=runway, actor=curator(), reason="a takedown", action=Action.UNPUBLISH)
    assert thread_pool.wait_idle(timeout=60)
    assert through(varnish, canonical)[:2] == (404, "miss")


@pytest.mark.django_db(transaction=True)
def test_a_slug_with_a_space_or_beyond_latin_1_purges_its_pages(varnish):
    from catalog.models import Brand

    for slug in ("acme studio", "łódź"):
        runway = approved(photos=("astronaut",), brand__slug=slug, brand__name=slug.title())
        page = f"/api/v1/runways/{runway.pk}/"
        assert through(varnish, page)[2]["brand"]["name"] == slug.title()
        assert through(varnish, page)[1] == "hit"

        brand = Brand.objects.get(pk=runway.brand_id)
        brand.name = "Renamed"
        with transaction.atomic():
            brand.save()
        assert thread_pool.wait_idle(timeout=60)

        status, cached, shown = through(varnish, page)
        assert (status, cached, shown["brand"]["name"]) == (200, "miss", "Renamed"), slug


class PurgeCounter:
    """A cache stand-in that counts the purges it gets and answers as the VCL does (or, with
    ``confirm`` off, as a server without it: 200 and nothing else)."""

    def __init__(self, *, confirm: bool = True) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[str] = []
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_PURGE(self):  # noqa: N802 - the method's name
                counter.requests.append(self.headers.get("xkey-purge", ""))
                self.send_response(200)
                if confirm:
                    self.send_header("X-Purged", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        import threading

        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def purge_counter(settings):
    counter = PurgeCounter()
    settings.EDGE_PURGE_BACKEND = "http"
    settings.EDGE_PURGE_URLS = [counter.url]
    yield counter
    counter.close()


@pytest.mark.django_db
def test_unpublishing_a_thousand_albums_sends_a_few_purges(
    purge_counter, django_assert_max_num_queries
):
    from tests.factories import StreetSnapFactory

    snaps = StreetSnapFactory.create_batch(1000, published=True)
    for snap in snaps:  # the bulk action's service: one transaction each
        record_reject(
            record=snap, actor=curator(), reason="the licence ended", action=Action.UNPUBLISH
        )

    run = media_changes_process()

    assert (run.changes, run.done, run.ok) == (1000, 1000, True)
    # Its withdrawn pages first, then again once the bytes moved: each a few requests of at
    # most 6,000 bytes of tags, whatever the number of images.
    assert len(purge_counter.requests) <= 10
    purged = {tag for header in purge_counter.requests for tag in header.split(" ")}
    assert purged == {f"street-snap:{snap.pk}" for snap in snaps}


@pytest.mark.django_db
def test_a_cache_that_does_not_confirm_the_purge_keeps_the_change(settings):
    counter = PurgeCounter(confirm=False)
    settings.EDGE_PURGE_BACKEND = "http"
    settings.EDGE_PURGE_URLS = [counter.url]
    try:
        runway = album(status="published", photos=("astronaut",))
        from catalog.visibility import record_change_note

        with transaction.atomic():
            record_change_note(runway)

        run = media_changes_process()
    finally:
        counter.close()

    assert "did not confirm" in run.purge_error
    from catalog.models import MediaChange

    assert MediaChange.objects.get().attempts == 1


@pytest.mark.django_db(transaction=True)
def test_the_scheme_is_part_of_the_cache_key_and_a_redirect_is_never_kept(tmp_path, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.EDGE_PURGE_BACKEND = "http"
    server = AppServer()  # its middleware reads the settings above
    cache = Varnish(server.port, tmp_path / "varnish")
    try:
        runway = approved(photos=("astronaut",))
        page = f"/api/v1/runways/{runway.pk}/"

        for _ in range(2):
            status, headers, _ = cache.get(page, **{"X-Forwarded-Proto": "http"})
            assert (status, headers.get("X-Cache")) == (301, "miss")
        status, headers, body = cache.get(page, **{"X-Forwarded-Proto": "https"})
        assert status == 200
        assert json.loads(body)["images"][0]["url"].startswith("https://")
        assert cache.get(page, **{"X-Forwarded-Proto": "https"})[1]["X-Cache"] == "hit"
    finally:
        cache.stop()
        server.close()


def origin_status(server: AppServer, path: str) -> int:
    return app_server_get(server, path)[0]


def app_server_get(server: AppServer, path: str) -> tuple[int, dict, bytes]:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": "localhost"})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()
