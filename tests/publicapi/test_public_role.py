"""Defence in depth: the role `create_public_role` makes reads the public_* views and nothing
else, and with PUBLIC_DATABASE_URL the API reads through it (config.routers). The views read
tables that hold only public rows (catalog/public_rows.py): whatever SQL the role runs, no function,
error, plan or statistic of it has a hidden row to show."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from catalog import public_rows
from publicapi.roles import public_views
from tests.factories import (
    BrandAliasFactory,
    BrandFactory,
    RunwayFactory,
    RunwayImageFactory,
    StreetSnapFactory,
    StreetSnapImageFactory,
)

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PASSWORD = "public-role-password"  # noqa: S105


@pytest.fixture
def public_role():
    # Roles are cluster-wide: named after this run's test database, dropped afterwards.
    name = f"{connection.settings_dict['NAME']}_public_reader"
    out = io.StringIO()
    call_command("create_public_role", name, "--password", PASSWORD, "--execute", stdout=out)
    yield name
    with connection.cursor() as cursor:
        cursor.execute(f'DROP OWNED BY "{name}"')
        cursor.execute(f'DROP ROLE "{name}"')


def connect_as(role: str, password: str = PASSWORD) -> psycopg.Connection:
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"],
        port=db["PORT"],
        dbname=db["NAME"],
        user=role,
        password=password,
        autocommit=True,
    )


def test_the_role_reads_the_public_views_and_nothing_else(public_role):
    published = RunwayFactory(published=True)
    RunwayFactory()  # pending

    with connect_as(public_role) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM public_brand_runways")]
        assert ids == [published.pk]
        for statement in (
            "SELECT * FROM brand_runways",
            "SELECT * FROM ingest_jobs",
            "SELECT * FROM auth_user",
            "DELETE FROM brand_runways",
            "UPDATE brand_runways SET status = 'published'",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)


def test_the_sql_is_printed_without_execute():
    out = io.StringIO()

    call_command("create_public_role", "archive_public", stdout=out)

    sql = out.getvalue()
    assert 'CREATE ROLE "archive_public" LOGIN;' in sql
    assert (
        'GRANT SELECT ON "public_brand_names", "public_brand_runway_images", '
        '"public_brand_runways", "public_brands", "public_image_hashes", '
        '"public_street_snap_images", "public_street_snaps" TO "archive_public"'
    ) in sql
    # no table at all, whatever an older version of the command gave it
    assert 'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "archive_public"' in sql
    assert "GRANT SELECT (" not in sql and "POLICY" not in sql
    assert "REVOKE TEMPORARY ON DATABASE" in sql
    assert "DO $$" not in sql


def test_the_api_reads_through_the_public_connection(public_role):
    # given: a published show, and a process configured as production would be
    published = RunwayFactory(published=True, title="Velvet")
    image = RunwayImageFactory(runway=published)
    db = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG"}}
    env |= {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "PUBLIC_DATABASE_URL": (
            f"postgres://{public_role}:{PASSWORD}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
        ),
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "testserver",
        "LOG_LEVEL": "ERROR",
    }
    code = f"""
import django, json
django.setup()
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
with CaptureQueriesContext(connections["public"]) as public:
    with CaptureQueriesContext(connections["default"]) as default:
        listing = Client().get("/api/v1/runways/")
        detail = Client().get("/api/v1/runways/{published.pk}/")
        search = Client().get("/api/v1/runways/?q=velvet")
        similar = Client().get("/api/v1/runway-images/{image.pk}/similar/")
