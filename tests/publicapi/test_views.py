"""The public endpoints: shapes, looks and groups, filters, ordering, pagination, brands, the
home page, and query counts that do not grow with page or album size."""

from urllib.parse import quote

import pytest
from django.utils import timezone

from catalog.models import Runway, StreetSnap
from publicapi import pagination
from tests.factories import (
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
    images_of,
)

pytestmark = pytest.mark.django_db

IMAGE_KEYS = {
    "id",
    "url",
    "width",
    "height",
    "mime_type",
    "renditions",
    "srcset",
    "placeholder",
    "color",
}
RECORD_KEYS = {"id", "title", "description", "cover", "image_count", "published_at"}
RUNWAY_KEYS = RECORD_KEYS | {"brand", "season_code", "season", "year", "collection_type"}
STREET_KEYS = RECORD_KEYS | {"city", "year", "month"}
BRAND_KEYS = {"slug", "name", "is_featured", "runway_count", "latest_published_at"}


def get_json(client, url, status=200, **params):
    response = client.get(url, params)
    assert response.status_code == status, response.content
    return response.json()


def ids(items):
    return [item["id"] for item in items]


def set_cover(record, image):
    type(record).objects.filter(pk=record.pk).update(cover=image)


def soft_delete(obj):
    type(obj).objects.filter(pk=obj.pk).update(deleted_at=timezone.now())


# --- shapes ---------------------------------------------------------------------------------


def test_a_runway_in_the_list_carries_its_fields_brand_and_cover(client):
    brand = BrandFactory(name="Acme", slug="acme")
    runway = RunwayFactory(
        brand=brand,
        published=True,
        season_code="FW24",
        season="Fall/Winter 2024",
        year=2024,
        collection_type="ready-to-wear",
        title="Acme Fall 2024",
        description="Wool.",
        images=[{"storage_key": "images/ab/abc.jpg", "width": 640, "height": 960, "look_index": 3}],
    )
    cover = runway.cover

    [shown] = get_json(client, "/api/v1/runways/")["results"]

    assert set(shown) == RUNWAY_KEYS
    assert shown["brand"] == {"slug": "acme", "name": "Acme"}
    assert (shown["season_code"], shown["season"], shown["year"]) == (
        "FW24",
        "Fall/Winter 2024",
        2024,
    )
    assert (shown["collection_type"], shown["title"], shown["description"]) == (
        "ready-to-wear",
        "Acme Fall 2024",
        "Wool.",
    )
    assert shown["image_count"] == 1
    assert shown["published_at"].replace("Z", "+00:00") == runway.published_at.isoformat()
    assert shown["cover"] == {
        "id": cover.pk,
        "url": "http://testserver/media/images/ab/abc.jpg",
        "width": 640,
        "height": 960,
        "mime_type": "image/jpeg",
        "look_index": 3,
        "renditions": [],
        "srcset": "",
        "placeholder": None,
        "color": None,
    }


def test_an_image_offers_its_renditions_srcset_placeholder_and_color(client):
    # Given a published runway whose cover (and only image) has both renditions, stored in
    # the JSON in descending order
    sha1 = "ab" * 20
    runway = RunwayFactory(
        published=True,
        images=[
            {
                "sha1": sha1,
                "width": 2000,
                "height": 3000,
                "renditions": [
                    {"width": 1200, "height": 1800, "key": f"renditions/ab/{sha1}/1200.webp"},
                    {"width": 400, "height": 600, "key": f"renditions/ab/{sha1}/400.webp"},
                ],
                "placeholder": "3UgOFQaKa1+phmqGeXaJpm8z9gdT",
                "color": "#936e62",
                "rendition_status": "done",
            }
        ],
    )

    # When the frontend reads the list and the detail
    [listed] = get_json(client, "/api/v1/runways/")["results"]
    detail = get_json(client, f"/api/v1/runways/{runway.pk}/")

    # Then the cover and the image carry absolute URLs in ascending width, a srcset of them,
    # the placeholder and the colour
    base = f"http://testserver/media/renditions/ab/{sha1}"
    renditions = [
        {"width": 400, "height": 600, "url": f"{base}/400.webp"},
        {"width": 1200, "height": 1800, "url": f"{base}/1200.webp"},
    ]
    for image in (listed["cover"], detail["cover"], detail["images"][0]):
        assert image["renditions"] == renditions
        assert image["srcset"] == f"{base}/400.webp 400w, {base}/1200.webp 1200w"
        assert image["placeholder"] == "3UgOFQaKa1+phmqGeXaJpm8z9gdT"
        assert image["color"] == "#936e62"


