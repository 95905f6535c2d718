"""The leak-proof guarantee, as a property: over random sets of records and images in every
status and deletion state, every list and detail endpoint shows exactly the published, live
records whose bytes are public and the live images of those records; anything else is a 404.
Search, facet counts and similar images likewise: every image here has the same perceptual
hash (a third of them a legacy one, never compared), so each public image's similar images
are exactly the public images of other albums with a comparable hash.

The expectation is computed here from the base tables, independently of the views."""

from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from catalog.models import Runway, RunwayImage, StreetSnap, StreetSnapImage
from tests.factories import (
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)
from tests.support import rollback_each_example

pytestmark = pytest.mark.django_db

PHASH = 0x1234_5678_9ABC_DEF0


def hash_fields(sort_order: int) -> dict:
    # Derived from the drawn sort order, so the strategies stay as they are.
    legacy = sort_order == 2
    return {"phash": PHASH, "phash_algorithm": "legacy" if legacy else "phash-draft128-v1"}


STATUSES = st.sampled_from(["pending", "published", "rejected"])
# Unpublished records may keep the date of an earlier publication; legacy ones may have none.
PUBLISHED_AT = st.none() | st.integers(0, 5)
COVER = st.none() | st.integers(0, 5) | st.just("foreign")
# Few values, so equal sort orders (ordered by id) come up often.
SORT_ORDER = st.integers(0, 2)

runway_images = st.lists(
    st.fixed_dictionaries(
        {"deleted": st.booleans(), "look_index": st.integers(0, 3), "sort_order": SORT_ORDER}
    ),
    max_size=4,
)
# parent: the index of an earlier image of the album (a main, a detail, maybe deleted), or an
# image of another album, or none.
street_images = st.lists(
    st.fixed_dictionaries(
        {
            "deleted": st.booleans(),
            "parent": st.none() | st.integers(0, 3) | st.just("foreign"),
            "sort_order": SORT_ORDER,
        }
    ),
    max_size=4,
)
record = {
    "status": STATUSES,
    "deleted": st.booleans(),
    # Whether its bytes were made public (catalog.visibility): a published record shows only then.
    "bytes_public": st.booleans(),
    "published_at": PUBLISHED_AT,
    "cover": COVER,
}
runways = st.lists(
    st.fixed_dictionaries({**record, "brand": st.integers(0, 2), "images": runway_images}),
    max_size=4,
)
snaps = st.lists(st.fixed_dictionaries({**record, "images": street_images}), max_size=4)


def build(runway_specs, snap_specs):
    now = timezone.now()
    brands = [BrandFactory(is_featured=n != 1) for n in range(3)]
    foreign_runway_image = RunwayImageFactory(runway=RunwayFactory(published=True))
    foreign_snap_image = StreetSnapImageFactory(street_snap=StreetSnapFactory(published=True))

    def record_fields(spec):
        minutes = spec["published_at"]
        return {
            "status": spec["status"],
            "deleted_at": now if spec["deleted"] else None,
            "published_at": None if minutes is None else now - timedelta(minutes=minutes),
            "bytes_public": spec["bytes_public"],
        }

    def cover(spec, images, foreign):
        if spec["cover"] == "foreign":
            return foreign
        if spec["cover"] is None or spec["cover"] >= len(images):
            return None
        return images[spec["cover"]]

    for spec in runway_specs:
        runway = RunwayFactory(brand=brands[spec["brand"]], **record_fields(spec))
        images = [
            RunwayImageFactory(
                runway=runway,
                look_index=image["look_index"],
                sort_order=image["sort_order"],
                deleted_at=now if image["deleted"] else None,
                **hash_fields(image["sort_order"]),
            )
            for image in spec["images"]
        ]
        Runway.objects.filter(pk=runway.pk).update(cover=cover(spec, images, foreign_runway_image))

    for spec in snap_specs:
        snap = StreetSnapFactory(**record_fields(spec))
        images = []
        for image in spec["images"]:
            parent = image["parent"]
            if parent == "foreign":
                parent = foreign_snap_image
            elif parent is not None:
                parent = images[parent] if parent < len(images) else None
            images.append(
                StreetSnapImageFactory(
                    street_snap=snap,
                    parent=parent,
                    sort_order=image["sort_order"],
                    deleted_at=now if image["deleted"] else None,
                    **hash_fields(image["sort_order"]),
                )
            )
        StreetSnap.objects.filter(pk=snap.pk).update(cover=cover(spec, images, foreign_snap_image))
    return brands


