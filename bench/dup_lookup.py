"""Near-duplicate lookup at archive scale: the indexed band lookup against a full scan.

Creates a throwaway PostgreSQL database, migrates it with the project's own migrations (so the
table, its generated band columns and their partial indexes are exactly production's), fills
`brand_runway_images` with N rows of random 64-bit hashes of ours and L rows of the legacy
archive's (`phash_algorithm = 'legacy'`, never compared with ours) in INSERT ... SELECT
generate_series, and then, for the same query hashes, times

- band:      catalog.selectors.image_near_duplicate_candidates (what the worker runs: four
             partial band indexes that hold only comparable hashes, BitmapOr), plus the exact
             Hamming check of the candidates in Python;
- band-live: the lookup as it was before legacy rows were left out of the indexes: the same
             bands on indexes of every live row, the algorithm checked in Python (those
             indexes are built for the bench beside production's);
- scan:      the obvious query, `bit_count((phash # q)::bit(64)) <= d` over every live row.

Half of the query hashes are random, half are stored hashes with up to d bits flipped (so
there are real matches to find); all methods must return the same matches. Prints medians,
the ratios, candidate counts and the query plans. The database is dropped at the end.

Run: .venv/bin/python bench/dup_lookup.py [rows] [queries] [legacy rows]
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
LEGACY_ROWS = int(sys.argv[3]) if len(sys.argv) > 3 else ROWS


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
    from django.db.models import Q
    from django.test.utils import CaptureQueriesContext

    from catalog import selectors
    from catalog.models import LEGACY_PHASH_ALGORITHM, Brand, Runway, RunwayImage
    from ingest.hashing import PHASH_ALGORITHM, band_probes, hamming, to_signed64, to_unsigned64

    distance = settings.INGEST_DUPLICATE_MAX_DISTANCE
    call_command("migrate", verbosity=0)
    brand = Brand.objects.create(name="Bench", slug="bench")
    runway = Runway.objects.create(brand=brand, season_code="B1", collection_type="bench")

    started = time.perf_counter()
    with connection.cursor() as cursor:
        # md5 of the row number gives well-spread 64-bit values, fast, without Python.
        for algorithm, first, last in (
            (PHASH_ALGORITHM, 1, ROWS),
            (LEGACY_PHASH_ALGORITHM, ROWS + 1, ROWS + LEGACY_ROWS),
        ):
            cursor.execute(
                """
                INSERT INTO brand_runway_images
                    (runway_id, storage_key, sha1, width, height, byte_size, mime_type,
                     original_url, sort_order, phash, phash_algorithm, is_duplicate,
                     look_index, created_at)
                SELECT %s, 'images/' || g, '', 0, 0, 0, 'image/jpeg', '', g,
                       ('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint, %s, false, 0,
                       now()
                FROM generate_series(%s, %s) AS g
                """,
                [runway.pk, algorithm, first, last],
            )
        # About 1% soft-deleted, as in a living archive (the partial indexes skip them).
        cursor.execute("UPDATE brand_runway_images SET deleted_at = now() WHERE id % 97 = 0")
        # The indexes as they were before legacy rows were left out, for band-live. Both sets
        # are built from the filled table, so their sizes compare (grown row by row, as
        # production's are during the fill, a B-tree is looser).
        for n in range(4):
            cursor.execute(
                f"CREATE INDEX bench_band{n}_every_live ON brand_runway_images (phash_band{n})"
                " WHERE deleted_at IS NULL"
            )
            cursor.execute(f"REINDEX INDEX runway_image_band{n}_live")
        cursor.execute("ANALYZE brand_runway_images")
        cursor.execute(
            "SELECT pg_size_pretty(sum(pg_relation_size(c.oid))) FROM pg_class c"
            " WHERE relname LIKE 'runway_image_band%%_live'"
        )
        band_size = cursor.fetchone()[0]
        cursor.execute(
            "SELECT pg_size_pretty(sum(pg_relation_size(c.oid))) FROM pg_class c"
            " WHERE relname LIKE 'bench_band%%_every_live'"
        )
        band_live_size = cursor.fetchone()[0]
        cursor.execute("SELECT pg_size_pretty(pg_total_relation_size('brand_runway_images'))")
        size = cursor.fetchone()[0]
    fill = time.perf_counter() - started

    rng = random.Random(17)
    picks = [rng.randint(1, ROWS) for _ in range(QUERIES)]
    stored = list(
        RunwayImage.objects.live()
        .filter(pk__in=picks, phash_algorithm=PHASH_ALGORITHM)
        .values_list("phash", flat=True)
    )[: QUERIES // 2]
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
        " AND phash_algorithm = %s AND bit_count((phash # %s)::bit(64)) <= %s"
    )

    def band(u: int) -> tuple[set[int], int]:
        candidates = selectors.image_near_duplicate_candidates(
            image_model=RunwayImage,
            probes=band_probes(u, distance),
            phash_algorithm=PHASH_ALGORITHM,
            phash=u,
            max_distance=distance,
        )
        return {i for i, p in candidates if hamming(p, u) <= distance}, len(candidates)

    def band_live(u: int) -> tuple[set[int], int]:
        # The lookup before: no algorithm in the query (so only the every-live-row indexes
        # answer it), each candidate's algorithm checked in Python.
        match = Q()
        for n, values in enumerate(band_probes(u, distance)):
            match |= Q(**{f"phash_band{n}__in": values})
        candidates = list(
            RunwayImage.objects.live()
            .filter(match, runway__deleted_at=None)
            .values_list("id", "phash", "phash_algorithm")
        )
        found = {
            i
            for i, p, algorithm in candidates
            if algorithm == PHASH_ALGORITHM and hamming(p, u) <= distance
        }
        return found, len(candidates)

    def scan(u: int) -> set[int]:
        with connection.cursor() as cursor:
            cursor.execute(scan_sql, [PHASH_ALGORITHM, to_signed64(u), distance])
            return {row[0] for row in cursor.fetchall()}

    methods = {
        "band": band,  # what the worker runs
        "band-live": band_live,
        "scan": lambda u: (scan(u), None),
    }
    for method in methods.values():  # warm the caches the same way for all
        method(queries[0])
    times: dict[str, list[float]] = {name: [] for name in methods}
    candidates: dict[str, list[int]] = {"band": [], "band-live": []}
    matches = []
    for u in queries:  # interleaved, so drift hits every method alike
        found = {}
        for name, method in methods.items():
            t0 = time.perf_counter()
            found[name], n_candidates = method(u)
            times[name].append((time.perf_counter() - t0) * 1000)
            if name in candidates:
                candidates[name].append(n_candidates)
        if not found["band"] == found["band-live"] == found["scan"]:
            raise SystemExit(f"the methods disagree for {u:016x}: {found}")
        matches.append(len(found["scan"]))

    with connection.cursor() as cursor:
        probe = queries[0]
        plans = {}
        for name in ("band", "band-live"):
            with CaptureQueriesContext(connection) as captured:
                methods[name](probe)
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + captured[-1]["sql"])
            plans[name] = "\n".join(r[0] for r in cursor.fetchall())
        cursor.execute(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + scan_sql,
            [PHASH_ALGORITHM, to_signed64(probe), distance],
        )
        plans["scan"] = "\n".join(r[0] for r in cursor.fetchall())
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]

    live = RunwayImage.objects.live().count()
    ours = RunwayImage.objects.live().filter(phash_algorithm=PHASH_ALGORITHM).count()
    print(
        f"PostgreSQL {version}; {ROWS:,} rows of ours and {LEGACY_ROWS:,} legacy "
        f"({live:,} live, {ours:,} of them ours), table + indexes {size}, "
        f"filled in {fill:.1f}s; d = {distance}; {len(queries)} queries "
        f"({len(stored)} near stored hashes, {len(queries) - len(stored)} random); "
        "wall time per query from Python, ORM included"
    )
    print(f"four band indexes: {band_size} (comparable hashes), {band_live_size} (every live row)")
    print(f"{'method':<11}{'median ms':>11}{'p90 ms':>9}{'max ms':>9}")
    for name, values in times.items():
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"{name:<11}{statistics.median(values):>11.2f}{p90:>9.2f}{max(values):>9.2f}")
    band_median = statistics.median(times["band"])
    for other in ("band-live", "scan"):
        ratio = statistics.median(times[other]) / band_median
        print(f"{other}/band (medians): {ratio:.1f}x")
    for name, counts in candidates.items():
        print(
            f"{name} candidate rows per query: median {statistics.median(counts):.0f}, "
            f"max {max(counts)} (of {live:,} live rows)"
        )
    print(
        f"true matches: median {statistics.median(matches):.0f}, max {max(matches)}; "
        "all methods found the same matches for every query"
    )
    for name, plan in plans.items():
        print(f"\n{name} plan (one query):\n{plan}")


if __name__ == "__main__":
    main()
