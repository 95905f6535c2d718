"""Near-duplicate lookup at archive scale: the indexed band lookup against a full scan.

Creates a throwaway PostgreSQL database, migrates it with the project's own migrations (so the
table, its generated band columns and their partial indexes are exactly production's), fills
`brand_runway_images` with N rows of random 64-bit hashes in one INSERT ... SELECT
generate_series, and then, for the same query hashes, times

- band:  catalog.selectors.image_near_duplicate_candidates (what the worker runs: four partial
         band indexes, BitmapOr), plus the exact Hamming check of the candidates in Python;
- scan:  the obvious query, `bit_count((phash # q)::bit(64)) <= d` over every live row.

Half of the query hashes are random, half are stored hashes with up to d bits flipped (so
there are real matches to find); both methods must return the same matches. Prints medians,
the ratio, candidate counts and both query plans. The database is dropped at the end.

Run: .venv/bin/python bench/dup_lookup.py [rows] [queries]
     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres, is where the
     throwaway database is created from.)
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ADMIN_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
QUERIES = int(sys.argv[2]) if len(sys.argv) > 2 else 40


def with_db(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def libpq(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


def main() -> None:
    name = f"bench_dup_lookup_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq(ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        run(with_db(ADMIN_URL, name))
    finally:
        with psycopg.connect(libpq(ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from catalog import selectors
    from catalog.models import Brand, Runway, RunwayImage
    from ingest.hashing import PHASH_ALGORITHM, band_probes, hamming, to_signed64, to_unsigned64

    distance = settings.INGEST_DUPLICATE_MAX_DISTANCE
    call_command("migrate", verbosity=0)
    brand = Brand.objects.create(name="Bench", slug="bench")
    runway = Runway.objects.create(brand=brand, season_code="B1", collection_type="bench")

    started = time.perf_counter()
    with connection.cursor() as cursor:
        # md5 of the row number gives well-spread 64-bit values, fast, without Python.
        cursor.execute(
            """
            INSERT INTO brand_runway_images
                (runway_id, storage_key, sha1, width, height, byte_size, mime_type,
                 original_url, sort_order, phash, phash_algorithm, is_duplicate, look_index,
                 created_at)
            SELECT %s, 'images/' || g, '', 0, 0, 0, 'image/jpeg', '', g,
                   ('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint, %s, false, 0, now()
            FROM generate_series(1, %s) AS g
            """,
            [runway.pk, PHASH_ALGORITHM, ROWS],
        )
        # About 1% soft-deleted, as in a living archive (the partial indexes skip them).
        cursor.execute("UPDATE brand_runway_images SET deleted_at = now() WHERE id % 97 = 0")
        cursor.execute("ANALYZE brand_runway_images")
        cursor.execute("SELECT pg_size_pretty(pg_total_relation_size('brand_runway_images'))")
        size = cursor.fetchone()[0]
    fill = time.perf_counter() - started

    rng = random.Random(17)
    picks = [rng.randint(1, ROWS) for _ in range(QUERIES)]
    stored = list(RunwayImage.objects.live().filter(pk__in=picks).values_list("phash", flat=True))[
        : QUERIES // 2
    ]
    queries = []
    for phash in stored:
        u = to_unsigned64(phash)
        for bit in rng.sample(range(64), rng.randint(0, distance)):
            u ^= 1 << bit
        queries.append(u)
    queries += [rng.getrandbits(64) for _ in range(QUERIES - len(queries))]
    rng.shuffle(queries)

    scan_sql = (
        "SELECT id, phash FROM brand_runway_images WHERE deleted_at IS NULL"
        " AND bit_count((phash # %s)::bit(64)) <= %s"
    )

    def band(u: int) -> tuple[set[int], int]:
        candidates = selectors.image_near_duplicate_candidates(
            image_model=RunwayImage, probes=band_probes(u, distance)
        )
        return {i for i, p, _ in candidates if hamming(p, u) <= distance}, len(candidates)

    def scan(u: int) -> set[int]:
        with connection.cursor() as cursor:
            cursor.execute(scan_sql, [to_signed64(u), distance])
            return {row[0] for row in cursor.fetchall()}

    methods = {
        "band": band,  # what the worker runs
        "scan": lambda u: (scan(u), None),
    }
    for method in methods.values():  # warm the caches the same way for all
        method(queries[0])
    times: dict[str, list[float]] = {name: [] for name in methods}
    candidates, matches = [], []
    for u in queries:  # interleaved, so drift hits every method alike
        found = {}
        for name, method in methods.items():
            t0 = time.perf_counter()
            found[name], n_candidates = method(u)
            times[name].append((time.perf_counter() - t0) * 1000)
            if name == "band":
                candidates.append(n_candidates)
        if found["band"] != found["scan"]:
            raise SystemExit(f"the methods disagree for {u:016x}: {found}")
        matches.append(len(found["scan"]))

    with connection.cursor() as cursor:
        probe = queries[0]
        with CaptureQueriesContext(connection) as captured:
            band(probe)
        band_sql = captured.captured_queries[-1]["sql"]
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + band_sql)
        band_plan = "\n".join(r[0] for r in cursor.fetchall())
        cursor.execute(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + scan_sql, [to_signed64(probe), distance]
        )
        scan_plan = "\n".join(r[0] for r in cursor.fetchall())
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]

    live = RunwayImage.objects.live().count()
    print(
        f"PostgreSQL {version}; {ROWS:,} rows ({live:,} live), table + indexes {size}, "
        f"filled in {fill:.1f}s; d = {distance}; {len(queries)} queries "
        f"({len(stored)} near stored hashes, {len(queries) - len(stored)} random); "
        "wall time per query from Python, ORM included"
    )
    print(f"{'method':<10}{'median ms':>11}{'p90 ms':>9}{'max ms':>9}")
    for name, values in times.items():
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"{name:<10}{statistics.median(values):>11.2f}{p90:>9.2f}{max(values):>9.2f}")
    ratio = statistics.median(times["scan"]) / statistics.median(times["band"])
    print(f"speed-up scan/band (medians): {ratio:.0f}x")
    print(
        f"band candidate rows per query: median {statistics.median(candidates):.0f}, "
        f"max {max(candidates)} (of {live:,} live rows); "
        f"true matches: median {statistics.median(matches):.0f}, max {max(matches)}; "
        "both methods found the same matches for every query"
    )
    print("\nband lookup plan (one query):\n" + band_plan)
    print("\nfull scan plan (one query):\n" + scan_plan)


if __name__ == "__main__":
    main()
