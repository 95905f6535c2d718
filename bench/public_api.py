"""How fast is the public API on a large archive, next to a bare Django view, and what did
each of its choices buy?

The archive (bench/public_api_parts/data.py, built in SQL in about a minute): BENCH_RUNWAYS
runways (default 50,000) with 18 images each and a fifth as many street snaps with 10 each,
1,000,000 images in all. It is built once into the database BENCH_DB_NAME (default
bench_publicapi) on BENCH_DATABASE_URL's server and kept: later runs migrate it and reuse it
(BENCH_REBUILD=1 builds it anew). BENCH_REDIS_URL (default TEST_REDIS_URL, else
redis://127.0.0.1:6379/15) holds the throttle's counters.

Six parts, printed in order:

1. Latency in-process (Django's test client: middleware, throttle in Redis, ETag, DRF):
   p50/p95 of each endpoint, search, facets and similar images included.
2. The query plans of the list, a search, a facet and a similar-images lookup.
3. What each change bought: the same requests with each change undone in turn (DRF's
   field-by-field rendering; DRF's throttle; the page query without the partial index), and
   each of issue 12's changes timed against what it replaced: statements compiled once
   (publicapi/queries.py) against Django's querysets and model instances, the count exact up
   to 1,000 against an exact count, orjson against DRF's JSONRenderer, the throttle's one
   script against a pipeline of three commands and its lease of the rate against a count
   per request, image URLs from the storage's prefix against its url() per image, facets
   in one scan against one query per facet, a search ranking its newest 1,000 matches
   against ranking all, and the similar-images distance counted in SQL against in Python.
4. The profile of a list request (cProfile, top functions by own time).
5. Throughput, side by side in one run: gunicorn (1 worker, BENCH_THREADS threads,
   keep-alive) serving the API and a bare view (raw SQL on the same views, json.dumps; see
   bench/public_api_parts/bare.py: it runs the API's count rule too, so both do the same
   database work) of the runway list and a runway detail; BENCH_THREADS client threads on
   keep-alive connections, the two alternated for BENCH_ROUNDS rounds of BENCH_SECONDS each
   (each round started by the other side in turn); the median requests/s of each, their
   ratio, and the median of the rounds' own ratios. The throttle is on (a rate no client
   reaches) and ETags are kept. The bodies are checked equal first.

6. The search and facet requests before and after the changes that brought them under their
   targets, side by side in one run (alternated rounds; "before" inside a transaction that is
   rolled back): V4's record views (the cover LEFT JOINed) instead of V5's (a scalar
   subquery, evaluated after the sort and LIMIT), without catalog 0008's partial facet
   indexes, the brand facet grouped by slug and name instead of by id, and the ids of a
   search as a list parameter instead of one array literal.

7. The API against a minimal Django project outside this one, both under the project's
   gunicorn configuration, on a small archive of its own: bench/public_api_parts/minimal.py,
   run on its own (it needs neither the large archive nor this script's settings).

Run: .venv/bin/python bench/public_api.py      (BENCH_PARTS=15: only parts 1 and 5)
"""

from __future__ import annotations