def test_the_etag_changes_when_renditions_appear(client):
    runway = RunwayFactory(published=True, images=[{"sha1": "cd" * 20}], images__cover=None)
    [image] = images_of(runway)
    url = f"/api/v1/runways/{runway.pk}/"
    before = client.get(url)

    type(image).objects.filter(pk=image.pk).update(
        renditions=[{"width": 400, "height": 600, "key": "renditions/cd/x/400.webp"}],
        placeholder="3UgOFQaKa1+phmqGeXaJpm8z9gdT",
        color="#000000",
    )
    after = client.get(url, headers={"if-none-match": before["ETag"]})

    assert after.status_code == 200
    assert after["ETag"] != before["ETag"]


def test_a_cover_that_is_not_a_live_image_of_the_record_is_null(client):
    runway = RunwayFactory(published=True)
    set_cover(runway, RunwayImageFactory())  # another runway's image
    snap = StreetSnapFactory(published=True)
    deleted = StreetSnapImageFactory(street_snap=snap)
    set_cover(snap, deleted)
    soft_delete(deleted)

    assert get_json(client, f"/api/v1/runways/{runway.pk}/")["cover"] is None
    assert get_json(client, f"/api/v1/street-snaps/{snap.pk}/")["cover"] is None


def test_image_urls_come_from_the_storage_absolute_as_they_are(client, settings):
    # The public store, a bucket behind a CDN: the storage's URL is already absolute and is
    # kept as it is.
    settings.STORAGES = {
        **settings.STORAGES,
        "public": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": "archive-media",
                "custom_domain": "cdn.example.com",
                "querystring_auth": False,
            },
        },
    }
    runway = RunwayFactory(published=True)
    RunwayImageFactory(runway=runway, storage_key="images/ab/abc.jpg")

    [image] = get_json(client, f"/api/v1/runways/{runway.pk}/")["images"]

    assert image["url"] == "https://cdn.example.com/images/ab/abc.jpg"


def test_local_image_urls_are_made_absolute_with_the_requests_host(client):
    runway = RunwayFactory(published=True)
    RunwayImageFactory(runway=runway, storage_key="images/ab/abc.jpg")

    response = client.get(f"/api/v1/runways/{runway.pk}/", HTTP_HOST="localhost:8000")

    assert response.json()["images"][0]["url"] == "http://localhost:8000/media/images/ab/abc.jpg"


def test_no_private_column_appears_anywhere(client):
    brand = BrandFactory()
    runway = RunwayFactory(brand=brand, published=True, reviewer="ed", source="vogue")
    RunwayImageFactory(runway=runway)
    snap = StreetSnapFactory(published=True, reviewer="ed", reject_reason="x")
    StreetSnapImageFactory(street_snap=snap)
    private = {
        "reviewer",
        "reviewed_at",
        "reject_reason",
        "ingest_job_id",
        "content_checksum",
        "status",
        "deleted_at",
        "source",
        "source_url",
        "version",
        "sha1",
        "original_url",
        "is_duplicate",
        "dup_of",
        "phash",
        "storage_key",
        "byte_size",
    }

    def keys(value):
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    for url in [
        "/api/v1/runways/",
        f"/api/v1/runways/{runway.pk}/",
        "/api/v1/street-snaps/",
        f"/api/v1/street-snaps/{snap.pk}/",
        "/api/v1/brands/",
        f"/api/v1/brands/{brand.slug}/",
        "/api/v1/index/",
    ]:
        assert not keys(get_json(client, url)) & private, url


# --- looks and groups -------------------------------------------------------------------------


