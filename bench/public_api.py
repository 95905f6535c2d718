"""How fast is the public API, next to a minimal Django app doing the same queries?

The archive (bench/public_api_parts/data.py, built in SQL in about a minute): BENCH_RUNWAYS
runways (default 50,000) with 18 images each and a fifth as many street snaps with 10 each,
1,000,000 images in all. It is built once into the database BENCH_DB_NAME (default
bench_publicapi) on BENCH_DATABASE_URL's server and kept: later runs migrate it and reuse it
(BENCH_REBUILD=1 builds it anew). BENCH_REDIS_URL (default TEST_REDIS_URL, else
redis://127.0.0.1:6379/15) holds the throttle's counters.

Three parts (BENCH_PARTS, default "123"):

1. Latency in-process (Django's test client: middleware, throttle in Redis, ETag, DRF):
   p50/p95 and the query count of each endpoint, search, facets and similar images included.
2. Throughput side by side in one run: the project and a minimal Django app (written to a
   temporary folder: no apps, no middleware, no DRF; raw SQL on the same public_* views, the
   same queries, json.dumps), both under gunicorn with config/gunicorn.py, 1 worker x
   BENCH_THREADS threads; the project as deployed (DEBUG off, its middleware, a request line
   per request, the throttle on in Redis at its default rate, ETags, metrics; each request
   from a client address of its own, see CLIENTS).
   BENCH_THREADS client threads on keep-alive connections, the sides alternated for
   BENCH_ROUNDS rounds of BENCH_SECONDS each; the bodies are checked equal first (but the
   count, an estimate on this archive). BENCH_BEFORE_ROOT=<a checkout> adds that checkout's
   project as a third side (e.g. main before a change). With each side's rate, the CPU time
   its gunicorn worker spent per request.
3. The CPU time of a runway list page and a detail through the project's WSGI handler, and
   where cProfile finds it spent.

The figures and their history: bench/README.md.

Run: .venv/bin/python bench/public_api.py
"""

from __future__ import annotations

