"""The application's PostgreSQL connections carry the planner setting of config/settings/data.py
(PG_RANDOM_PAGE_COST); SQLite has none."""

import os

import pytest

from tests.support import run_with_settings

SHOW = (
    "from django.db import connections as c;"
    "cursor = c['default'].cursor(); cursor.execute('SHOW random_page_cost');"
    "print(cursor.fetchone()[0])"
)
OPTIONS = "from django.conf import settings as s; print(s.DATABASES['default'].get('OPTIONS'))"


@pytest.mark.postgres
def test_postgresql_connections_plan_with_the_configured_page_cost():
    # The server's maintenance database: the test database is not there outside a test.
    database = os.environ["DATABASE_URL"].rpartition("/")[0] + "/postgres"

    assert run_with_settings(SHOW, {"DATABASE_URL": database}) == "1.1"
    assert run_with_settings(SHOW, {"DATABASE_URL": database, "PG_RANDOM_PAGE_COST": "2"}) == "2"
    # Empty: the server's own (4 unless its configuration says otherwise).
    server = run_with_settings(SHOW, {"DATABASE_URL": database, "PG_RANDOM_PAGE_COST": ""})
    assert server not in ("1.1", "2")


def test_options_given_in_the_url_are_kept_and_sqlite_gets_none(tmp_path):
    url = "postgres://u@127.0.0.1:5432/archive?options=-c%20statement_timeout%3D5000"

    assert run_with_settings(OPTIONS, {"DATABASE_URL": url}) == (
        "{'options': '-c statement_timeout=5000 -c random_page_cost=1.1'}"
    )
    assert run_with_settings(OPTIONS, {"DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}) == (
        "{'transaction_mode': 'IMMEDIATE', 'timeout': 20, "
        "'init_command': 'PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;'}"
    )


@pytest.mark.postgres
def test_a_connection_the_server_ended_is_noticed_and_replaced():
    # Django's health check (CONN_HEALTH_CHECKS): after pg_terminate_backend the kept
    # connection is found unusable and the next use opens a new one.
    database = os.environ["DATABASE_URL"].rpartition("/")[0] + "/postgres"
    script = (
        "import psycopg, time;"
        "from django.db import connections as c;"
        "db = c['default'];"
        "print(type(db).__module__);"
        "cursor = db.cursor(); cursor.execute('SELECT pg_backend_pid()');"
        "pid = cursor.fetchone()[0];"
        "print(db.is_usable());"
        "import os; url = os.environ['DATABASE_URL'].replace('postgres://', 'postgresql://');"
        "conn = psycopg.connect(url, autocommit=True);"
        "conn.execute('SELECT pg_terminate_backend(%s)', [pid]); conn.close();"
        "time.sleep(0.5);"
        "print(db.is_usable());"
        "db.close_if_unusable_or_obsolete(); db.health_check_done = False;"
        "cursor = db.cursor(); cursor.execute('SELECT pg_backend_pid()');"
        "print(cursor.fetchone()[0] != pid)"
    )

    lines = run_with_settings(script, {"DATABASE_URL": database}).splitlines()

    assert lines == ["django.db.backends.postgresql.base", "True", "False", "True"]