def test_runway_detail_lists_images_in_order_and_groups_them_into_looks(client):
    runway = RunwayFactory(published=True)
    look1 = RunwayImageFactory(runway=runway, sort_order=0, look_index=1)
    look2 = RunwayImageFactory(runway=runway, sort_order=1, look_index=2)
    look1_detail = RunwayImageFactory(runway=runway, sort_order=2, look_index=1)
    gone = RunwayImageFactory(runway=runway, sort_order=3, look_index=3)
    look2_detail = RunwayImageFactory(runway=runway, sort_order=4, look_index=2)
    soft_delete(gone)

    shown = get_json(client, f"/api/v1/runways/{runway.pk}/")

    assert set(shown) == RUNWAY_KEYS | {"images", "looks"}
    assert ids(shown["images"]) == [look1.pk, look2.pk, look1_detail.pk, look2_detail.pk]
    assert set(shown["images"][0]) == IMAGE_KEYS | {"look_index"}
    assert [(look["look_index"], look["images"]) for look in shown["looks"]] == [
        (1, [look1.pk, look1_detail.pk]),
        (2, [look2.pk, look2_detail.pk]),
    ]


def image_objects(value) -> list[int]:
    """The id of every image object in a body (an object with a url), repeats included."""
    if isinstance(value, dict):
        own = [value["id"]] if "url" in value else []
        return own + [i for item in value.values() for i in image_objects(item)]
    if isinstance(value, list):
        return [i for item in value for i in image_objects(item)]
    return []


def test_a_detail_carries_each_image_object_once_and_its_cover(client):
    # Looks and groups name their images by id: a 60-image runway was twice its size when
    # they repeated the image objects.
    runway = RunwayFactory(published=True, images=6, images__shots=2, images__cover=2)
    shots = images_of(runway)
    snap = StreetSnapFactory(published=True, images="Mdd")
    main, *details = images_of(snap)

    for url, album in [
        (f"/api/v1/runways/{runway.pk}/", shots),
        (f"/api/v1/street-snaps/{snap.pk}/", [main, *details]),
    ]:
        shown = get_json(client, url)
        cover = [shown["cover"]["id"]] if shown["cover"] else []
        assert sorted(image_objects(shown)) == sorted([i.pk for i in album] + cover), url

    assert shown["groups"] == [{"main": main.pk, "details": [d.pk for d in details]}]


def test_runway_images_with_equal_sort_order_keep_a_stable_order(client):
    runway = RunwayFactory(published=True)
    first = RunwayImageFactory(runway=runway, sort_order=5)
    second = RunwayImageFactory(runway=runway, sort_order=5)
    earlier = RunwayImageFactory(runway=runway, sort_order=1)

    shown = get_json(client, f"/api/v1/runways/{runway.pk}/")

    assert ids(shown["images"]) == [earlier.pk, first.pk, second.pk]


def test_street_detail_groups_details_under_their_main(client):
    snap = StreetSnapFactory(published=True)
    main1 = StreetSnapImageFactory(street_snap=snap, sort_order=0)
    main2 = StreetSnapImageFactory(street_snap=snap, sort_order=1)
    detail1 = StreetSnapImageFactory(street_snap=snap, sort_order=2, parent=main1)
    detail2 = StreetSnapImageFactory(street_snap=snap, sort_order=3, parent=main1)

    shown = get_json(client, f"/api/v1/street-snaps/{snap.pk}/")

    assert set(shown) == STREET_KEYS | {"images", "groups"}
    assert ids(shown["images"]) == [main1.pk, main2.pk, detail1.pk, detail2.pk]
    assert {(i["id"], i["is_detail"], i["parent"]) for i in shown["images"]} == {
        (main1.pk, False, None),
        (main2.pk, False, None),
        (detail1.pk, True, main1.pk),
        (detail2.pk, True, main1.pk),
    }
    assert [(g["main"], g["details"]) for g in shown["groups"]] == [
        (main1.pk, [detail1.pk, detail2.pk]),
        (main2.pk, []),
    ]