print(json.dumps({{
    "statuses": [listing.status_code, detail.status_code, search.status_code,
                 similar.status_code],
    "ids": [row["id"] for row in listing.json()["results"]],
    "user": connections["public"].settings_dict["USER"],
    "public_queries": len(public), "default_queries": len(default),
}}))
"""

    # when: it serves the API
    result = subprocess.run(  # noqa: S603 - our own interpreter, fixed code
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    # then: every read went through the role, and the API answered
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["statuses"] == [200, 200, 200, 200]
    assert report["ids"] == [published.pk]
    assert report["user"] == public_role
    assert report["public_queries"] >= 2
    assert report["default_queries"] == 0


def test_a_migrate_that_recreates_the_views_keeps_the_roles_reads(public_role):
    published = RunwayFactory(published=True)

    # Every migrate re-creates the views (publicapi.apps), which drops their grants.
    call_command("migrate", "--no-input", verbosity=0)

    with connect_as(public_role) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM public_brand_runways")]
        assert ids == [published.pk]
        for view in ("public_image_hashes", "public_brand_names", "public_brands"):
            conn.execute(f"SELECT * FROM {view}")  # noqa: S608 - fixed names
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM brand_runways")


def test_the_role_may_read_every_public_view_the_database_has(public_role):
    with connect_as(public_role) as conn:
        for view in ("public_image_hashes", "public_brand_names", "public_street_snap_images"):
            conn.execute(f"SELECT * FROM {view}")  # noqa: S608 - fixed names


# --- As an attacker would: SQL of the role's own over every public view ---------------------

# Every value of a row the views hide carries one of these: "hidden" in its text, or an id
# from 900000 up.
HIDDEN = re.compile(r"hidden|\b9000\d\d\b", re.IGNORECASE)


@pytest.fixture
def archive_with_hidden_rows():
    """One public runway and one public street snap, and every kind of row the views hide
    beside them: pending, rejected and deleted albums with their images, a deleted image and a
    deleted detail parent of public albums, a brand (and its alias) with no public runway."""
    now = timezone.now()
    ids = iter(range(900_001, 900_100))
    brand = BrandFactory(name="Acme", slug="acme")
    shown = RunwayFactory(published=True, brand=brand, title="Shown", description="In view")
    RunwayImageFactory(runway=shown, phash=1234, phash_algorithm="phash")
    RunwayImageFactory(
        id=next(ids), runway=shown, storage_key="images/hidden/deleted.jpg", deleted_at=now,
        phash=1234, phash_algorithm="phash",
    )  # fmt: skip
    secret = BrandFactory(id=next(ids), name="Hidden House", slug="hidden-house")
    BrandAliasFactory(id=next(ids), brand=secret, alias="Hidden Alias")
    for status in ("pending", "rejected"):
        runway = RunwayFactory(
            id=next(ids), brand=secret, status=status, title=f"Hidden {status} show",
            description="hidden words", season_code=f"HIDDEN-{status}",
        )  # fmt: skip
        RunwayImageFactory(
            id=next(ids), runway=runway, storage_key=f"images/hidden/{status}.jpg",
            phash=1234, phash_algorithm="phash",
        )  # fmt: skip
    gone = RunwayFactory(
        id=next(ids), brand=brand, published=True, deleted_at=now, title="Hidden deleted show"
    )
    RunwayImageFactory(id=next(ids), runway=gone, storage_key="images/hidden/gone.jpg")
    snap = StreetSnapFactory(published=True, city="Oslo", title="Seen")
    parent = StreetSnapImageFactory(
        id=next(ids), street_snap=snap, storage_key="images/hidden/parent.jpg", deleted_at=now
    )
    StreetSnapImageFactory(street_snap=snap, parent=parent, phash=1234, phash_algorithm="phash")
    pending_snap = StreetSnapFactory(id=next(ids), city="Hiddenville", title="Hidden snap")
    StreetSnapImageFactory(
        id=next(ids), street_snap=pending_snap, storage_key="images/hidden/snap.jpg",
        phash=1234, phash_algorithm="phash",
    )  # fmt: skip
    return shown


@pytest.fixture
def leaky_function(public_role):
    """A function that reports every value it is given and is nearly free, so the planner
    runs it as early as it may: what an attacker would write. The role cannot create one
    (test_the_role_cannot_create_functions); it stands for any function the role can call,
    e.g. one in PostgreSQL 14's public schema, where every role may create."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE OR REPLACE FUNCTION public.leak(text) RETURNS boolean LANGUAGE plpgsql "
            "COST 0.0000001 AS 'BEGIN RAISE NOTICE ''%'', $1; RETURN true; END'"
        )
        cursor.execute(f'GRANT EXECUTE ON FUNCTION public.leak(text) TO "{public_role}"')
    yield "public.leak"
    with connection.cursor() as cursor:
        cursor.execute("DROP FUNCTION public.leak(text)")