import cProfile
import http.client
import io
import itertools
import json
import os
import pstats
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
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
BEFORE = os.environ.get("BENCH_BEFORE_ROOT", "")
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
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    os.environ.pop("LOG_LEVEL", None)  # the project as deployed: a line per request
    import django

    django.setup()
    ensure_database()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM public_brand_runways")
        (public,) = cursor.fetchone()
    print(
        f"PostgreSQL {connection.pg_version // 10000}: {RUNWAYS} runways ({public} public) x "
        f"{RUNWAY_IMAGES} images; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    paths = endpoints()
    connection.close()
    parts = os.environ.get("BENCH_PARTS", "123")
    if "1" in parts:
        latency(paths)
    if "2" in parts:
        side_by_side(paths["runway detail (18 images)"])
    if "3" in parts:
        profile("A runway list page (20)", paths["runways, page 1"])
        profile("A runway detail (18 images)", paths["runway detail (18 images)"])


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
    import logging

    from django.core.signals import request_started
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    # Each request would empty the query log the table counts queries in; no request lines.
    request_started.disconnect(reset_queries)
    logging.getLogger("config.requests").setLevel(logging.WARNING)
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
    logging.getLogger("config.requests").setLevel(logging.NOTSET)
    request_started.connect(reset_queries)


MINIMAL_APP = '''
"""A minimal Django app: the public API's runway list and detail, raw SQL, json.dumps: the
same queries as the API (the page cut before its covers are joined; the count exact up to
1,000, PostgreSQL's estimate beyond), one view each, no middleware."""

import json

from django.http import HttpResponse, JsonResponse
from django.db import connection
from django.urls import path

PREFIX = {prefix!r}
EXACT_COUNT_LIMIT = 1000
IMAGE = ("{{a}}.id, {{a}}.storage_key, {{a}}.width, {{a}}.height, {{a}}.mime_type, "
         "{{a}}.look_index, {{a}}.renditions, {{a}}.placeholder, {{a}}.color")
RUNWAY = ("r.id, r.brand_slug, r.brand_name, r.season_code, r.season, r.year, "
          "r.collection_type, r.title, r.description, r.cover_id, r.image_count, "
          "r.published_at")
LIST = (
    f"SELECT p.*, {{IMAGE.format(a='c')}} FROM ("
    f"SELECT q.*, ROW_NUMBER() OVER () AS n FROM (SELECT {{RUNWAY}} FROM public_brand_runways r "
    "ORDER BY r.published_at DESC NULLS LAST, r.id DESC LIMIT %s OFFSET %s) q) p "
    "LEFT JOIN public_brand_runway_images c ON c.id = p.cover_id ORDER BY p.n"
)
COUNT = (
    "SELECT COUNT(*) FROM (SELECT r.id FROM public_brand_runways r "
    f"LIMIT {{EXACT_COUNT_LIMIT + 1}}) counted"
)
DETAIL = (
    f"SELECT {{RUNWAY}}, {{IMAGE.format(a='i')}} FROM public_brand_runways r "
    "LEFT JOIN public_brand_runway_images i ON i.runway_id = r.id "
    "WHERE r.id = %s ORDER BY i.sort_order, i.id"
)


def url(request, key):
    return request.build_absolute_uri(PREFIX + key)


def image(request, row):
    pk, key, width, height, mime_type, look_index, renditions, placeholder, color = row
    if isinstance(renditions, str):
        renditions = json.loads(renditions)
    sizes = [
        {{"width": r["width"], "height": r["height"], "url": url(request, r["key"])}}
        for r in sorted(renditions or [], key=lambda r: r["width"])
    ]
    return {{
        "id": pk,
        "url": url(request, key),
        "width": width,
        "height": height,
        "mime_type": mime_type,
        "renditions": sizes,
        "srcset": ", ".join(f"{{r['url']}} {{r['width']}}w" for r in sizes),
        "placeholder": placeholder or None,
        "color": color or None,
        "look_index": look_index,
    }}


def runway(row, cover):
    pk, slug, name, code, season, year, kind, title, description, _, count, published = row
    return {{
        "id": pk,
        "brand": {{"slug": slug, "name": name}},
        "season_code": code,
        "season": season,
        "year": year,
        "collection_type": kind,
        "title": title,
        "description": description,
        "cover": cover,
        "image_count": count,
        "published_at": None if published is None
        else published.isoformat().replace("+00:00", "Z"),
    }}


def respond(body):
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return HttpResponse(text.encode(), content_type="application/json")


def runways(request):
    size = int(request.GET.get("page_size", 20))
    with connection.cursor() as cursor:
        cursor.execute(LIST, [size + 1, 0])
        rows = cursor.fetchall()
        more = len(rows) > size
        rows = rows[:size]
        count = len(rows)
        if more:
            cursor.execute(COUNT)
            (count,) = cursor.fetchone()
        if count > EXACT_COUNT_LIMIT:
            cursor.execute("EXPLAIN (FORMAT JSON) SELECT id FROM public_brand_runways")
            (plan,) = cursor.fetchone()
            plan = json.loads(plan) if isinstance(plan, str) else plan
            count = max(int(plan[0]["Plan"]["Plan Rows"]), size + 1, count)
    return respond(
        {{
            "count": count,
            "next": request.build_absolute_uri("?page=2") if more else None,
            "previous": None,
            "results": [
                runway(row[:12], image(request, row[13:22]) if row[13] is not None else None)
                for row in rows
            ],
        }}
    )


def runway_detail(request, pk):
    with connection.cursor() as cursor:
        cursor.execute(DETAIL, [pk])
        rows = cursor.fetchall()
    if not rows:
        return JsonResponse({{"detail": "Not found."}}, status=404)
    images = [image(request, row[12:]) for row in rows if row[12] is not None]
    cover = next((i for i in images if i["id"] == rows[0][9]), None)
    looks = {{}}
    for item in images:
        looks.setdefault(item["look_index"], []).append(item["id"])
    return respond(
        {{
            **runway(rows[0][:12], cover),
            "images": images,
            "looks": [{{"look_index": k, "images": looks[k]}} for k in sorted(looks)],
        }}
    )


urlpatterns = [
    path("api/v1/runways/", runways),
    path("api/v1/runways/<int:pk>/", runway_detail),
]
'''

MINIMAL_SETTINGS = """
SECRET_KEY = "minimal-bench"
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = []
MIDDLEWARE = []
ROOT_URLCONF = "minimal_app"
USE_TZ = True
DATABASES = {{"default": {database!r}}}
"""

MINIMAL_WSGI_APP = "minimal_wsgi:application"
MINIMAL_WSGI = """
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "minimal_settings")
from django.core.wsgi import get_wsgi_application

application = get_wsgi_application()
"""


def write_minimal_project(folder: Path) -> None:
    from django.conf import settings
    from django.core.files.storage import storages

    prefix = storages["public"].url("k").removesuffix("k")  # the API's image URLs
    project = settings.DATABASES["default"]
    database = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": project["NAME"],
        "USER": project["USER"],
        "PASSWORD": project["PASSWORD"],
        "HOST": project["HOST"],
        "PORT": project["PORT"],
        "CONN_MAX_AGE": 60,
        # The same planner setting as the project's connections: the same plans.
        "OPTIONS": dict(project.get("OPTIONS", {})),
    }
    (folder / "minimal_app.py").write_text(MINIMAL_APP.format(prefix=prefix))
    (folder / "minimal_settings.py").write_text(
        textwrap.dedent(MINIMAL_SETTINGS.format(database=database))
    )
    (folder / "minimal_wsgi.py").write_text(MINIMAL_WSGI)


