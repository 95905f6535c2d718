"""What reading as the public role costs: the public API's requests read as the application's
own role and as the role create_public_role makes (publicapi/roles.py: SELECT on the public
views, nothing else; the views read the public rows, catalog/public_rows.py, so no row
security is left to pay for beneath them).

bench/public_api.py's archive (50,000 runways, 1,000,000 images), in a database of its own
(BENCH_DB_NAME, default bench_public_role; built once, about a minute). Both ways are
measured in alternated rounds in one process (BENCH_ROUNDS, default 4; BENCH_SAMPLES
requests of each endpoint per round, default 10), in-process with Django's test client, the
public role through PUBLIC_DATABASE_URL's connection. Medians, ms.

Run: .venv/bin/python bench/public_role.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BENCH_DB_NAME", "bench_public_role")

from bench import public_api  # noqa: E402 - after the database's name is chosen

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))
SAMPLES = int(os.environ.get("BENCH_SAMPLES", "10"))
MODES = ("own role", "public role")


def main() -> None:
    role = f"{public_api.NAME}_reader"  # kept with the database, as it is
    url = urlsplit(public_api.database_url())
    os.environ.update(
        DATABASE_URL=url.geturl(),
        PUBLIC_DATABASE_URL=url._replace(netloc=f"{role}:bench@{url.hostname}:{url.port}").geturl(),
        REDIS_URL=public_api.REDIS,
        PUBLIC_API_THROTTLE_RATE=public_api.RATE,
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    public_api.ensure_database()
    call_command("create_public_role", role, "--password", "bench", "--execute", verbosity=0)
    from config import routers

    paths = public_api.endpoints()
    web = public_api.client()
    times: dict[str, dict[str, list[float]]] = {label: {m: [] for m in MODES} for label in paths}
    try:
        for n in range(ROUNDS):
            order = MODES if n % 2 == 0 else tuple(reversed(MODES))
            for mode in order:
                routers.PublicApiRouter.db_for_read = (  # type: ignore[method-assign]
                    _public if mode == "public role" else _default
                )
                for label, path in paths.items():
                    response = web.get(path)
                    assert response.status_code == 200, (mode, path, response.status_code)
                    for _ in range(SAMPLES):
                        started = time.perf_counter()
                        web.get(path)
                        times[label][mode].append((time.perf_counter() - started) * 1000)
    finally:
        connections["public"].close()
    print(
        f"{public_api.RUNWAYS} runways; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores; {ROUNDS} alternated rounds of {SAMPLES} requests; p50, ms"
    )
    print(f"  {'':<30}" + "".join(f"{mode:>15}" for mode in MODES))
    for label, by_mode in times.items():
        medians = [statistics.median(by_mode[mode]) for mode in MODES]
        print(f"  {label:<30}" + "".join(f"{m:15.1f}" for m in medians))


def _public(self, model, **hints):
    return "public" if model._meta.app_label == "publicapi" else None


def _default(self, model, **hints):
    return None


if __name__ == "__main__":
    main()