def view_columns(conn: psycopg.Connection, view: str) -> list[str]:
    cursor = conn.execute(f"SELECT * FROM {view} LIMIT 0")  # noqa: S608 - our view names
    return [column.name for column in cursor.description]


def test_the_role_cannot_create_functions(public_role):
    with connect_as(public_role) as conn:
        for schema in ("pg_temp", "public"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    f"CREATE FUNCTION {schema}.mine(text) RETURNS boolean LANGUAGE sql "
                    "AS 'SELECT true'"
                )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TEMPORARY TABLE mine (id int)")


def test_a_function_of_the_query_never_sees_a_hidden_row(
    public_role, leaky_function, archive_with_hidden_rows
):
    seen: list[str] = []
    with connect_as(public_role) as conn:
        conn.add_notice_handler(lambda notice: seen.append(notice.message_primary or ""))
        for view in public_views(connection):
            for column in view_columns(conn, view):
                conn.execute(
                    f"SELECT count(*) FROM {view} WHERE {leaky_function}({column}::text)"  # noqa: S608
                )
            conn.execute(f"SELECT count(*) FROM {view} v WHERE {leaky_function}(v::text)")  # noqa: S608

    assert "Shown" in seen  # the function ran, on what the views show
    assert [value for value in seen if HIDDEN.search(value)] == []


def test_an_expression_that_fails_on_a_hidden_value_never_fails(
    public_role, archive_with_hidden_rows
):
    # Division by zero exactly when the value is a hidden one: an error would tell the
    # attacker that such a value exists, and a cast's error message would print it.
    failed = []
    with connect_as(public_role) as conn:
        for view in public_views(connection):
            for column in view_columns(conn, view):
                try:
                    conn.execute(
                        f"SELECT count(*) FROM {view} WHERE 1 / CASE WHEN {column}::text"  # noqa: S608
                        r" ~* 'hidden|\m9000\d\d\M' THEN 0 ELSE 1 END = 1"
                    )
                except psycopg.errors.DivisionByZero:
                    failed.append(f"{view}.{column}")

    assert failed == []


def test_the_role_reads_no_table_and_the_tables_beneath_hold_no_hidden_row(
    public_role, archive_with_hidden_rows
):
    with connect_as(public_role) as conn:
        for table in (
            "brand_runways",
            "brand_runway_images",
            "brands",
            "public_brand_runway_rows",
            "public_brand_runway_image_rows",
            "public_brand_name_rows",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"SELECT 1 FROM {table} LIMIT 1")  # noqa: S608 - fixed names

    # As their owner: what the public rows hold, every value of every row.
    with connection.cursor() as cursor:
        for table in public_rows.TABLES:
            cursor.execute(f"SELECT * FROM {table}")  # noqa: S608 - our own tables
            values = [str(value) for row in cursor.fetchall() for value in row]
            assert values, table
            assert [value for value in values if HIDDEN.search(value)] == [], table


def test_a_published_album_whose_bytes_are_not_public_is_in_no_public_row(public_role):
    waiting = StreetSnapFactory(published=True, bytes_public=False, title="Hidden waiting")

    with connect_as(public_role) as conn:
        assert conn.execute("SELECT count(*) FROM public_street_snaps").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT title FROM street_snaps")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM public_street_snap_rows WHERE id = %s", [waiting.pk])
        assert cursor.fetchone() == (0,)