def gunicorn(port: int, cwd: Path, env: dict, app: str | None, log) -> subprocess.Popen:
    # The project's own gunicorn configuration for every side; one worker, THREADS threads.
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "-c",
        str(ROOT / "config" / "gunicorn.py"),
        f"--bind=127.0.0.1:{port}",
        "--workers=1",
        f"--threads={THREADS}",
    ]
    if app:
        command.append(app)
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=log)  # noqa: S603


def side_by_side(detail: str) -> None:
    print(
        f"\n2. The project against a minimal Django app: gunicorn -c config/gunicorn.py, 1 "
        f"worker x {THREADS} threads; {THREADS} client threads, keep-alive, {ROUNDS} rounds of "
        f"{SECONDS:g} s each, alternated (median requests/s):"
    )
    pairs = [
        ("runway list", "/api/v1/runways/"),
        ("list, page_size 50", "/api/v1/runways/?page_size=50"),
        ("runway detail", detail),
    ]
    env = {
        **os.environ,
        "WEB_CONCURRENCY": "1",
        "PYTHONPATH": str(ROOT),
        "NUM_PROXIES": "1",
        "PUBLIC_API_THROTTLE_RATE": "120/min",  # the default; see CLIENTS
    }
    with tempfile.TemporaryDirectory(prefix="minimal-django-") as folder:
        write_minimal_project(Path(folder))
        minimal_env = {**env, "PYTHONPATH": folder, "DJANGO_SETTINGS_MODULE": "minimal_settings"}
        sides = {
            "project": (ROOT, env, None),
            "minimal app": (Path(folder), minimal_env, MINIMAL_WSGI_APP),
        }
        if BEFORE:  # another checkout (main before a change), beside
            sides["before"] = (Path(BEFORE), {**env, "PYTHONPATH": BEFORE}, None)
        ports = {side: free_port() for side in sides}
        with open(Path(folder) / "project.log", "wb") as log:
            servers = {
                side: gunicorn(ports[side], cwd, side_env, app, log)
                for side, (cwd, side_env, app) in sides.items()
            }
            try:
                for port in ports.values():
                    wait_for(port)
                for label, path in pairs:
                    same_body(ports["project"], ports["minimal app"], path)
                    compare(label, ports, servers, path)
            finally:
                for server in servers.values():
                    server.terminate()
                    server.wait(timeout=30)
        lines = (Path(folder) / "project.log").read_text().count("config.requests")
        print(f"  (the project sides wrote {lines} request lines)")


def same_body(project: int, minimal: int, path: str) -> None:
    bodies = []
    for port in (project, minimal):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        status, body, headers = fetch(connection, path)
        connection.close()
        assert status == 200, (port, status, body[:300])
        bodies.append(json.loads(body))
    for body in bodies:
        body.pop("next", None)
        body.pop("count", None)  # the estimate of two different statements
    if bodies[0] != bodies[1]:
        raise AssertionError(
            f"the project and the minimal app answer differently:\n{json.dumps(bodies[0])[:600]}"
            f"\n{json.dumps(bodies[1])[:600]}"
        )


def compare(
    label: str, ports: dict[str, int], servers: dict[str, subprocess.Popen], path: str
) -> None:
    """Requests/s of each side, alternated round by round (each round started by the next
    side in turn); the ratio of each project side to the minimal app; and the CPU time its
    gunicorn worker spent per request (the rest of the machine's is PostgreSQL's, Redis's and
    the clients')."""
    rates: dict[str, list[float]] = {side: [] for side in ports}
    cpu: dict[str, list[float]] = {side: [] for side in ports}
    sides = list(ports.items())
    for n in range(ROUNDS):
        for side, port in sides[n % len(sides) :] + sides[: n % len(sides)]:
            before = worker_cpu(servers[side].pid)
            requests, seconds = requests_in(port, path)
            rates[side].append(requests / seconds)
            cpu[side].append((worker_cpu(servers[side].pid) - before) / requests)
    minimal = rates["minimal app"]
    text = [f"minimal app {statistics.median(minimal):6.0f}/s"]
    for side, values in rates.items():
        if side == "minimal app":
            continue
        paired = statistics.median(x / y for x, y in zip(values, minimal, strict=True))
        median = statistics.median(values)
        text.append(
            f"{side} {median:6.0f}/s = {median / statistics.median(minimal):.2f}x "
            f"(rounds' median {paired:.2f}x)"
        )
    print(f"  {label:<19} " + "   ".join(text))
    worker = ", ".join(f"{side} {statistics.median(v) * 1000:.2f}" for side, v in cpu.items())
    print(f"  {'':<19} worker CPU per request (ms): {worker}")


