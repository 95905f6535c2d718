"""The archive at scale: what grows with the number of images, measured at two or more sizes.

For each size (images; default 100,000 and 1,000,000) a throwaway PostgreSQL database is
migrated with the project's own migrations and filled in SQL (bench/public_api_parts/data.py:
runways of 40 images, street albums of 10, a tenth pending and a tenth rejected), the public
store's ledger with a row per public object (original and 400/1200 renditions) and
stored_objects with a row per image; then, in the same process, through Django:

- facets: /api/v1/runways/facets/ and /street-snaps/facets/ with no filter, one, two (p50, p95);
- search: /api/v1/runways/?q= one and two words, and the street list's (p50, p95);
- the list's first page and a detail, for scale;
- the admin's changelists over tables that grow with images: public objects (its first page,
  a search by key), media changes, ingest jobs (ms);
- the outbox: 1,050 brand edits, then an approval: the run that makes it public, and that it
  ends;
- purges: 1,000 albums unpublished one transaction each, then the job, against a counting
  stand-in for Varnish's purge endpoint: requests and bytes per cache;
- the sweep: an incremental run (ms, queries);
- the database's size, and the indexes no query of the run used;

and, after the sizes, near-duplicate lookups (catalog.selectors, what ingest runs) at the
largest size and at HASHES stored hashes (default 5,000,000: extra hash-only image rows).
Each figure is printed with its growth between sizes.

Run: .venv/bin/python bench/scale.py [images ...] [--hashes N] [--repeat N]
     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres, is where the
     throwaway databases are created from.)
"""

# ruff: noqa: S608 - every value in this SQL is the bench's own

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ADMIN_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
RUNWAY_IMAGES = 40
STREET_IMAGES = 10