def test_a_detail_whose_main_was_deleted_is_shown_as_a_main(client):
    snap = StreetSnapFactory(published=True)
    main = StreetSnapImageFactory(street_snap=snap, sort_order=0)
    orphan = StreetSnapImageFactory(street_snap=snap, sort_order=1, parent=main)
    other = StreetSnapImageFactory(street_snap=snap, sort_order=2)
    soft_delete(main)

    shown = get_json(client, f"/api/v1/street-snaps/{snap.pk}/")

    assert ids(shown["images"]) == [orphan.pk, other.pk]
    assert (shown["images"][0]["is_detail"], shown["images"][0]["parent"]) == (False, None)
    assert [(g["main"], g["details"]) for g in shown["groups"]] == [
        (orphan.pk, []),
        (other.pk, []),
    ]


def test_a_detail_under_a_detail_or_another_albums_image_is_shown_as_a_main(client):
    snap = StreetSnapFactory(published=True)
    main = StreetSnapImageFactory(street_snap=snap, sort_order=0)
    detail = StreetSnapImageFactory(street_snap=snap, sort_order=1, parent=main)
    # Rows no service writes, as a bad import might leave them: the API must cope.
    nested = StreetSnapImageFactory(street_snap=snap, sort_order=2, parent=detail)
    foreign = StreetSnapImageFactory(
        street_snap=snap, sort_order=3, parent=StreetSnapImageFactory()
    )
    deleted_detail = StreetSnapImageFactory(street_snap=snap, sort_order=4, parent=main)
    soft_delete(deleted_detail)

    shown = get_json(client, f"/api/v1/street-snaps/{snap.pk}/")

    assert [(g["main"], g["details"]) for g in shown["groups"]] == [
        (main.pk, [detail.pk]),
        (nested.pk, []),
        (foreign.pk, []),
    ]


def test_an_album_without_images_has_empty_images_looks_and_groups(client):
    runway = RunwayFactory(published=True)
    snap = StreetSnapFactory(published=True)

    runway_shown = get_json(client, f"/api/v1/runways/{runway.pk}/")
    snap_shown = get_json(client, f"/api/v1/street-snaps/{snap.pk}/")

    assert (runway_shown["images"], runway_shown["looks"], runway_shown["cover"]) == ([], [], None)
    assert (snap_shown["images"], snap_shown["groups"], snap_shown["cover"]) == ([], [], None)


# --- visibility (examples; test_visibility.py has the property) -----------------------------


@pytest.mark.parametrize(
    "state",
    [
        {"status": "pending"},
        {"status": "rejected"},
        {"status": "published", "deleted_at": timezone.now()},
    ],
    ids=["pending", "rejected", "deleted"],
)
def test_records_that_are_not_published_and_live_are_not_found(client, state):
    runway = RunwayFactory(published=True)
    snap = StreetSnapFactory(published=True)
    Runway.objects.filter(pk=runway.pk).update(**state)
    StreetSnap.objects.filter(pk=snap.pk).update(**state)

    assert get_json(client, "/api/v1/runways/")["results"] == []
    assert get_json(client, "/api/v1/street-snaps/")["results"] == []
    assert get_json(client, "/api/v1/brands/")["results"] == []
    assert get_json(client, f"/api/v1/runways/{runway.pk}/", status=404)["code"] == "not_found"
    get_json(client, f"/api/v1/street-snaps/{snap.pk}/", status=404)
    get_json(client, f"/api/v1/brands/{runway.brand.slug}/", status=404)


def test_deleted_images_are_not_shown(client):
    runway = RunwayFactory(published=True)
    kept = RunwayImageFactory(runway=runway)
    soft_delete(RunwayImageFactory(runway=runway))

    shown = get_json(client, f"/api/v1/runways/{runway.pk}/")

    assert ids(shown["images"]) == [kept.pk]


# --- filters ----------------------------------------------------------------------------------


