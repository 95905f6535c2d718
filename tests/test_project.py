"""The project as an operator meets it: settings from the environment, `check --deploy`, and
migrations applied to an empty database, each run as a separate `manage.py` process."""

import os
import secrets
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_VIEWS = {
    "public_brands",
    "public_brand_runways",
    "public_brand_runway_images",
    "public_street_snaps",
    "public_street_snap_images",
    # For search and similar images (views V4).
    "public_brand_names",
    "public_image_hashes",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG", "PYTHONPATH"}}
    return subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def postgres_url(dbname: str) -> str:
    settings = connection.settings_dict
    return f"postgres://{settings['USER']}@{settings['HOST']}:{settings['PORT']}/{dbname}"


def production_env() -> dict[str, str]:
    # The checks of generated columns ask the server for its version: a reachable PostgreSQL.
    return {
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "archive.example.com",
        "DATABASE_URL": postgres_url("postgres"),
        "REDIS_URL": "redis://redis.example.com:6379/0",
        "AWS_STORAGE_BUCKET_NAME": "archive-media",
        "INGEST_SECRETS": "whsec_" + "A" * 32,
    }


@pytest.mark.postgres
def test_check_deploy_reports_nothing_with_production_values():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env())

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.postgres
def test_check_deploy_and_the_web_app_refuse_a_short_ingest_secret():
    env = {**production_env(), "INGEST_SECRETS": "whsec_ab"}  # a 1-byte key to the library

    checked = manage("check", "--deploy", env=env)
    started = subprocess.run(  # noqa: S603 - gunicorn's import of the WSGI app, nothing else
        [sys.executable, "-c", "import config.wsgi"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert checked.returncode != 0
    assert "ingest.E001" in checked.stderr
    assert started.returncode != 0
    assert "ingest.E001" in started.stderr
    assert "ImproperlyConfigured" in started.stderr


def test_check_deploy_flags_the_development_defaults():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env={})

    assert result.returncode != 0
    assert "security.W009" in result.stderr + result.stdout  # the dev SECRET_KEY


def test_the_default_is_the_embedded_mode(tmp_path):
    script = (
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.REDIS_URL == '',"
        " s.STORAGES['default']['BACKEND'], s.DEBUG)"
    )
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-c", f"import django; django.setup(); {script}"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "True",
        "django.core.files.storage.FileSystemStorage",
        "False",
    ], result.stderr


def test_migrations_apply_to_an_empty_sqlite_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"

    migrated = manage("migrate", "--no-input", env={"DATABASE_URL": url})

    assert migrated.returncode == 0, migrated.stderr
    with sqlite3.connect(tmp_path / "fresh.sqlite3") as conn:
        views = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='view'")}
    assert views == PUBLIC_VIEWS


def _pg_query(url: str, query: str, params=()) -> list:
    with psycopg.connect(url.replace("postgres://", "postgresql://")) as conn:
        return [r[0] for r in conn.execute(query, params)]


def view_columns(url: str, view: str) -> list[str]:
    return _pg_query(
        url, "SELECT column_name FROM information_schema.columns WHERE table_name = %s", [view]
    )


def public_views(url: str) -> set[str]:
    return set(_pg_query(url, "SELECT viewname FROM pg_views WHERE schemaname = 'public'"))


@pytest.mark.postgres
def test_migrations_apply_to_an_empty_postgres_database_and_unapply():
    settings = connection.settings_dict
    name = f"archive_fresh_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"],
        user=settings["USER"],
        dbname="postgres",
        autocommit=True,
    )
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = postgres_url(name)

        forward = manage("migrate", "--no-input", env={"DATABASE_URL": url})
        first = manage("migrate", "publicapi", "0001", "--no-input", env={"DATABASE_URL": url})
        first_columns = view_columns(url, "public_brand_runways")
        backward = manage("migrate", "publicapi", "zero", "--no-input", env={"DATABASE_URL": url})
        none = public_views(url)
        again = manage("migrate", "--no-input", env={"DATABASE_URL": url})

        assert forward.returncode == 0, forward.stderr
        assert first.returncode == 0, first.stderr
        # Back at the first version of the views (which exists, without the later column).
        assert first_columns and "brand_slug" not in first_columns
        assert backward.returncode == 0, backward.stderr
        assert none == set()
        assert again.returncode == 0, again.stderr
        assert "brand_slug" in view_columns(url, "public_brand_runways")
        assert public_views(url) == PUBLIC_VIEWS
    finally:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()
