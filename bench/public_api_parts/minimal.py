"""Part 7 of bench/public_api.py, runnable on its own: the public API against a minimal
Django project outside this one, the way a user would compare them (issue 24).

The minimal project is written by this script into a temporary folder: no installed apps, no
middleware, no DRF; one view per request that runs the same SQL as the API on the public_*
views (a list: the page cut first, joined to its covers, with the count to 1,001 as a scalar
subquery; a detail: the record left-joined to its images) and writes the JSON with
json.dumps; persistent connections (CONN_MAX_AGE, no health check). Both are served by
gunicorn with the project's config/gunicorn.py, 1 worker x BENCH_THREADS threads (gthread);
the project as deployed (DEBUG off, its middleware, the request log line at INFO to a file,
throttle on in Redis at a rate never reached, ETags, metrics). BENCH_THREADS client threads on
keep-alive connections; the two alternated for BENCH_ROUNDS rounds of BENCH_SECONDS each
(each round started by the other side in turn); the bodies are checked equal first.

The archive: BENCH_SMALL_RUNWAYS runways (default 300) with 6 images each, in the database
bench_publicapi_<runways> (built once, kept). Then, for each request, the instructions it
costs each side in one process (valgrind's callgrind, Debian's valgrind; skipped without it):
unlike a time, the same figure on every run of the same code, whatever else the machine does
(the CPU-time part, c, swings by a third between runs on a shared machine). Then the cProfile
of one runway detail request through the project's whole stack, repeated for stable figures:
the functions with the most own time.

BENCH_MINIMAL_PARTS picks the parts: t(hroughput), c(PU time), i(nstructions), p(rofile);
"tip" by default. The instructions take about ten minutes (Python runs some fifty times slower
under valgrind).

Run: .venv/bin/python bench/public_api_parts/minimal.py
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

SMALL = int(os.environ.get("BENCH_SMALL_RUNWAYS", "300"))
os.environ["BENCH_RUNWAYS"] = str(SMALL)
os.environ["BENCH_DB_NAME"] = f"bench_publicapi_{SMALL}"

from bench import public_api as bench  # noqa: E402 - after the bench's environment

bench.RUNWAY_IMAGES = 6
# What to run: t(hroughput), c(pu time per request), i(nstructions per request, with
# valgrind), p(rofile).
PARTS = os.environ.get("BENCH_MINIMAL_PARTS", "tip")
# A checkout of the project to run beside this one (e.g. main before a change), or "".
BEFORE = os.environ.get("BENCH_BEFORE_ROOT", "")

MINIMAL_APP = '''
"""A minimal Django app: the public API's runway list and detail, raw SQL, json.dumps."""

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
    f"SELECT p.*, {{IMAGE.format(a='c')}}, (SELECT COUNT(*) FROM (SELECT r.id FROM "
    f"public_brand_runways r LIMIT {{EXACT_COUNT_LIMIT + 1}}) counted) FROM ("
    f"SELECT q.*, ROW_NUMBER() OVER () AS n FROM (SELECT {{RUNWAY}} FROM public_brand_runways r "
    "ORDER BY r.published_at DESC NULLS LAST, r.id DESC LIMIT %s OFFSET %s) q) p "
    "LEFT JOIN public_brand_runway_images c ON c.id = p.cover_id ORDER BY p.n"
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
    return respond(
        {{
            "count": rows[0][-1] if more else len(rows),
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
            "looks": [{{"look_index": k, "image_ids": looks[k]}} for k in sorted(looks)],
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


# One process, one request made again and again through the WSGI handler (the request line
# logged to a discarded stream), then warmed: what the CPU-time and instruction parts share.
ONE_REQUEST = """
import io, json, logging, os, sys, time
import django
django.setup()
from django.core.servers.basehttp import get_internal_wsgi_application
application = get_internal_wsgi_application()  # the side's WSGI_APPLICATION, as gunicorn's
for handler in logging.getLogger().handlers:
    handler.setStream(open(os.devnull, "w"))
path, _, query = sys.argv[1].partition("?")
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query,
           "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
           "HTTP_HOST": "localhost", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http"}
def one(_=None):
    response = application({**environ, "wsgi.input": io.BytesIO()}, lambda *args: None)
    b"".join(response)
    response.close()
for _ in range(30):
    one()
"""
# The CPU time of a request in one process, without gunicorn, threads or the clients (on a
# shared machine it still swings by a third between runs: see INSTRUCTIONS_SCRIPT).
CPU_SCRIPT = (
    ONE_REQUEST
    + """
times = []
for _ in range(int(sys.argv[2])):
    started = time.process_time()
    for _ in range(50):
        one()
    times.append((time.process_time() - started) / 50 * 1000)
print(json.dumps(times))
"""
)
# The same requests counted in instructions by valgrind's callgrind, made through map(): its
# C function (map_next) switches the counting on and off around each one, so neither Django's
# start nor the warming is counted. The same figure on every run of the same code.
INSTRUCTIONS_SCRIPT = ONE_REQUEST + "list(map(one, range(int(sys.argv[2]))))\n"


def instructions(valgrind: str, cwd: Path, env: dict, path: str, count: int = 100) -> int:
    """Instructions per request (user space, the process's own: not the database's)."""
    with tempfile.TemporaryDirectory(prefix="callgrind-") as folder:
        out = Path(folder) / "callgrind.out"
        result = subprocess.run(  # noqa: S603 - our own script
            [
                valgrind,
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=map_next",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                INSTRUCTIONS_SCRIPT,
                path,
                str(count),
            ],
            cwd=cwd,
            env={**env, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
        )
        if result.returncode:
            raise RuntimeError(result.stderr[-2000:])
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[0].split()[1]) // count


def cpu_ms(cwd: Path, env: dict, path: str, batches: int = 3) -> list[float]:
    result = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, "-c", CPU_SCRIPT, path, str(batches)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise RuntimeError(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


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
    # The project's own gunicorn configuration for both; one worker, BENCH_THREADS threads.
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "-c",
        str(ROOT / "config" / "gunicorn.py"),
        f"--bind=127.0.0.1:{port}",
        "--workers=1",
        f"--threads={bench.THREADS}",
    ]
    if app:
        command.append(app)
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=log)  # noqa: S603


def main() -> None:
    os.environ.update(
        DATABASE_URL=bench.database_url(),
        REDIS_URL=bench.REDIS,
        PUBLIC_API_THROTTLE_RATE=bench.RATE,
        SECURE_SSL_REDIRECT="false",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    os.environ.pop("LOG_LEVEL", None)  # the project as deployed: a line per request
    import django

    django.setup()
    bench.ensure_database()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.id FROM public_brand_runways r ORDER BY r.published_at DESC NULLS LAST,"
            " r.id DESC LIMIT 1"
        )
        (detail,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM public_brand_runways")
        (public,) = cursor.fetchone()
    connection.close()
    print(
        f"7. The project against a minimal Django app: {SMALL} runways ({public} public) x "
        f"{bench.RUNWAY_IMAGES} images; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores; gunicorn -c config/gunicorn.py, 1 worker x {bench.THREADS} "
        f"threads; {bench.THREADS} client threads, keep-alive, {bench.ROUNDS} rounds of "
        f"{bench.SECONDS:g} s each, alternated (median requests/s):"
    )
    pairs = [
        ("runway detail", f"/api/v1/runways/{detail}/"),
        ("list, page_size 10", "/api/v1/runways/?page_size=10"),
        ("list, page_size 50", "/api/v1/runways/?page_size=50"),
    ]
    with tempfile.TemporaryDirectory(prefix="minimal-django-") as folder:
        write_minimal_project(Path(folder))
        project_port, minimal_port = bench.free_port(), bench.free_port()
        env = {**os.environ, "WEB_CONCURRENCY": "1", "PYTHONPATH": str(ROOT)}
        minimal_env = {key: value for key, value in env.items() if key != "DJANGO_SETTINGS_MODULE"}
        minimal_env["PYTHONPATH"] = folder
        minimal_env["DJANGO_SETTINGS_MODULE"] = "minimal_settings"
        with open(Path(folder) / "project.log", "wb") as log, open(os.devnull, "wb") as devnull:
            pairs_run = pairs if "t" in PARTS else []
            servers = []
            if pairs_run:
                servers = [
                    gunicorn(project_port, ROOT, env, None, log),
                    gunicorn(minimal_port, Path(folder), minimal_env, MINIMAL_WSGI_APP, devnull),
                ]
            ports = {"project": project_port, "minimal app": minimal_port}
            if BEFORE and pairs_run:  # another checkout (main before a change), beside
                ports["before"] = bench.free_port()
                before_env = {**env, "PYTHONPATH": BEFORE}
                servers.append(gunicorn(ports["before"], Path(BEFORE), before_env, None, devnull))
            try:
                for port in ports.values() if pairs_run else []:
                    bench.wait_for(port)
                for label, path in pairs_run:
                    for side, port in ports.items():
                        if side != "minimal app":
                            same_body(port, minimal_port, path)
                    compare(label, ports, path)
            finally:
                for server in servers:
                    server.terminate()
                    server.wait(timeout=30)
            lines = (Path(folder) / "project.log").read_text().count("config.requests")
            print(f"  (the project wrote {lines} request lines)")
        sides = {"project": (ROOT, env), "minimal app": (Path(folder), minimal_env)}
        if BEFORE:
            sides["before"] = (Path(BEFORE), {**env, "PYTHONPATH": BEFORE})
        every_side = dict(sides)
        if "c" not in PARTS:
            sides = {}
        else:
            print(
                "\n   CPU time per request, in one process (the WSGI handler called directly; "
                f"{bench.ROUNDS} alternated runs of 3 x 50 requests, the lowest batch), ms:"
            )
        for label, path in pairs if sides else []:
            cpu: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(bench.ROUNDS):
                for side, (cwd, side_env) in sides.items():
                    cpu[side].extend(cpu_ms(cwd, side_env, path))
            minimal = min(cpu["minimal app"])
            text = [f"minimal app {minimal:.2f}"] + [
                f"{side} {min(values):.2f} (minimal / {side} = {minimal / min(values):.2f}x)"
                for side, values in cpu.items()
                if side != "minimal app"
            ]
            print(f"  {label:<19} " + "   ".join(text))
        valgrind = shutil.which("valgrind")
        if "i" in PARTS and not valgrind:
            print("\n   (no valgrind: instructions per request not counted)")
        if "i" in PARTS and valgrind:
            print(
                "\n   Instructions per request (callgrind, 100 requests through the WSGI handler;"
                " the same on every run of the same code):"
            )
            for label, path in pairs:
                counts = {
                    side: instructions(valgrind, cwd, side_env, path)
                    for side, (cwd, side_env) in every_side.items()
                }
                minimal = counts["minimal app"]
                text = [f"minimal app {minimal / 1000:,.0f}k"] + [
                    f"{side} {n / 1000:,.0f}k (minimal / {side} = {minimal / n:.2f}x)"
                    for side, n in counts.items()
                    if side != "minimal app"
                ]
                print(f"  {label:<19} " + "   ".join(text))
    if "p" in PARTS:
        profile(f"/api/v1/runways/{detail}/")


def same_body(project: int, minimal: int, path: str) -> None:
    import http.client

    bodies = []
    for port in (project, minimal):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        status, body, headers = bench.fetch(connection, path)
        connection.close()
        assert status == 200, (port, status, body[:300])
        bodies.append(json.loads(body))
    for body in bodies:
        body.pop("next", None)
    if bodies[0] != bodies[1]:
        raise AssertionError(
            f"the minimal app and the API answer differently:\n{json.dumps(bodies[0])[:600]}"
            f"\n{json.dumps(bodies[1])[:600]}"
        )


def compare(label: str, ports: dict[str, int], path: str) -> None:
    """Requests/s of each side, alternated round by round (each round started by the next
    side in turn); the ratio of each project side to the minimal app."""
    rates: dict[str, list[float]] = {side: [] for side in ports}
    sides = list(ports.items())
    for n in range(bench.ROUNDS):
        for side, port in sides[n % len(sides) :] + sides[: n % len(sides)]:
            rates[side].append(bench.requests_per_second(port, path))
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


def profile(path: str, repeat: int = 300) -> None:
    """cProfile (CPU time) of `repeat` runs of one detail request through the project's WSGI
    handler (its middleware, DRF, the throttle in Redis, the ETag; the request line is logged
    at INFO, to a discarded stream)."""
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
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
    }

    def one() -> None:
        response = application({**environ, "wsgi.input": io.BytesIO()}, lambda *args: None)
        b"".join(response)
        response.close()

    for _ in range(20):
        one()  # warm: compiled statements, connections
    # CPU time, not wall time: on a busy machine the waits are whatever the others make them.
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(repeat):
        one()
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = stats.total_tt  # type: ignore[attr-defined]
    print(
        f"\n   Profile of a runway detail request ({repeat} runs, cProfile of CPU time, "
        f"{total / repeat * 1000:.2f} ms each under the profiler), the most own time:"
    )
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    for (filename, line, name), (_, calls, own, _, _) in rows[:20]:
        where = filename.replace(str(ROOT) + "/", "").split("site-packages/")[-1]
        print(
            f"   {own / total * 100:5.1f} %  {own / repeat * 1e6:6.1f} us  "
            f"{calls / repeat:4.1f}x  {name} ({where}:{line})"
        )


if __name__ == "__main__":
    main()