def test_runway_filters_combine(client):
    acme, other = BrandFactory(slug="acme"), BrandFactory(slug="other")
    match = RunwayFactory(
        brand=acme, published=True, season_code="FW24", year=2024, collection_type="couture"
    )
    RunwayFactory(
        brand=other, published=True, season_code="FW24", year=2024, collection_type="couture"
    )
    RunwayFactory(
        brand=acme, published=True, season_code="SS24", year=2024, collection_type="couture"
    )
    RunwayFactory(
        brand=acme, published=True, season_code="FW23", year=2023, collection_type="couture"
    )
    RunwayFactory(
        brand=acme, published=True, season_code="FW25", year=2024, collection_type="menswear"
    )

    results = get_json(
        client,
        "/api/v1/runways/",
        brand="acme",
        season_code="fw24",
        year=2024,
        collection_type="Couture",
    )["results"]

    assert ids(results) == [match.pk]
    assert len(get_json(client, "/api/v1/runways/", brand="acme")["results"]) == 4
    assert len(get_json(client, "/api/v1/runways/", year=2024)["results"]) == 4
    assert get_json(client, "/api/v1/runways/", brand="nobody")["results"] == []


def test_street_filters_combine(client):
    match = StreetSnapFactory(published=True, city="Copenhagen", year=2026, month=8)
    StreetSnapFactory(published=True, city="Paris", year=2026, month=8)
    StreetSnapFactory(published=True, city="Copenhagen", year=2025, month=8)
    StreetSnapFactory(published=True, city="Copenhagen", year=2026, month=2)

    results = get_json(client, "/api/v1/street-snaps/", city="copenhagen", year=2026, month=8)[
        "results"
    ]

    assert ids(results) == [match.pk]
    assert len(get_json(client, "/api/v1/street-snaps/", city="Copenhagen")["results"]) == 3


def test_brand_filter_featured(client):
    featured = BrandFactory(name="A", is_featured=True)
    plain = BrandFactory(name="B")
    RunwayFactory(brand=featured, published=True)
    RunwayFactory(brand=plain, published=True)

    assert [b["slug"] for b in get_json(client, "/api/v1/brands/", featured="true")["results"]] == [
        featured.slug
    ]
    assert [
        b["slug"] for b in get_json(client, "/api/v1/brands/", featured="false")["results"]
    ] == [plain.slug]
    assert len(get_json(client, "/api/v1/brands/")["results"]) == 2


@pytest.mark.parametrize(
    ("url", "params", "parameter"),
    [
        ("/api/v1/runways/", {"year": "abc"}, "year"),
        ("/api/v1/runways/", {"year": "2024.5"}, "year"),
        ("/api/v1/runways/", {"year": "10000"}, "year"),
        ("/api/v1/runways/", {"year": "-1"}, "year"),
        ("/api/v1/runways/", {"year": "9" * 5000}, "year"),
        ("/api/v1/runways/", {"season_code": "FW\x0024"}, "season_code"),
        ("/api/v1/street-snaps/", {"month": "13"}, "month"),
        ("/api/v1/street-snaps/", {"month": "x"}, "month"),
        ("/api/v1/street-snaps/", {"city": "\x00"}, "city"),
        ("/api/v1/brands/", {"featured": "yes please"}, "featured"),
        ("/api/v1/runways/", {"page": "0"}, "page"),
        ("/api/v1/runways/", {"page": "abc"}, "page"),
        ("/api/v1/runways/", {"page": "-1"}, "page"),
        ("/api/v1/runways/", {"page_size": "0"}, "page_size"),
        ("/api/v1/runways/", {"page_size": "ten"}, "page_size"),
        ("/api/v1/runways/", {"page": ""}, "page"),
        ("/api/v1/runways/", {"page_size": ""}, "page_size"),
        ("/api/v1/runways/", {"year": ""}, "year"),
        ("/api/v1/runways/", {"brand": ""}, "brand"),
        ("/api/v1/street-snaps/", {"city": ""}, "city"),
        ("/api/v1/brands/", {"featured": ""}, "featured"),
    ],
)
def test_a_bad_query_parameter_is_a_400_naming_it(client, url, params, parameter):
    body = get_json(client, url, status=400, **params)

    assert body["status"] == 400
    assert body["code"] == "invalid"
    assert list(body["errors"]) == [parameter]


@pytest.mark.parametrize(
    ("url", "params"),
    [
        ("/api/v1/runways/", {"year": "abc", "season_code": "", "page": "x", "page_size": "0"}),
        ("/api/v1/street-snaps/", {"month": "13", "city": "", "page_size": "x"}),
        ("/api/v1/brands/", {"featured": "maybe", "page": "0"}),
    ],
)
def test_every_bad_query_parameter_is_named_in_one_400(client, url, params):
    body = get_json(client, url, status=400, **params)

    assert body["code"] == "invalid"
    assert sorted(body["errors"]) == sorted(params)