import cProfile
import http.client
import io
import json
import os
import pstats
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RUNWAYS = int(os.environ.get("BENCH_RUNWAYS", "50000"))
RUNWAY_IMAGES, STREET_IMAGES = 18, 10
SERVER = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
NAME = os.environ.get("BENCH_DB_NAME", "bench_publicapi")
REDIS = os.environ.get(
    "BENCH_REDIS_URL", os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
)
THREADS = int(os.environ.get("BENCH_THREADS", "4"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "8"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
SAMPLES = int(os.environ.get("BENCH_SAMPLES", "40"))
RATE = "100000000/min"  # on, counted, never reached


def database_url() -> str:
    base, _, _ = SERVER.rpartition("/")
    return f"{base}/{NAME}"


def ensure_database() -> None:
    """Create the bench database if need be, migrate it, and build the archive unless it is
    there already at the requested size."""
    import psycopg

    admin = psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True)
    exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [NAME]).fetchone()
    if exists and os.environ.get("BENCH_REBUILD"):
        admin.execute(f'DROP DATABASE "{NAME}" WITH (FORCE)')
        exists = None
    if not exists:
        admin.execute(f'CREATE DATABASE "{NAME}"')
    admin.close()

    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM brand_runways")
        (count,) = cursor.fetchone()
    if count == RUNWAYS:
        return
    from bench.public_api_parts.data import statements

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE brands, brand_aliases, brand_runways, brand_runway_images, street_snaps,"
            " street_snap_images CASCADE"
        )
        for statement in statements(
            runways=RUNWAYS, runway_images=RUNWAY_IMAGES, street_images=STREET_IMAGES
        ):
            cursor.execute(statement)
    connection.close()
    import psycopg

    with psycopg.connect(
        database_url().replace("postgres://", "postgresql://"), autocommit=True
    ) as c:
        c.execute("VACUUM ANALYZE")
    print(f"built the archive in {time.perf_counter() - started:.0f} s")


def percentiles(action, samples: int = SAMPLES) -> tuple[float, float]:
    action()
    action()  # warm
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return p50_p95(times)


def p50_p95(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, round(0.95 * len(times)) - 1)]