# --- what the base tables say is public ---------------------------------------------------------


def newest_first(records):
    # published_at descending with undated records last, then id descending.
    def key(record):
        at = record.published_at
        return (at is None, -at.timestamp() if at else 0, -record.pk)

    return sorted(records, key=key)


def expected(model, image_model, fk: str):
    """The published live records, newest first, and each one's live images in order."""
    public = newest_first(
        model.objects.filter(status="published", deleted_at=None, bytes_public=True)
    )
    images = {
        record.pk: list(
            image_model.objects.filter(**{fk: record}, deleted_at=None).order_by("sort_order", "id")
        )
        for record in public
    }
    return public, images


def shown_parent(image, album):
    """The parent the page shows: only a live main image of the same album."""
    parent = next((p for p in album if p.pk == image.parent_id), None)
    return parent.pk if parent is not None and not parent.is_detail else None


def expected_cover(record, images):
    return record.cover_id if record.cover_id in {i.pk for i in images} else None


# --- the property ---------------------------------------------------------------------------------


def get(client, url, **params):
    response = client.get(url, params)
    assert response.status_code in (200, 404), (url, response.content)
    return response


# Where a detail names its images by id rather than showing them (looks and groups).
IMAGE_REFERENCES = {"images", "main", "details"}


def image_ids_in(value) -> set[int]:
    """Every image id in a response body: any object with a url is an image, and looks and
    groups name images by id."""
    found = set()
    if isinstance(value, dict):
        if "url" in value:
            found.add(value["id"])
        for name, item in value.items():
            if name in IMAGE_REFERENCES and isinstance(item, int):
                found.add(item)
            elif name in IMAGE_REFERENCES and all(isinstance(i, int) for i in item):
                found |= set(item)
            else:
                found |= image_ids_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= image_ids_in(item)
    return found


def key_image(key):
    kind, pk = key
    return (RunwayImage if kind == "runway" else StreetSnapImage).objects.get(pk=pk)


def ids(items):
    return [item["id"] for item in items]


def list_and_details(client, path: str, model, public, images):
    """Check the list (exactly the public records, newest first, with their covers) and every
    record's detail (404 unless public; its live images in order; its cover). Returns the
    list's body and (detail body, expected images) per public record."""
    listed = get(client, f"/api/v1/{path}/", page_size=100).json()
    assert ids(listed["results"]) == [r.pk for r in public]
    for item, record in zip(listed["results"], public, strict=True):
        assert (item["cover"] or {}).get("id") == expected_cover(record, images[record.pk])
    details = []
    for record in model.objects.all():
        response = get(client, f"/api/v1/{path}/{record.pk}/")
        if record.pk not in images:
            assert response.status_code == 404
            continue
        body = response.json()
        album = images[record.pk]
        assert ids(body["images"]) == [i.pk for i in album]
        assert (body["cover"] or {}).get("id") == expected_cover(record, album)
        details.append((body, album))
    return listed, details