@pytest.mark.parametrize(
    ("url", "query", "parameter"),
    [
        ("/api/v1/runways/", "year=abc&year=2020", "year"),
        ("/api/v1/runways/", "year=2020&year=2020", "year"),
        ("/api/v1/runways/", "page=1&page=2", "page"),
        ("/api/v1/street-snaps/", "page_size=10&page_size=abc", "page_size"),
        ("/api/v1/brands/", "featured=true&featured=false", "featured"),
        ("/api/v1/runways/facets/", "brand=acme&brand=", "brand"),
        ("/api/v1/street-snaps/facets/", "q=a&q=b", "q"),
    ],
)
def test_a_parameter_given_twice_is_a_400_naming_it(client, url, query, parameter):
    # Reading only the last value would answer ?year=abc&year=2020 as if abc were not there.
    response = client.get(f"{url}?{query}")

    assert response.status_code == 400
    assert response.json()["errors"] == {parameter: ["Give this parameter once."]}


def test_unknown_query_parameters_are_ignored(client):
    RunwayFactory(published=True)

    assert len(get_json(client, "/api/v1/runways/", colour="red")["results"]) == 1


# --- ordering and pagination -----------------------------------------------------------------


def test_runways_newest_published_first(client, at):
    old = RunwayFactory(published=True, published_at=at(1))
    new = RunwayFactory(published=True, published_at=at(3))
    middle = RunwayFactory(published=True, published_at=at(2))
    undated = RunwayFactory(published=True)
    Runway.objects.filter(pk=undated.pk).update(published_at=None)

    results = get_json(client, "/api/v1/runways/")["results"]

    assert ids(results) == [new.pk, middle.pk, old.pk, undated.pk]


def test_street_snaps_newest_published_first_with_ties_by_id(client, at):
    first = StreetSnapFactory(published=True, published_at=at(1))
    tie_a = StreetSnapFactory(published=True, published_at=at(2))
    tie_b = StreetSnapFactory(published=True, published_at=at(2))

    results = get_json(client, "/api/v1/street-snaps/")["results"]

    assert ids(results) == [tie_b.pk, tie_a.pk, first.pk]


def test_pages_partition_the_list(client, at):
    runways = [RunwayFactory(published=True, published_at=at(n)) for n in range(7)]

    page1 = get_json(client, "/api/v1/runways/", page_size=3)
    page3 = get_json(client, "/api/v1/runways/", page_size=3, page=3)
    page2 = get_json(client, page1["next"])

    assert page1["count"] == 7
    assert page1["previous"] is None
    assert page1["next"] == "http://testserver/api/v1/runways/?page=2&page_size=3"
    assert ids(page1["results"] + page2["results"] + page3["results"]) == [
        r.pk for r in reversed(runways)
    ]
    assert page3["next"] is None


def test_the_default_page_size_is_20(client):
    RunwayFactory.create_batch(21, published=True)

    body = get_json(client, "/api/v1/runways/")

    assert (body["count"], len(body["results"])) == (21, 20)


def test_page_size_above_the_cap_is_served_as_100(client):
    RunwayFactory.create_batch(101, published=True)

    body = get_json(client, "/api/v1/runways/", page_size=500)
    huge = get_json(client, "/api/v1/runways/", page_size="9" * 40)

    assert len(body["results"]) == 100
    assert len(huge["results"]) == 100
    assert body["next"].endswith("page=2&page_size=500")


def test_a_page_past_the_last_is_a_404(client):
    RunwayFactory.create_batch(3, published=True)

    assert get_json(client, "/api/v1/runways/", page=2, page_size=3, status=404)["code"] == (
        "not_found"
    )
    get_json(client, "/api/v1/runways/", page="9" * 40, status=404)


def test_an_empty_list_has_one_empty_page(client):
    body = get_json(client, "/api/v1/street-snaps/")

    assert body == {"count": 0, "next": None, "previous": None, "results": []}


# --- brands and the home page ------------------------------------------------------------------