def with_db(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def libpq(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


class PurgeCounter:
    """Varnish's purge endpoint as config/varnish.vcl answers it, counting requests and bytes."""

    def __init__(self) -> None:
        self.requests = 0
        self.bytes = 0
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_PURGE(self):  # noqa: N802 - the method's name
                counter.requests += 1
                counter.bytes += sum(len(k) + len(v) + 4 for k, v in self.headers.items())
                self.send_response(200)
                self.send_header("X-Purged", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reset(self) -> None:
        self.requests = self.bytes = 0


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--hashes", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--keep", action="store_true", help="keep the databases (printed)")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = with_db(ADMIN_URL, "bench_scale_placeholder")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("PUBLIC_API_THROTTLE_RATE", "1000000/min")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import override_settings

    # The admin's pages without collected static files (the tests' way).
    static = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    override_settings(STORAGES={**settings.STORAGES, "staticfiles": static}).enable()
    # The bench runs the visibility job itself, when it measures it.
    from catalog.visibility import media_changed

    media_changed.disconnect(dispatch_uid="ingest.visibility_enqueue")

    results: dict[int, dict[str, str | float]] = {}
    for size in args.sizes:
        name = f"bench_scale_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(libpq(ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            hashes = args.hashes if size == max(args.sizes) else 0
            results[size] = run(name, size, args, hashes=hashes)
        finally:
            from django.db import connections

            connections.close_all()
            if args.keep:
                print(f"kept: {with_db(ADMIN_URL, name)}")
            else:
                with psycopg.connect(libpq(ADMIN_URL), autocommit=True) as admin:
                    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    print("\n== growth")
    sizes = list(results)
    for key in results[sizes[0]]:
        values = [results[size].get(key) for size in sizes]
        if all(isinstance(v, float) for v in values) and values[0]:
            growth = ", ".join(f"x{v / values[0]:.2f}" for v in values[1:])
            print(f"{key:<52} " + "  ".join(f"{v:>10.2f}" for v in values) + f"   ({growth})")


def run(name: str, size: int, args, *, hashes: int) -> dict[str, str | float]:
    from django.conf import settings
    from django.db import connection, connections

    connections.close_all()
    settings.DATABASES["default"]["NAME"] = name
    connections["default"].settings_dict["NAME"] = name
    from django.core.management import call_command

    from bench.public_api_parts.data import statements

    figures: dict[str, str | float] = {}
    runways = max(size // (RUNWAY_IMAGES + STREET_IMAGES // 5), 10)
    print(f"\n== {size:,} images: {runways:,} runways, {runways // 5:,} street albums")
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for statement in statements(
            runways=runways, runway_images=RUNWAY_IMAGES, street_images=STREET_IMAGES
        ):
            cursor.execute(statement)
        fill_ledgers(cursor)
    connection.close()
    with psycopg.connect(libpq(with_db(ADMIN_URL, name)), autocommit=True) as raw:
        raw.execute("VACUUM ANALYZE")
    print(f"filled in {time.perf_counter() - started:.0f} s")

    figures.update(api(args.repeat))
    figures.update(admin_pages(args.repeat))
    figures.update(outbox())
    figures.update(purges())
    figures.update(sweep())
    figures.update(duplicates(size, 0, args.repeat))
    figures.update(weight())
    if hashes:
        figures.update(duplicates(size, hashes, args.repeat))
    return figures


def fill_ledgers(cursor) -> None:
    """A ledger row per public object (an original and its renditions), a stored_objects row
    per image, and renditions listed on every image, as a living archive has them."""
    for table, fk in (
        ("brand_runway_images", "runway_id"),
        ("street_snap_images", "street_snap_id"),
    ):
        cursor.execute(
            f"""
            UPDATE {table} SET sha1 = md5(id::text) || substr(md5((id + 1)::text), 1, 8),
                renditions = jsonb_build_array(
                    jsonb_build_object('width', 400, 'height', 600, 'key',
                        'renditions/' || id || '/400.webp'),
                    jsonb_build_object('width', 1200, 'height', 1800, 'key',
                        'renditions/' || id || '/1200.webp')),
                rendition_status = 'done'
            """
        )
        cursor.execute(
            f"""
            INSERT INTO stored_objects (key, last_stored_at, preexisting, created_at)
            SELECT storage_key, now(), false, now() FROM {table}
            """
        )
        cursor.execute(
            f"""
            INSERT INTO public_objects (key, sha1, confirmed, pending, failures, error, changed_at)
            SELECT k, CASE WHEN k LIKE 'renditions/%%' THEN i.sha1 ELSE '' END, true, '', 0, '',
                   now() - i.id * interval '1 second'
            FROM {table} i
            JOIN (SELECT id FROM brand_runways WHERE status = 'published'
                  UNION ALL SELECT id FROM street_snaps WHERE status = 'published') r
              ON r.id = i.{fk},
            LATERAL unnest(ARRAY[i.storage_key, 'renditions/' || i.id || '/400.webp',
                                 'renditions/' || i.id || '/1200.webp']) k
            ON CONFLICT DO NOTHING
            """
        )


def timed(function, repeat: int) -> tuple[float, float]:
    function()  # warm
    values = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        function()
        values.append((time.perf_counter() - t0) * 1000)
    return quantiles(values)


def api(repeat: int) -> dict[str, float]:
    from django.core.cache import cache
    from django.test import Client

    from bench.public_api_parts.data import CITIES, TYPES, VOCABULARY
    from catalog.models import Brand, Runway

    client = Client()
    rng = random.Random(30)
    brands = list(Brand.objects.values_list("slug", flat=True)[:200])
    detail_id = Runway.objects.filter(status="published").values_list("pk", flat=True).first()
    cases = {
        "runway facets, no filter": lambda: "/api/v1/runways/facets/",
        "runway facets, brand": lambda: f"/api/v1/runways/facets/?brand={rng.choice(brands)}",
        "runway facets, collection type": lambda: (
            f"/api/v1/runways/facets/?collection_type={rng.choice(TYPES)}"
        ),
        "runway facets, year and collection type": lambda: (
            f"/api/v1/runways/facets/?year={rng.randint(2000, 2030)}"
            f"&collection_type={rng.choice(TYPES)}"
        ),
        "street facets, no filter": lambda: "/api/v1/street-snaps/facets/",
        "street facets, city": lambda: f"/api/v1/street-snaps/facets/?city={rng.choice(CITIES)}",
        "runway search, one word": lambda: f"/api/v1/runways/?q={rng.choice(VOCABULARY)}",
        "runway search, two words": lambda: (
            f"/api/v1/runways/?q={rng.choice(VOCABULARY)}+{rng.choice(VOCABULARY)}"
        ),
        "street search, one word": lambda: f"/api/v1/street-snaps/?q={rng.choice(VOCABULARY)}",
        "runway list, page 1": lambda: "/api/v1/runways/",
        "runway detail": lambda: f"/api/v1/runways/{detail_id}/",
    }
    figures = {}
    print(f"{'request (origin, in process)':<44}{'p50 ms':>9}{'p95 ms':>9}")
    for label, url in cases.items():

        def get(url=url):
            cache.clear()  # the throttle's counters, nothing of the response
            response = client.get(url())
            assert response.status_code == 200, (url(), response.status_code)

        p50, p95 = timed(get, repeat)
        print(f"{label:<44}{p50:>9.1f}{p95:>9.1f}")
        figures[f"{label} p95 ms"] = p95
    return figures


def admin_pages(repeat: int) -> dict[str, float]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from catalog.models import PublicObject

    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "x")
    client = Client()
    client.force_login(user)
    key = PublicObject.objects.values_list("key", flat=True).order_by("pk")[1000]
    pages = {
        "admin public objects": "/admin/catalog/publicobject/",
        "admin public objects, search by key": f"/admin/catalog/publicobject/?q={key}",
        "admin public objects, failing": "/admin/catalog/publicobject/?state=failing",
        "admin media changes": "/admin/catalog/mediachange/",
        "admin ingest jobs": "/admin/ingest/ingestjob/",
        "admin runways": "/admin/catalog/runway/",
    }
    figures = {}
    print(f"{'admin page':<44}{'p50 ms':>9}{'p95 ms':>9}")
    for label, url in pages.items():

        def get(url=url):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)

        p50, p95 = timed(get, max(repeat // 4, 5))
        print(f"{label:<44}{p50:>9.1f}{p95:>9.1f}")
        figures[f"{label} p95 ms"] = p95
    return figures


def outbox() -> dict[str, float]:
    from django.conf import settings

    from catalog.models import Brand, MediaChange, Runway
    from catalog.visibility import media_changes_run
    from review.services import record_approve

    counter = PurgeCounter()
    settings.EDGE_PURGE_BACKEND, settings.EDGE_PURGE_URLS = "http", [counter.url]
    brand = Brand.objects.order_by("pk").first()
    for n in range(1050):
        brand.name = f"Renamed {n}"
        brand.save()
    pending = Runway.objects.filter(status="pending").order_by("pk").first()
    user = _editor()
    record_approve(record=pending, actor=user)
    t0 = time.perf_counter()
    run = media_changes_run()
    seconds = time.perf_counter() - t0
    pending.refresh_from_db()
    left = MediaChange.objects.count()
    print(
        f"outbox: 1,050 brand edits then an approval: one run, {seconds:.2f} s, "
        f"{run.done if run else 0} change(s) done, {left} left; the album public: "
        f"{pending.bytes_public}"
    )
    return {"outbox run after 1,050 brand edits s": seconds}


def purges() -> dict[str, float]:
    from django.conf import settings

    from catalog.models import MediaChange, Runway
    from catalog.visibility import media_changes_run
    from review.services import Action, record_reject

    counter = PurgeCounter()
    settings.EDGE_PURGE_BACKEND, settings.EDGE_PURGE_URLS = "http", [counter.url]
    user = _editor()
    chosen = list(Runway.objects.filter(status="published").order_by("-pk")[:1000])
    t0 = time.perf_counter()
    for runway in chosen:
        record_reject(record=runway, actor=user, reason="bench", action=Action.UNPUBLISH)
    written = time.perf_counter() - t0
    t0 = time.perf_counter()
    media_changes_run()
    ran = time.perf_counter() - t0
    print(
        f"purges: {len(chosen)} albums unpublished ({written:.1f} s), the job {ran:.1f} s: "
        f"{counter.requests} purge request(s), {counter.bytes / 1000:.1f} kB of headers per "
        f"cache; {MediaChange.objects.count()} change(s) left"
    )
    return {"purge requests for 1,000 albums": float(counter.requests)}


def sweep() -> dict[str, float]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from catalog.visibility import media_sweep

    t0 = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        media_sweep()
    ms = (time.perf_counter() - t0) * 1000
    print(f"sweep (incremental): {ms:.0f} ms, {len(queries)} queries")
    return {"incremental sweep ms": ms}


def weight() -> dict[str, float]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        (total,) = cursor.fetchone()
        cursor.execute(
            """
            SELECT s.indexrelname, pg_relation_size(s.indexrelid)
            FROM pg_stat_user_indexes s JOIN pg_index i ON i.indexrelid = s.indexrelid
            WHERE s.idx_scan = 0 AND NOT i.indisprimary AND NOT i.indisunique
              AND pg_relation_size(s.indexrelid) > 1000000
            ORDER BY 2 DESC
            """
        )
        unused = cursor.fetchall()
        cursor.execute(
            """
            SELECT relname, pg_total_relation_size(oid) FROM pg_class
            WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
            ORDER BY 2 DESC LIMIT 8
            """
        )
        tables = cursor.fetchall()
    print(f"database: {total / 1e6:.0f} MB")
    print("  largest tables: " + ", ".join(f"{t} {n / 1e6:.0f} MB" for t, n in tables))
    print(
        "  non-unique indexes no query of this run used: "
        + (", ".join(f"{i} {n / 1e6:.0f} MB" for i, n in unused) or "none")
    )
    return {"database MB": total / 1e6}


def duplicates(size: int, hashes: int, repeat: int) -> dict[str, float]:
    from django.conf import settings
    from django.db import connection

    from catalog import selectors
    from catalog.models import RunwayImage
    from ingest.hashing import PHASH_ALGORITHM, band_probes

    distance = settings.INGEST_DUPLICATE_MAX_DISTANCE
    rng = random.Random(5)
    figures = {}

    def measure(label: str, key: str) -> None:
        queries = iter([rng.getrandbits(64) for _ in range(repeat + 1)])

        def lookup():
            phash = next(queries)
            selectors.image_near_duplicate_candidates(
                image_model=RunwayImage,
                probes=band_probes(phash, distance),
                phash_algorithm="phash-draft128-v1",
                phash=phash,
                max_distance=distance,
            )

        p50, p95 = timed(lookup, repeat)
        print(f"near-duplicate lookup, {label}: median {p50:.2f} ms, p95 {p95:.2f} ms")
        figures[key] = p50

    if not hashes:
        # The same key at every size, so the growth table compares them.
        measure(f"{size:,} images", "near-duplicate lookup median ms")
        return figures
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) FROM brand_runway_images")
        (top,) = cursor.fetchone()
        cursor.execute("SELECT id FROM brand_runways WHERE status = 'pending' LIMIT 1")
        (runway_id,) = cursor.fetchone()
        extra = max(hashes - size, 0)
        cursor.execute(
            f"""
            INSERT INTO brand_runway_images
                (id, runway_id, storage_key, sha1, width, height, byte_size, mime_type,
                 original_url, sort_order, look_index, phash, phash_algorithm, is_duplicate,
                 created_at)
            SELECT {top} + g, {runway_id}, 'images/x/' || g, '', 0, 0, 0, 'image/jpeg', '', g,
                   0, ('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint,
                   'phash-draft128-v1', false, now()
            FROM generate_series(1, {extra}) g
            """
        )
    connection.close()
    url = with_db(ADMIN_URL, connection.settings_dict["NAME"])
    with psycopg.connect(libpq(url), autocommit=True) as raw:
        raw.execute("VACUUM ANALYZE brand_runway_images")
    assert PHASH_ALGORITHM  # the algorithm ingest writes; the bench's rows carry data.py's
    measure(f"{hashes:,} hashes", f"near-duplicate lookup, {hashes:,} hashes, median ms")
    return figures


def _editor():
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    return users.filter(is_superuser=True).first() or users.create_superuser("editor", "", "x")


if __name__ == "__main__":
    main()
