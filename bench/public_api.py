"""How fast are the public API's pages on a large archive, and what did its choices buy?

Builds a throwaway archive (BENCH_RUNWAYS published-ish runways with BENCH_IMAGES images
each, a tenth pending and a tenth rejected, 1 brand per 25 runways) in a database of its own,
then prints medians of whole requests through Django (test client: routing, serialization,
ETag) and, side by side, the two ways of fetching a list's covers:

- joined into the page query (select_related), which PostgreSQL answers by joining every
  public image before sorting and cutting the page;
- fetched after the page by id (prefetch_related), what the API does.

Database: a new database on BENCH_DATABASE_URL's PostgreSQL server (default
postgres://postgres@127.0.0.1:5432/postgres), dropped at the end; BENCH_DATABASE_URL=sqlite
measures a temporary SQLite file instead.

Run: .venv/bin/python bench/public_api.py      (BENCH_RUNWAYS=50000 for a bigger archive)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUNWAYS = int(os.environ.get("BENCH_RUNWAYS", "5000"))
IMAGES = int(os.environ.get("BENCH_IMAGES", "20"))
REPEATS = 9


def choose_database() -> tuple[str, callable]:
    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg

        base, _, _ = url.rpartition("/")
        name = f"bench_publicapi_{uuid.uuid4().hex[:8]}"
        admin = psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True)
        admin.execute(f'CREATE DATABASE "{name}"')

        def drop() -> None:
            from django.db import connections

            connections.close_all()
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            admin.close()

        return f"{base}/{name}", drop
    folder = tempfile.mkdtemp()
    return f"sqlite:///{folder}/bench.sqlite3", lambda: None


def build_archive() -> None:
    from django.db import connection
    from django.utils import timezone

    from catalog.models import Brand, Runway

    now = timezone.now()
    brands = Brand.objects.bulk_create(
        Brand(name=f"Brand {n}", slug=f"brand-{n}", is_featured=n % 20 == 0)
        for n in range(max(RUNWAYS // 25, 1))
    )
    statuses = ["pending", "rejected"] + ["published"] * 8
    Runway.objects.bulk_create(
        (
            Runway(
                brand=brands[n % len(brands)],
                season_code=f"S{n}",
                year=1990 + n % 35,
                collection_type="couture" if n % 3 == 0 else "ready-to-wear",
                title=f"Runway {n}",
                status=statuses[n % 10],
                published_at=now - timezone.timedelta(minutes=n),
                image_count=IMAGES,
            )
            for n in range(RUNWAYS)
        ),
        batch_size=2000,
    )
    # Images in plain SQL (the same on both databases): a million ORM objects take minutes.
    numbers = " UNION ALL ".join(f"SELECT {k} AS k" for k in range(IMAGES))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO brand_runway_images (runway_id, storage_key, sha1, width, height,
                byte_size, mime_type, original_url, sort_order, look_index, is_duplicate,
                phash_algorithm, created_at)
            SELECT r.id, 'images/' || r.id || '/' || n.k || '.jpg', '', 800, 1200,
                100000, 'image/jpeg', '', n.k, n.k + 1, FALSE, '', CURRENT_TIMESTAMP
            FROM brand_runways r CROSS JOIN ({numbers}) n
            """  # noqa: S608 - numbers are ours
        )
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")  # or the planner scans every image for every runway
        cursor.execute(
            """
            UPDATE brand_runways SET cover_id = (
                SELECT i.id FROM brand_runway_images i
                WHERE i.runway_id = brand_runways.id AND i.sort_order = 0
            )
            """
        )
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")


def median_ms(action) -> float:
    action()  # warm caches
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    url, drop = choose_database()
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("PUBLIC_API_THROTTLE_RATE", "1000000/min")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    import django

    django.setup()
    try:
        run()
    finally:
        drop()


def run() -> None:
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from publicapi.models import PublicRunway
    from publicapi.views import NEWEST_FIRST

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    build_archive()
    public = PublicRunway.objects.count()
    print(
        f"{connection.vendor}: {RUNWAYS} runways ({public} public), {RUNWAYS * IMAGES} images, "
        f"built in {time.perf_counter() - started:.0f} s; median of {REPEATS}"
    )

    last_page = (public + 19) // 20
    newest = PublicRunway.objects.order_by(*NEWEST_FIRST)
    print("\nList covers, page query alone:")
    for page in (1, last_page):
        window = slice((page - 1) * 20, page * 20)
        joined = median_ms(lambda w=window: list(newest.select_related("cover")[w]))
        fetched = median_ms(lambda w=window: list(newest.prefetch_related("cover")[w]))
        print(
            f"  page {page:>5}: joined {joined:8.1f} ms   fetched after {fetched:8.1f} ms   "
            f"ratio {joined / fetched:6.1f}x"
        )

    client = Client(HTTP_HOST="localhost")
    detail = f"/api/v1/runways/{newest.first().pk}/"
    brand = PublicRunway.objects.values_list("brand_slug", flat=True).first()
    print("\nWhole requests:")
    for label, path in [
        ("runways, page 1", "/api/v1/runways/"),
        ("runways, page size 100", "/api/v1/runways/?page_size=100"),
        (f"runways, last page ({last_page})", f"/api/v1/runways/?page={last_page}"),
        ("runways of one brand", f"/api/v1/runways/?brand={brand}"),
        (f"runway detail ({IMAGES} images)", detail),
        ("brands, page 1", "/api/v1/brands/"),
        ("brand detail", f"/api/v1/brands/{brand}/"),
        ("home page", "/api/v1/index/"),
    ]:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        etag = response["ETag"]
        full = median_ms(lambda p=path: client.get(p))
        revalidated = median_ms(lambda p=path, e=etag: client.get(p, headers={"If-None-Match": e}))
        print(
            f"  {label:<28} 200: {full:7.1f} ms ({len(response.content):>6} bytes)   "
            f"304: {revalidated:7.1f} ms"
        )
    print(
        "\n304s save the bytes, not the queries: the ETag is a hash of the rendered body. "
        "Caches in front (CDN, browser) save the rest for max-age."
    )


if __name__ == "__main__":
    main()
