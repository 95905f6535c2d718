"""The yardstick of bench/public_api.py: a bare Django view per page, raw SQL on the same
public_* views, the same JSON written with json.dumps. No DRF, no throttle, no ETag, no
filters; the same middleware (it is the same project). Mounted at /bare/ beside the API.

It does the database work the API does (the same count rule, the page, the covers; the
record and its images), so the ratio measures what the API costs above it per request."""

import json
import time

from django.core.files.storage import default_storage
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.urls import include, path

from config.urls import urlpatterns as project_urls

IMAGE = (
    "i.id, i.storage_key, i.width, i.height, i.mime_type, i.look_index, i.renditions, "
    "i.placeholder, i.color"
)
RUNWAY = (
    "r.id, r.brand_slug, r.brand_name, r.season_code, r.season, r.year, r.collection_type, "
    "r.title, r.description, r.cover_id, r.image_count, r.published_at"
)


def url(request, key):
    return request.build_absolute_uri(default_storage.url(key))


def image(request, row):
    pk, key, width, height, mime_type, look_index, renditions, placeholder, color = row
    if isinstance(renditions, str):
        renditions = json.loads(renditions)
    sizes = [
        {"width": r["width"], "height": r["height"], "url": url(request, r["key"])}
        for r in sorted(renditions or [], key=lambda r: r["width"])
    ]
    return {
        "id": pk,
        "url": url(request, key),
        "width": width,
        "height": height,
        "mime_type": mime_type,
        "renditions": sizes,
        "srcset": ", ".join(f"{r['url']} {r['width']}w" for r in sizes),
        "placeholder": placeholder or None,
        "color": color or None,
        "look_index": look_index,
    }


def when(value):
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def runway(row, cover):
    pk, slug, name, code, season, year, kind, title, description, _, count, published = row
    return {
        "id": pk,
        "brand": {"slug": slug, "name": name},
        "season_code": code,
        "season": season,
        "year": year,
        "collection_type": kind,
        "title": title,
        "description": description,
        "cover": cover,
        "image_count": count,
        "published_at": when(published),
    }


def respond(body):
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return HttpResponse(text.encode(), content_type="application/json")


# The API's count rule (publicapi.queries): exact up to 1,000, else PostgreSQL's estimate,
# kept a minute. The same statements, so the two sides do the same database work.
EXACT_COUNT_LIMIT = 1000
_estimate: list = []


def count(cursor) -> int:
    cursor.execute(
        "SELECT COUNT(*) FROM (SELECT r.id FROM public_brand_runways r LIMIT %s) counted",
        [EXACT_COUNT_LIMIT + 1],
    )
    (counted,) = cursor.fetchone()
    if counted <= EXACT_COUNT_LIMIT:
        return counted
    if not _estimate or time.monotonic() - _estimate[0] > 60:
        cursor.execute("EXPLAIN (FORMAT JSON) SELECT r.id FROM public_brand_runways r")
        (plan,) = cursor.fetchone()
        plan = json.loads(plan) if isinstance(plan, str) else plan
        _estimate[:] = [time.monotonic(), int(plan[0]["Plan"]["Plan Rows"])]
    return max(_estimate[1], counted)


def runways(request):
    size = 20
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {RUNWAY} FROM public_brand_runways r "  # noqa: S608 - constants
            "ORDER BY r.published_at DESC NULLS LAST, r.id DESC LIMIT %s",
            [size + 1],
        )
        rows = cursor.fetchall()
        more = len(rows) > size
        rows = rows[:size]
        total = count(cursor) if more else len(rows)
        cursor.execute(
            f"SELECT {IMAGE} FROM public_brand_runway_images i WHERE i.id = ANY(%s)",  # noqa: S608
            [[row[9] for row in rows if row[9] is not None]],
        )
        covers = {row[0]: image(request, row) for row in cursor.fetchall()}
    return respond(
        {
            "count": total,
            "next": request.build_absolute_uri("?page=2") if more else None,
            "previous": None,
            "results": [runway(row, covers.get(row[9])) for row in rows],
        }
    )


def runway_detail(request, pk):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {RUNWAY} FROM public_brand_runways r WHERE r.id = %s", [pk])  # noqa: S608
        row = cursor.fetchone()
        if row is None:
            return JsonResponse({"detail": "Not found."}, status=404)
        cursor.execute(
            f"SELECT {IMAGE} FROM public_brand_runway_images i "  # noqa: S608 - constants
            "WHERE i.runway_id = %s ORDER BY i.sort_order, i.id",
            [pk],
        )
        images = [image(request, r) for r in cursor.fetchall()]
    cover = next((i for i in images if i["id"] == row[9]), None)
    looks: dict[int, list] = {}
    for item in images:
        looks.setdefault(item["look_index"], []).append(item["id"])
    return respond(
        {
            **runway(row, cover),
            "images": images,
            "looks": [{"look_index": k, "image_ids": looks[k]} for k in sorted(looks)],
        }
    )


bare = [
    path("runways/", runways),
    path("runways/<int:pk>/", runway_detail),
]
urlpatterns = [path("bare/", include(bare)), *project_urls]