def worker_cpu(master: int) -> float:
    """CPU seconds (user and system) the gunicorn workers of `master` have used (Linux)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # a process that ended meanwhile
            continue
        if int(fields[1]) == master:  # its parent
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


# A new client address for each request of the throughput part: the throttle counts each
# client's requests of the last minute (DRF's sliding window, a list per client), so one
# client at a rate no client may reach would make every request read and write a list of
# thousands; a real client stays under the rate. The project sides trust one proxy.
# (A counter, not a generator: the client threads draw from it at once.)
CLIENTS = itertools.count(1)


def fetch(connection: http.client.HTTPConnection, path: str) -> tuple[int, bytes, dict]:
    n = next(CLIENTS)
    headers = {
        "Host": "localhost",
        "X-Forwarded-For": f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}",
    }
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    return response.status, body, dict(response.getheaders())


def requests_in(port: int, path: str) -> tuple[int, float]:
    """The requests THREADS clients made in SECONDS, and the seconds it took them."""
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
    return sum(done), time.monotonic() - started


# What a request's CPU time is spent on: the cumulative time of these functions (file, name;
# the outermost call when several match; a part's functions are called one after the other),
# the rest being everything else the request does (the middleware, DRF's request and
# response, rendering, the ETag, the request line).
PARTS = {
    "DRF serializers": [("rest_framework/serializers.py", "data")],
    "the ORM (a detail's record and images)": [("rest_framework/generics.py", "get_object")],
    "the ORM and pagination (page, covers, count)": [
        ("rest_framework/generics.py", "paginate_queryset")
    ],
    "django-filter": [
        ("django_filters/rest_framework/backends.py", "get_filterset"),
        ("django_filters/filterset.py", "is_valid"),
        ("django_filters/filterset.py", "qs"),
    ],
    "the throttle (Redis)": [("rest_framework/views.py", "check_throttles")],
}


def profile(label: str, path: str, repeat: int = 300) -> None:
    """CPU time of `repeat` runs of one request through the project's WSGI handler (its
    middleware, DRF, the throttle in Redis, the ETag; the request line is logged at INFO, to
    a discarded stream), each from a client address of its own; then cProfile's shares of it
    (PARTS) and the functions with the most own time."""
    import logging

    from django.core.servers.basehttp import get_internal_wsgi_application

    application = get_internal_wsgi_application()  # before: config.wsgi sets logging up
    for handler in logging.getLogger().handlers:
        handler.setStream(open(os.devnull, "w"))  # type: ignore[attr-defined]  # noqa: SIM115
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "localhost",
        "wsgi.url_scheme": "http",
    }

    def one() -> None:
        n = next(CLIENTS)
        address = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"
        request = {**environ, "REMOTE_ADDR": address, "wsgi.input": io.BytesIO()}
        response = application(request, lambda *args: None)
        b"".join(response)
        response.close()

    for _ in range(20):
        one()  # warm: connections, imports
    # CPU time, not wall time: on a busy machine the waits are whatever the others make them.
    cpu = []
    for _ in range(3):
        started = time.process_time()
        for _ in range(repeat):
            one()
        cpu.append((time.process_time() - started) / repeat)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(repeat):
        one()
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = stats.stats.items()  # type: ignore[attr-defined]
    print(
        f"\n3. {label}: {min(cpu) * 1000:.2f} ms of CPU per request (best of 3 x {repeat}); "
        f"under cProfile ({total / repeat * 1000:.2f} ms each):"
    )
    rest = total
    for part, functions in PARTS.items():
        spent = sum(
            max(
                (ct for (f, _, n), (_, _, _, ct, _) in entries if f.endswith(suffix) and n == name),
                default=0.0,
            )
            for suffix, name in functions
        )
        if spent:
            rest -= spent
            print(f"   {spent / total * 100:5.1f} %  {part}")
    print(f"   {rest / total * 100:5.1f} %  the rest")
    print("   The most own time:")
    rows = sorted(entries, key=lambda item: item[1][2], reverse=True)
    for (filename, line, name), (_, calls, own, _, _) in rows[:12]:
        where = filename.replace(str(ROOT) + "/", "").split("site-packages/")[-1]
        print(
            f"   {own / total * 100:5.1f} %  {own / repeat * 1e6:6.1f} us  "
            f"{calls / repeat:5.1f}x  {name} ({where}:{line})"
        )


if __name__ == "__main__":
    main()