def plan_rows(node: dict) -> list[int]:
    """Every row each scan of a plan read: those it returned and those its filters removed."""
    read = []
    if "Relation Name" in node:
        read.append(
            int(node.get("Actual Rows", 0)) * int(node.get("Actual Loops", 1))
            + int(node.get("Rows Removed by Filter", 0))
            + int(node.get("Rows Removed by Index Recheck", 0))
        )
    for child in node.get("Plans", []):
        read += plan_rows(child)
    return read


def test_the_planner_counts_no_hidden_row(public_role, archive_with_hidden_rows):
    # The attack that recovered hidden slugs and storage keys one comparison at a time: a
    # range the attacker chooses, and the rows the plan says it removed.
    public_count = {}
    with connection.cursor() as cursor:
        for view in public_views(connection):
            cursor.execute(f"SELECT count(*) FROM {view}")  # noqa: S608 - our own views
            public_count[view] = cursor.fetchone()[0]
    with connect_as(public_role) as conn:
        conn.execute("SET enable_seqscan = off")
        for view in public_views(connection):
            for column in view_columns(conn, view):
                for bound in ("", "hidden", "z"):
                    plan = conn.execute(
                        f"EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM {view} "  # noqa: S608
                        f"WHERE {column}::text > %s",
                        [bound],
                    ).fetchone()[0]
                    read = plan_rows(plan[0]["Plan"])
                    assert all(n <= public_count[view] for n in read), (view, column, read)


def test_column_statistics_of_catalog_are_not_the_roles_to_read(
    public_role, archive_with_hidden_rows
):
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE brands, brand_runways, public_brand_runway_rows")

    with connect_as(public_role) as conn:
        stats = conn.execute(
            "SELECT tablename, most_common_vals::text FROM pg_stats "
            "WHERE tablename IN ('brands', 'brand_runways', 'brand_runway_images')"
        ).fetchall()

    assert stats == []


# --- The role's password and name are quoted, never spliced into a DO block -----------------


@pytest.fixture
def role_name():
    name = f"{connection.settings_dict['NAME']}_quoted_reader"
    yield name
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
        if cursor.fetchone():
            cursor.execute(f'DROP OWNED BY "{name}"')
            cursor.execute(f'DROP ROLE "{name}"')


@pytest.mark.parametrize(
    "password",
    ["pa$$word", "it's 100% $tag$ \\\\ ok", "$$; CREATE TABLE pwned (); --"],
    ids=["dollars", "quotes-and-percent", "crafted"],
)
def test_a_password_with_dollar_quotes_is_the_password_and_runs_nothing(role_name, password):
    # when: the printed SQL is run as an operator would, statement by statement in psql
    out = io.StringIO()
    call_command("create_public_role", role_name, "--password", password, stdout=out)
    db = connection.settings_dict
    psql = subprocess.run(  # noqa: S603 - psql with our own arguments
        [shutil.which("psql") or "psql", "-h", db["HOST"], "-p", str(db["PORT"]), "-U", db["USER"],
         "-d", db["NAME"], "-X", "-q"],
        input=out.getvalue(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    # then: every statement ran, the role logs in with exactly that password, and nothing
    # else was created
    assert psql.returncode == 0 and "ERROR" not in psql.stderr, psql.stderr
    with connect_as(role_name, password=password) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (role_name,)
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('pwned')")
        assert cursor.fetchone() == (None,)


def test_execute_takes_a_password_with_dollar_quotes(role_name):
    password = "$$; CREATE TABLE pwned (); --"

    call_command(
        "create_public_role", role_name, "--password", password, "--execute", stdout=io.StringIO()
    )

    with connect_as(role_name, password=password) as conn:
        assert conn.execute("SELECT count(*) FROM public_brand_runways").fetchone() == (0,)
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('pwned')")
        assert cursor.fetchone() == (None,)