def test_brands_are_those_with_published_runways_by_name_with_counts(client, at):
    zeta = BrandFactory(name="Zeta")
    alpha = BrandFactory(name="Alpha")
    BrandFactory(name="Nothing yet")
    RunwayFactory(brand=zeta, published=True, published_at=at(1))
    RunwayFactory(brand=zeta, published=True, published_at=at(5))
    RunwayFactory(brand=zeta)  # pending
    RunwayFactory(brand=alpha, published=True, published_at=at(2))

    results = get_json(client, "/api/v1/brands/")["results"]

    assert [set(b) for b in results] == [BRAND_KEYS, BRAND_KEYS]
    assert [(b["name"], b["runway_count"]) for b in results] == [("Alpha", 1), ("Zeta", 2)]
    assert results[1]["latest_published_at"].replace("Z", "+00:00") == at(5).isoformat()


def test_brand_detail_lists_its_published_runways_newest_first(client, at):
    brand = BrandFactory(slug="acme")
    old = RunwayFactory(brand=brand, published=True, published_at=at(1))
    new = RunwayFactory(brand=brand, published=True, published_at=at(2), images=1)
    RunwayFactory(brand=brand, status="rejected")
    RunwayFactory(published=True)  # another brand
    cover = new.cover

    shown = get_json(client, "/api/v1/brands/acme/")

    assert set(shown) == BRAND_KEYS | {"runways"}
    assert shown["runway_count"] == 2
    assert ids(shown["runways"]) == [new.pk, old.pk]
    assert set(shown["runways"][0]) == RUNWAY_KEYS
    assert shown["runways"][0]["cover"]["id"] == cover.pk


@pytest.mark.parametrize("slug", ["a.p.c", "comme-des-garçons", "maison margiela"])
def test_a_brand_listed_is_a_brand_that_opens_whatever_its_slug(client, slug):
    # Legacy slugs were never checked against Django's slug pattern; the brand list shows
    # them, so the brand page must open them too.
    RunwayFactory(brand=BrandFactory(slug=slug), published=True)
    (listed,) = get_json(client, "/api/v1/brands/")["results"]

    shown = get_json(client, f"/api/v1/brands/{quote(listed['slug'])}/")

    assert shown["slug"] == slug
    assert shown["runway_count"] == 1


def test_unknown_brand_slug_is_a_404(client):
    get_json(client, "/api/v1/brands/nobody/", status=404)
    get_json(client, "/api/v1/brands/not%20a%20slug/", status=404)


def test_the_home_page_has_the_latest_albums_and_featured_brands(client, at):
    runways = [RunwayFactory(published=True, published_at=at(n)) for n in range(14)]
    snaps = [StreetSnapFactory(published=True, published_at=at(n)) for n in range(13)]
    RunwayFactory()  # pending, newest of all
    featured = BrandFactory(name="Featured", is_featured=True)
    RunwayFactory(brand=featured, published=True, published_at=at(-1))
    BrandFactory(name="Featured but empty", is_featured=True)

    home = get_json(client, "/api/v1/index/")

    assert set(home) == {"latest_runways", "latest_street_snaps", "featured_brands"}
    assert ids(home["latest_runways"]) == [r.pk for r in reversed(runways)][:12]
    assert ids(home["latest_street_snaps"]) == [s.pk for s in reversed(snaps)][:12]
    assert [b["slug"] for b in home["featured_brands"]] == [featured.slug]


# --- query counts ------------------------------------------------------------------------------


def album(images: int):
    return RunwayFactory(published=True, images=images)


def street_album(mains: int):
    """Each main image with two details."""
    return StreetSnapFactory(published=True, images="Mdd" * mains)


@pytest.mark.parametrize("page_size", [2, 40])
def test_list_query_count_does_not_grow_with_page_size(
    client, django_assert_num_queries, page_size
):
    for _ in range(41):
        album(1)  # each of a brand of its own
        street_album(1)

    # The page, its covers (one query for the page) and the count; brands have no covers.
    # The brand's slug and name come with the runway row.
    for url, expected in [
        ("/api/v1/runways/", 3),
        ("/api/v1/street-snaps/", 3),
        ("/api/v1/brands/", 2),
    ]:
        with django_assert_num_queries(expected):
            body = get_json(client, url, page_size=page_size)
        assert len(body["results"]) == page_size
        assert body["count"] == 41
        assert all(item.get("cover", True) for item in body["results"])


