"""The application's PostgreSQL connections carry the planner setting of config/settings.py
(PG_RANDOM_PAGE_COST); SQLite has none."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOW = (
    "from django.db import connections as c;"
    "cursor = c['default'].cursor(); cursor.execute('SHOW random_page_cost');"
    "print(cursor.fetchone()[0])"
)
OPTIONS = "from django.conf import settings as s; print(s.DATABASES['default'].get('OPTIONS'))"


def run(script: str, env: dict[str, str]) -> str:
    result = subprocess.run(  # noqa: S603 - our own settings module, fixed code
        [sys.executable, "-c", f"import django; django.setup(); {script}"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.postgres
def test_postgresql_connections_plan_with_the_configured_page_cost():
    # The server's maintenance database: the test database is not there outside a test.
    database = os.environ["DATABASE_URL"].rpartition("/")[0] + "/postgres"

    assert run(SHOW, {"DATABASE_URL": database}) == "1.1"
    assert run(SHOW, {"DATABASE_URL": database, "PG_RANDOM_PAGE_COST": "2"}) == "2"
    # Empty: the server's own (4 unless its configuration says otherwise).
    server = run(SHOW, {"DATABASE_URL": database, "PG_RANDOM_PAGE_COST": ""})
    assert server not in ("1.1", "2")


def test_options_given_in_the_url_are_kept_and_sqlite_gets_none(tmp_path):
    url = "postgres://u@127.0.0.1:5432/archive?options=-c%20statement_timeout%3D5000"

    assert run(OPTIONS, {"DATABASE_URL": url}) == (
        "{'options': '-c statement_timeout=5000 -c random_page_cost=1.1'}"
    )
    assert run(OPTIONS, {"DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}) == (
        "{'transaction_mode': 'IMMEDIATE', 'timeout': 20, "
        "'init_command': 'PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;'}"
    )