@given(runway_specs=runways, snap_specs=snaps)
def test_every_endpoint_shows_exactly_the_published_live_records_and_images(
    client, runway_specs, snap_specs
):
    with rollback_each_example():
        brands = build(runway_specs, snap_specs)
        public_runways, runway_images = expected(Runway, RunwayImage, "runway")
        public_snaps, snap_images = expected(StreetSnap, StreetSnapImage, "street_snap")
        public_image_ids = {i.pk for album in runway_images.values() for i in album} | {
            i.pk for album in snap_images.values() for i in album
        }
        seen_images: set[int] = set()

        # Runways: the list, then every runway's detail, public or not, with looks.
        listed, details = list_and_details(client, "runways", Runway, public_runways, runway_images)
        seen_images |= image_ids_in(listed)
        for body, album in details:
            seen_images |= image_ids_in(body)
            assert [(look["look_index"], look["images"]) for look in body["looks"]] == [
                (index, [i.pk for i in album if i.look_index == index])
                for index in sorted({i.look_index for i in album})
            ]

        # Street snaps, likewise, with groups.
        listed, details = list_and_details(
            client, "street-snaps", StreetSnap, public_snaps, snap_images
        )
        seen_images |= image_ids_in(listed)
        for body, album in details:
            seen_images |= image_ids_in(body)
            parents = {i.pk: shown_parent(i, album) for i in album}
            assert {i["id"]: (i["parent"], i["is_detail"]) for i in body["images"]} == {
                pk: (parent, parent is not None) for pk, parent in parents.items()
            }
            assert [(g["main"], g["details"]) for g in body["groups"]] == [
                (pk, [d for d, p in parents.items() if p == pk])
                for pk, parent in parents.items()
                if parent is None
            ]

        # Brands: exactly those with a public runway, with its runways.
        counts: dict[str, int] = {}
        for runway in public_runways:
            counts[runway.brand.slug] = counts.get(runway.brand.slug, 0) + 1
        listed = get(client, "/api/v1/brands/", page_size=100).json()
        assert {b["slug"]: b["runway_count"] for b in listed["results"]} == counts
        for brand in brands:
            response = get(client, f"/api/v1/brands/{brand.slug}/")
            if brand.slug not in counts:
                assert response.status_code == 404
                continue
            body = response.json()
            seen_images |= image_ids_in(body)
            assert ids(body["runways"]) == [r.pk for r in public_runways if r.brand_id == brand.pk]

        # The home page.
        home = get(client, "/api/v1/index/").json()
        seen_images |= image_ids_in(home)
        assert ids(home["latest_runways"]) == [r.pk for r in public_runways][:12]
        assert ids(home["latest_street_snaps"]) == [s.pk for s in public_snaps][:12]
        assert [b["slug"] for b in home["featured_brands"]] == sorted(
            (b.slug for b in brands if b.is_featured and b.slug in counts),
            key=lambda slug: next(b.name for b in brands if b.slug == slug),
        )

        # Search (every factory title holds its kind's word) and facet counts.
        found = get(client, "/api/v1/runways/", q="runway", page_size=100).json()
        assert ids(found["results"]) == [r.pk for r in public_runways]
        found = get(client, "/api/v1/street-snaps/", q="street", page_size=100).json()
        assert ids(found["results"]) == [s.pk for s in public_snaps]
        facets = get(client, "/api/v1/runways/facets/", q="runway").json()
        assert facets["count"] == len(public_runways)
        assert {b["value"]: b["count"] for b in facets["facets"]["brand"]} == counts
        facets = get(client, "/api/v1/street-snaps/facets/").json()
        assert facets["count"] == len(public_snaps)
        assert sum(c["count"] for c in facets["facets"]["city"]) == len(public_snaps)

        # Similar images of every image, public or not.
        public_keys = {
            (kind, i.pk): record
            for kind, albums in (("runway", runway_images), ("street", snap_images))
            for record, album in albums.items()
            for i in album
        }
        # Legacy hashes, and the unhashed images build() adds, are never compared.
        legacy = {key for key in public_keys if key_image(key).phash_algorithm in ("legacy", "")}
        for kind, path, model in (
            ("runway", "runway-images", RunwayImage),
            ("street", "street-snap-images", StreetSnapImage),
        ):
            for image in model.objects.all():
                response = get(client, f"/api/v1/{path}/{image.pk}/similar/")
                key = (kind, image.pk)
                if key not in public_keys:
                    assert response.status_code == 404
                    continue
                results = response.json()["results"]
                seen_images |= image_ids_in(results)
                others = set()
                if key not in legacy:
                    others = {
                        other
                        for other, record in public_keys.items()
                        if other not in legacy
                        and not (other[0] == kind and record == public_keys[key])
                    }
                got = {(r["kind"], r["image"]["id"]) for r in results}
                assert got <= others
                assert len(got) == min(len(others), 24)

        # Not one image of anything else, anywhere.
        assert seen_images <= public_image_ids