def test_the_last_page_needs_no_count(client, django_assert_num_queries):
    for _ in range(5):
        album(1)

    # The page and its covers: a page that is the last knows how many there are.
    with django_assert_num_queries(2):
        body = get_json(client, "/api/v1/runways/", page_size=2, page=3)
    with django_assert_num_queries(2):
        whole = get_json(client, "/api/v1/runways/", page_size=10)

    assert (body["count"], len(body["results"]), body["next"]) == (5, 1, None)
    assert (whole["count"], len(whole["results"])) == (5, 5)


def test_a_detail_without_images_is_two_queries_too(client, django_assert_num_queries):
    runway = RunwayFactory(published=True)

    with django_assert_num_queries(2):
        body = get_json(client, f"/api/v1/runways/{runway.pk}/")

    assert (body["id"], body["images"], body["looks"], body["cover"]) == (runway.pk, [], [], None)


@pytest.mark.parametrize("size", [1, 30])
def test_detail_query_count_does_not_grow_with_album_size(client, django_assert_num_queries, size):
    runway = album(size)
    snap = street_album(size)
    brand = BrandFactory()
    for _ in range(size):
        RunwayFactory(brand=brand, published=True, images=1)

    # The record with its cover, and its images; a brand, its runways, and their covers.
    with django_assert_num_queries(2):
        assert len(get_json(client, f"/api/v1/runways/{runway.pk}/")["images"]) == size
    with django_assert_num_queries(2):
        assert len(get_json(client, f"/api/v1/street-snaps/{snap.pk}/")["groups"]) == size
    with django_assert_num_queries(3):
        runways = get_json(client, f"/api/v1/brands/{brand.slug}/")["runways"]
    assert len(runways) == size
    assert all(runway["cover"] for runway in runways)


def test_home_page_query_count(client, django_assert_num_queries):
    for _ in range(15):
        album(2)
        street_album(1)
    BrandFactory(is_featured=True)

    # Three lists, and the covers of the two album lists.
    with django_assert_num_queries(5):
        home = get_json(client, "/api/v1/index/")
    assert all(runway["cover"] for runway in home["latest_runways"])


@pytest.mark.postgres
def test_beyond_the_exact_limit_the_count_is_an_estimate_and_pages_still_end(client, monkeypatch):
    # Given more results than the count counts exactly.
    monkeypatch.setattr(pagination, "EXACT_COUNT_LIMIT", 3)
    for n in range(6):
        RunwayFactory(published=True, title=f"Velvet {n}")

    first = get_json(client, "/api/v1/runways/", page_size=2)
    searched = get_json(client, "/api/v1/runways/", page_size=2, q="velvet")
    last = get_json(client, "/api/v1/runways/", page_size=2, page=3)

    # PostgreSQL's estimate, never below what the pages have shown nor the exact limit; the
    # last page knows the count; past it is a 404.
    assert first["count"] >= 4 and searched["count"] >= 4
    assert first["next"] and searched["next"]
    assert (last["count"], last["next"], len(last["results"])) == (6, None, 2)
    get_json(client, "/api/v1/runways/", page_size=2, page=4, status=404)


@pytest.mark.postgres
def test_beyond_the_exact_limit_the_count_reads_no_more_than_the_limit(
    client, monkeypatch, django_assert_num_queries
):
    monkeypatch.setattr(pagination, "EXACT_COUNT_LIMIT", 3)
    for _ in range(6):
        RunwayFactory(published=True)

    # The page (no covers to read), the count up to the limit, then the estimate (EXPLAIN).
    with django_assert_num_queries(3) as captured:
        body = get_json(client, "/api/v1/runways/", page_size=2)

    count, explain = [q["sql"] for q in captured.captured_queries[1:]]
    assert "COUNT(" in count and "LIMIT 4" in count
    assert explain.startswith("EXPLAIN")
    assert body["count"] >= 4
