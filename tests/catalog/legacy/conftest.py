"""A second PostgreSQL database holding the legacy archive, created from the copy of its schema
in this folder (the project never reads ../shared at run time) and dropped at the end."""

from pathlib import Path

import psycopg
import pytest
from django.db import connection
from psycopg import sql

from tests.catalog.legacy.archive import LegacyDatabase

SCHEMA = Path(__file__).with_name("schema.sql")


def _conninfo(dbname: str) -> str:
    settings = connection.settings_dict
    return psycopg.conninfo.make_conninfo(
        dbname=dbname,
        host=settings["HOST"] or "",
        port=str(settings["PORT"] or ""),
        user=settings["USER"] or "",
        password=settings["PASSWORD"] or "",
    )


@pytest.fixture(scope="session")
def legacy_conninfo(django_db_setup, django_db_blocker):
    """The legacy database's connection string. Named after the test database, so parallel
    runs (other worktrees, xdist workers) never share one."""
    with django_db_blocker.unblock():
        name = f"{connection.settings_dict['NAME']}_legacy"
    admin = psycopg.connect(_conninfo("postgres"), autocommit=True)
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    admin.execute(drop)
    admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    conninfo = _conninfo(name)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(SCHEMA.read_text())
    yield conninfo
    admin.execute(drop)
    admin.close()


@pytest.fixture
def legacy(legacy_conninfo):
    """An empty legacy archive for one test."""
    database = LegacyDatabase(legacy_conninfo)
    database.reset()
    yield database
    database.close()