def main() -> None:
    os.environ.update(
        DATABASE_URL=database_url(),
        REDIS_URL=REDIS,
        PUBLIC_API_THROTTLE_RATE=RATE,
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="WARNING",  # no access line per request, on either side
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    import django

    django.setup()
    from django.core.signals import request_started
    from django.db import reset_queries

    # Each request would empty the query log the latency table counts queries in.
    request_started.disconnect(reset_queries)
    ensure_database()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM public_brand_runways")
        (public,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM brand_runway_images")
        (runway_images,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM street_snap_images")
        (street_images,) = cursor.fetchone()
    print(
        f"PostgreSQL {connection.pg_version // 10000}: {RUNWAYS} runways ({public} public), "
        f"{runway_images + street_images} images; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    paths = endpoints()
    parts = os.environ.get("BENCH_PARTS", "123456")  # e.g. BENCH_PARTS=5: throughput only
    for part, run in zip(
        "123456",
        [
            latency,
            plans,
            changes,
            lambda p: profile(p["runways, page 1"]),
            throughput,
            search_and_facets,
        ],
        strict=True,
    ):
        if part in parts:
            run(paths)


def endpoints() -> dict[str, str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.id FROM public_brand_runways r ORDER BY r.published_at DESC NULLS LAST,"
            " r.id DESC LIMIT 1"
        )
        (runway,) = cursor.fetchone()
        cursor.execute(
            "SELECT id FROM public_image_hashes WHERE kind = 'runway' ORDER BY id LIMIT 1 "
            "OFFSET 5000"
        )
        (image,) = cursor.fetchone()
        cursor.execute(
            "SELECT id FROM public_image_hashes WHERE kind = 'street' ORDER BY id LIMIT 1 "
            "OFFSET 500"
        )
        (street_image,) = cursor.fetchone()
    return {
        "runways, page 1": "/api/v1/runways/",
        "runways, page size 100": "/api/v1/runways/?page_size=100",
        "runways, page 500": "/api/v1/runways/?page=500",
        "runways of one brand": "/api/v1/runways/?brand=brand-7",
        "runway detail (18 images)": f"/api/v1/runways/{runway}/",
        "search 'acme cout'": "/api/v1/runways/?q=acme+cout",
        "search 'velvet 2021'": "/api/v1/runways/?q=velvet+2021",
        "search 'couture' (8k hits)": "/api/v1/runways/?q=couture",
        "search 'creme' + year": "/api/v1/runways/?q=creme&year=2019",
        "street search 'sao paulo'": "/api/v1/street-snaps/?q=sao+paulo",
        "facets, runways": "/api/v1/runways/facets/",
        "facets, runways, 2 filters": "/api/v1/runways/facets/?brand=brand-7&year=2020",
        "facets, runways, q": "/api/v1/runways/facets/?q=silk",
        "facets, street snaps": "/api/v1/street-snaps/facets/",
        "similar, runway image": f"/api/v1/runway-images/{image}/similar/",
        "similar, street image": f"/api/v1/street-snap-images/{street_image}/similar/",
        "street snaps, page 1": "/api/v1/street-snaps/",
        "home page": "/api/v1/index/",
    }


def client():
    from django.test import Client

    return Client(HTTP_HOST="localhost")


def latency(paths: dict[str, str]) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    web = client()
    print(f"\n1. Latency in-process, {SAMPLES} requests each (ms):")
    print(f"  {'':<30} {'p50':>7} {'p95':>7}  queries  bytes")
    for label, path in paths.items():
        response = web.get(path)
        assert response.status_code == 200, (path, response.status_code, response.content[:200])
        with CaptureQueriesContext(connection) as queries:
            web.get(path)
        p50, p95 = percentiles(lambda p=path: web.get(p))
        print(f"  {label:<30} {p50:7.1f} {p95:7.1f}  {len(queries):>7}  {len(response.content):>6}")


def plans(paths: dict[str, str]) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    web = client()
    print("\n2. Query plans (EXPLAIN ANALYZE; the slowest query of each request):")
    for label in [
        "runways, page 1",
        "search 'velvet 2021'",
        "facets, runways, 2 filters",
        "similar, runway image",
    ]:
        with CaptureQueriesContext(connection) as queries:
            web.get(paths[label])
        timed = []
        with connection.cursor() as cursor:
            for query in queries.captured_queries:
                cursor.execute(
                    "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) " + query["sql"]
                )
                lines = [row[0] for row in cursor.fetchall()]
                ms = float(lines[-1].split(":")[1].split()[0])
                timed.append((ms, query["sql"], lines))
        ms, sql, lines = max(timed)
        print(f"\n  {label}: {len(timed)} queries; the slowest, {ms:.1f} ms:\n    {sql[:160]}...")
        for line in lines:
            print("    " + line)


def changes(paths: dict[str, str]) -> None:
    """Each change undone in turn, against the same requests (medians, ms)."""
    from django.db import connection, transaction
    from rest_framework.throttling import AnonRateThrottle

    from publicapi import http as public_http
    from publicapi import serializers

    class DRFThrottle(public_http.PublicAnonRateThrottle):
        # DRF's own algorithm: the list of request times, read and rewritten per request.
        allow_request = AnonRateThrottle.allow_request
        wait = AnonRateThrottle.wait

        def get_cache_key(self, request, view):
            return super().get_cache_key(request, view) + "_drf"  # a list, not our counter

    web = client()
    print("\n3. What each change bought (in-process p50, ms; 'before' = the change undone):")
    print(f"  {'':<48} {'before':>8} {'after':>8}")

    def row(label, before, after):
        print(f"  {label:<48} {before:8.1f} {after:8.1f}   {before / after:4.2f}x")

    for label in ["runways, page 1", "runways, page size 100", "runway detail (18 images)"]:
        path = paths[label]
        after = percentiles(lambda p=path: web.get(p))[0]
        serializers.TableSerializer.fast = False
        try:
            before = percentiles(lambda p=path: web.get(p))[0]
        finally:
            serializers.TableSerializer.fast = True
        row(f"direct rendering: {label}", before, after)

    # DRF's throttle at a high rate: its list holds every request of the last minute.
    path = paths["runways, page 1"]
    after = percentiles(lambda: web.get(path))[0]
    saved = public_http.PublicAPIView.throttle_classes
    public_http.PublicAPIView.throttle_classes = [DRFThrottle]
    try:
        for _ in range(600):  # ten a second for a minute, from this one client
            web.get("/api/v1/no-such-page/")
        before = percentiles(lambda: web.get(path))[0]
    finally:
        public_http.PublicAPIView.throttle_classes = saved
    row("fixed-window throttle: runways, page 1", before, after)

    # The partial index in the lists' order, and the count's skipped brand join.
    page = (
        "SELECT r.id FROM public_brand_runways r "
        "ORDER BY r.published_at DESC NULLS LAST, r.id DESC LIMIT 20"
    )
    count = "SELECT count(*) FROM public_brand_runways"
    # V2's inner join of brands, which PostgreSQL cannot drop from a count.
    joined = (
        "SELECT count(*) FROM brand_runways r JOIN brands b ON b.id = r.brand_id "
        "WHERE r.status = 'published' AND r.deleted_at IS NULL"
    )
    with connection.cursor() as cursor:

        def timed(sql):
            return percentiles(lambda: cursor.execute(sql) or cursor.fetchall(), 15)[0]

        after_page, after_count, before_count = timed(page), timed(count), timed(joined)
        with transaction.atomic():
            cursor.execute("DROP INDEX runway_public_newest")  # undone below
            before_page = timed(page)
            transaction.set_rollback(True)
    row("partial index: the page 1 query", before_page, after_page)
    row("brands left-joined: the count query", before_count, after_count)
    speed_changes(paths, row)


def speed_changes(paths: dict[str, str], row) -> None:
    """Issue 12's per-request changes, each timed against what it replaced (in-process
    medians, ms)."""
    from django.core.cache import caches
    from django.db import connection
    from django.db.models import F
    from django.test import RequestFactory
    from rest_framework.renderers import JSONRenderer

    from publicapi import facets, queries, search
    from publicapi.filters import RunwayFilter
    from publicapi.http import PublicJSONRenderer, count_in_window, redis_client
    from publicapi.models import PublicRunway, PublicRunwayImage
    from publicapi.search import NEWEST_FIRST
    from publicapi.similar import band_probes

    def timed(action, samples=SAMPLES):
        return percentiles(action, samples)[0]

    # The page and its covers: Django's queryset (compiled per request, a model per row,
    # covers by prefetch_related) against the statements compiled once.
    old = PublicRunway.objects.order_by(*NEWEST_FIRST).prefetch_related("cover")
    _, counter = queries._unfiltered(PublicRunway)

    def compiled():
        queries._estimates.clear()  # the count counted, not an estimate kept
        queries.page(PublicRunway, None, offset=0, size=20)

    row(
        "compiled once: page 1 and its covers (+ the count, one statement)",
        timed(lambda: list(old[0:20])),
        timed(compiled),
    )

    def counted():
        sql, params = queries._counted(counter, connection)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)

    row(
        "count: exact, against exact up to 1,000",
        timed(lambda: PublicRunway.objects.count()),
        timed(counted),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM public_brand_runways ORDER BY id DESC LIMIT 1")
        (pk,) = cursor.fetchone()
    album = PublicRunwayImage.objects.filter(runway_id=pk).select_related("runway")
    row(
        "compiled once: a detail (select_related, models)",
        timed(lambda: list(album.order_by("sort_order", "id"))),
        timed(lambda: queries.detail(PublicRunway, pk)),
    )
    body = client().get(paths["runways, page 1"]).json()
    drf, ours = JSONRenderer(), PublicJSONRenderer()
    row(
        "orjson: a list page's body (x100)",
        timed(lambda: [drf.render(body, "application/json", {}) for _ in range(100)]),
        timed(lambda: [ours.render(body, "application/json", {}) for _ in range(100)]),
    )
    cache = caches["default"]

    def pipelined():
        name = cache.make_and_validate_key("bench_pipeline")
        pipeline = redis_client(cache).pipeline(transaction=False)
        pipeline.set(name, 0, ex=60, nx=True)
        pipeline.incr(name)
        pipeline.ttl(name)
        pipeline.execute()

    scripted = timed(lambda: [count_in_window(cache, "bench_script", 60) for _ in range(100)], 10)
    row(
        "throttle: one script, not 3 commands (x100)",
        timed(lambda: [pipelined() for _ in range(100)], 10),
        scripted,
    )
    from publicapi import http

    def leased():
        http._leases.clear()  # each sample starts without a lease, as a process does
        for _ in range(100):
            http.take_token(cache, "bench_lease", limit=100_000_000, seconds=60)

    row("throttle: a lease of the rate, not a count per request (x100)", scripted, timed(leased))
    from django.core.files.storage import storages

    from publicapi.serializers import storage_url

    key = "renditions/0123456789abcdef0123456789abcdef01234567/1200.webp"
    row(
        "image URLs: the storage's prefix, not url() per image (x100)",
        timed(lambda: [storages["default"].url(key) for _ in range(100)]),
        timed(lambda: [storage_url(key) for _ in range(100)]),
    )
    request = RequestFactory().get("/api/v1/runways/facets/")
    for label, params in [("none", {}), ("brand and year", {"brand": "brand-7", "year": "2020"})]:
        filterset = RunwayFilter(params, queryset=PublicRunway.objects.all(), request=request)
        assert filterset.is_valid()
        chosen = {k: v for k, v in filterset.form.cleaned_data.items() if v not in (None, "")}
        args = (PublicRunway.objects.order_by(), filterset, chosen, facets.RUNWAY_FACETS)
        row(
            f"facets in one scan, filters: {label}",
            timed(lambda a=args: facets._per_facet(*a), 10),
            timed(lambda a=args: facets._in_one_scan(*a), 10),
        )
    web, path = client(), paths["search 'couture' (8k hits)"]
    after = timed(lambda: web.get(path), 15)
    ranked = search.by_relevance
    # What it replaced: every match ranked.
    search.by_relevance = lambda queryset, matched: matched.order_by(  # type: ignore[assignment]
        F(search.RANK).desc(), *NEWEST_FIRST
    )
    try:
        before = timed(lambda: web.get(path), 15)
    finally:
        search.by_relevance = ranked
    row("search 'couture': ranks the newest 1,000 matches", before, after)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT phash, phash_algorithm FROM public_image_hashes WHERE kind = 'runway' "
            "ORDER BY id LIMIT 1 OFFSET 5000"
        )
        phash, algorithm = cursor.fetchone()
        probes = band_probes(phash, 7)
        where = " OR ".join(
            f"phash_band{n} IN ({', '.join(map(str, values))})" for n, values in enumerate(probes)
        )
        sql = f"SELECT kind, id, record_id, phash FROM public_image_hashes WHERE phash_algorithm = %s AND ({where})"  # noqa: E501, S608
        near = sql + " AND bit_count((phash # %s)::bit(64)) <= 7"
        row(
            "similar: the distance counted in SQL (the query)",
            timed(lambda: cursor.execute(sql, [algorithm]) or cursor.fetchall(), 15),
            timed(lambda: cursor.execute(near, [algorithm, phash]) or cursor.fetchall(), 15),
        )


def search_and_facets(paths: dict[str, str]) -> None:
    """Part 6: the search and facet requests with V5's views, catalog 0008's indexes, the
    brand facet by id and ids as one literal undone ("before") and done ("after")."""
    from django.db import connection, transaction

    from publicapi import facets, search
    from publicapi.sql import DROP_VIEWS, VIEWS_V4, for_vendor

    labels = [
        label
        for label in paths
        if label.startswith(("search", "street search", "facets"))
        or label in ("runways, page 1", "runways, page 500", "street snaps, page 1")
    ]
    web = client()
    brand = facets.RUNWAY_FACETS[0]
    id_array = search._id_array
    times: dict[tuple[str, str], list[float]] = {}

    def measure(side: str) -> None:
        for label in labels:
            path = paths[label]
            web.get(path)  # warm
            for _ in range(SAMPLES // 2):
                start = time.perf_counter()
                web.get(path)
                times.setdefault((side, label), []).append((time.perf_counter() - start) * 1000)

    for _ in range(2):  # alternated, so a change of the machine's load falls on both
        measure("after")
        with transaction.atomic():
            with connection.cursor() as cursor:
                for statement in DROP_VIEWS + for_vendor(VIEWS_V4, connection.vendor):
                    cursor.execute(statement)
                cursor.execute("DROP INDEX runway_public_facets")
                cursor.execute("DROP INDEX street_public_facets")
            facets.RUNWAY_FACETS[0] = facets.Facet("brand", "brand_slug", label="brand_name")
            search._id_array = list  # type: ignore[assignment] # psycopg adapts each id
            try:
                measure("before")
            finally:
                facets.RUNWAY_FACETS[0], search._id_array = brand, id_array
                transaction.set_rollback(True)

    print(
        f"\n6. Search and facets, before / after, side by side ({SAMPLES} requests each, "
        f"load average {os.getloadavg()[0]:.1f}; ms):"
    )
    print(f"  {'':<30} {'before p50':>10} {'p95':>7}   {'after p50':>9} {'p95':>7}")
    for label in labels:
        (b50, b95), (a50, a95) = p50_p95(times["before", label]), p50_p95(times["after", label])
        print(f"  {label:<30}    {b50:7.1f} {b95:7.1f}     {a50:7.1f} {a95:7.1f}")


def profile(path: str) -> None:
    web = client()
    for _ in range(5):
        web.get(path)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(50):
        web.get(path)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    print(f"\n4. Profile of 50 requests to {path} (top 12 by own time):")
    lines = out.getvalue().splitlines()
    start = next(n for n, line in enumerate(lines) if "ncalls" in line)
    for line in lines[start : start + 13]:
        print("  " + line[:150])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def throughput(paths: dict[str, str]) -> None:
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.public_api_parts.settings",
        "PYTHONPATH": str(ROOT),
    }
    server = subprocess.Popen(  # noqa: S603 - our own gunicorn, on loopback
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            "--workers=1",
            "--worker-class=gthread",
            f"--threads={THREADS}",
            "--keep-alive=60",
            "--log-level=warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        wait_for(port)
        detail = paths["runway detail (18 images)"]
        pairs = [
            ("runway list", "/bare/runways/", "/api/v1/runways/"),
            ("runway detail", detail.replace("/api/v1/", "/bare/"), detail),
        ]
        print(
            f"\n5. Throughput side by side: {THREADS} client threads, keep-alive, {ROUNDS} "
            f"rounds of {SECONDS:g} s each, alternated (median requests/s):"
        )
        for label, bare, api in pairs:
            same_body(port, bare, api)
            rates: dict[str, list[float]] = {"bare": [], "api": []}
            for n in range(ROUNDS):
                # Alternated, and each pair in turn started by the other side, so a change
                # of the machine's load falls on both alike.
                sides = [("bare", bare), ("api", api)][:: 1 if n % 2 == 0 else -1]
                for side, path in sides:
                    rates[side].append(requests_per_second(port, path))
            b, a = statistics.median(rates["bare"]), statistics.median(rates["api"])
            pairs_ = zip(rates["api"], rates["bare"], strict=True)
            paired = statistics.median(x / y for x, y in pairs_)
            print(
                f"  {label:<14} bare view {b:7.0f}/s   API {a:7.0f}/s   ratio {a / b:.2f}"
                f"   (median of the {ROUNDS} rounds' ratios {paired:.2f})"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


def fetch(connection: http.client.HTTPConnection, path: str) -> tuple[int, bytes, dict]:
    connection.request("GET", path, headers={"Host": "localhost"})
    response = connection.getresponse()
    body = response.read()
    return response.status, body, dict(response.getheaders())


def same_body(port: int, bare: str, api: str) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    status_b, body_b, _ = fetch(connection, bare)
    status_a, body_a, headers = fetch(connection, api)
    connection.close()
    assert (status_b, status_a) == (200, 200), (status_b, status_a, body_a[:200])
    assert "ETag" in headers, headers
    b, a = json.loads(body_b), json.loads(body_a)
    for body in (a, b):
        body.pop("next", None)
    assert a == b, "the bare view and the API answer differently"


def requests_per_second(port: int, path: str) -> float:
    done = [0] * THREADS
    stop = time.monotonic() + SECONDS

    def client_thread(n: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            while time.monotonic() < stop:
                status, _, _ = fetch(connection, path)
                assert status == 200, status
                done[n] += 1
        finally:
            connection.close()

    threads = [threading.Thread(target=client_thread, args=(n,)) for n in range(THREADS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.monotonic() - started)


if __name__ == "__main__":
    main()
