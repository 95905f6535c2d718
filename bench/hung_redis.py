"""Request latency with a hung Redis (one that accepts connections and never answers: a
socket of this script's own), with the circuit breakers (pybreaker: the throttle's and the
probes') and without them (never opening, as the web processes behaved before them).

In-process (Django's test client), settings as in production (the cache's 1 s socket
timeout, REDIS_URL pointing at the hung socket), on bench/public_api.py's archive
(BENCH_DB_NAME, as there). For each way, BENCH_ROUNDS alternated rounds (default 3) of
BENCH_SAMPLES requests per path (default 10), the breaker closed again at each round's start
(so each round pays what a fresh outage costs). p50 / p95 / the worst, ms.

Run: .venv/bin/python bench/hung_redis.py
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import public_api  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SAMPLES = int(os.environ.get("BENCH_SAMPLES", "10"))
PATHS = {
    "runway list (throttled)": "/api/v1/runways/",
    "/readyz": "/readyz",
    "admin login page": "/admin/login/",
}


def hung_redis() -> str:
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def accept() -> None:
        while True:
            client, _ = server.accept()
            held.append(client)  # never read, never answered

    threading.Thread(target=accept, daemon=True).start()
    return f"redis://127.0.0.1:{server.getsockname()[1]}/0"


def main() -> None:
    url = hung_redis()
    os.environ.update(
        DATABASE_URL=public_api.database_url(),
        REDIS_URL=url,
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="CRITICAL",  # a traceback per request, before: not the point here
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    import django

    django.setup()
    from django.conf import settings
    from django.test import Client, override_settings

    from config.health import redis_breaker as probes
    from publicapi.throttling import redis_breaker as throttle

    public_api.ensure_database()
    # The admin's pages without collectstatic's manifest.
    plain_static = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain_static}).enable()
    web = Client(HTTP_HOST="localhost")
    ways = {"without the breaker (before)": 10**9, "with the breaker (after)": throttle.fail_max}
    times: dict[tuple[str, str], list[float]] = {(w, p): [] for w in ways for p in PATHS}
    for n in range(ROUNDS):
        for way in list(ways) if n % 2 == 0 else list(reversed(ways)):
            for breaker in (probes, throttle):
                breaker.close()
                breaker.fail_max = ways[way]
            for label, path in PATHS.items():
                for _ in range(SAMPLES):
                    started = time.perf_counter()
                    web.get(path)
                    times[way, label].append((time.perf_counter() - started) * 1000)
    print(
        f"a hung Redis; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"{ROUNDS} alternated rounds of {SAMPLES} requests per path; ms"
    )
    for way in ways:
        print(f"  {way}:")
        for label in PATHS:
            sample = sorted(times[way, label])
            p95 = sample[min(len(sample) - 1, round(0.95 * len(sample)) - 1)]
            print(
                f"    {label:<26} p50 {statistics.median(sample):7.1f}  p95 {p95:7.1f}  "
                f"worst {sample[-1]:7.1f}"
            )


if __name__ == "__main__":
    main()
