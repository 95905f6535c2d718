"""Legacy import at production size: wall time, rows/s and peak memory of each phase.

Builds a synthetic legacy database (default 20,000 records and 400,000 images, generated in SQL
with generate_series), migrates two throwaway target databases, then runs four phases, each in
its own process so its peak resident memory is its own: `manage.py migrate_legacy_drafts` as a
dry run, a real run (COPY) and a rerun (a no-op), and a real run through bulk_create into the
second target. Prints one line per phase, with a bare `manage.py check` as the memory baseline,
and the bulk_create / COPY ratio. All three databases are dropped at the end (unless --keep).

    .venv/bin/python bench/legacy_import.py [--records 20000] [--images-per-record 20]

Needs PostgreSQL: BENCH_DATABASE_URL names the server (default
postgres://postgres@127.0.0.1:5432/postgres); the bench makes its own databases there.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tests" / "catalog" / "legacy" / "schema.sql"
SERVER = urlsplit(
    os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
)


def url(name: str) -> str:
    return urlunsplit(SERVER._replace(path=f"/{name}"))


def _drop_sql(name: str) -> sql.Composed:
    return sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))


def recreate(name: str) -> None:
    with psycopg.connect(url("postgres"), autocommit=True) as admin:
        admin.execute(_drop_sql(name))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop(name: str) -> None:
    with psycopg.connect(url("postgres"), autocommit=True) as admin:
        admin.execute(_drop_sql(name))


RECORDS_SQL = [
    """INSERT INTO brands (id, name, slug, is_featured)
       SELECT g, 'Brand ' || g, 'brand-' || g, (g %% 10 = 0)::int
       FROM generate_series(1, %(brands)s) g""",
    # Published runways: (brand, season) is unique while g < brands * seasons. The cover is
    # the key of the album's second image; one in 200 is soft-deleted.
    """INSERT INTO brand_runways (id, brand_id, title, year, season_code, collection_type,
                                  cover, source, source_url, is_deleted)
       SELECT g, g %% %(brands)s + 1, 'Show ' || g, 2000 + (g / %(brands)s) %% 25,
              'S' || (g / %(brands)s), 'ready-to-wear',
              'images/' || md5('brand_runway_images-' || ((g - 1) * %(per_record)s + 2))
                || '.jpg',
              'vogue', 'https://example.com/shows/' || g, (g %% 200 = 0)::int
       FROM generate_series(1, %(runways)s) g""",
    # Drafts: the first quarter approved (the key of published row g: their counterpart), then
    # pending (1 in 100 on a published key: superseded), then rejected.
    """INSERT INTO brand_runway_drafts (id, brand_id, title, year, season_code,
                                        collection_type, status, job_id, reviewer,
                                        reject_reason, created_at)
       SELECT g, g %% %(brands)s + 1, 'Draft ' || g, 2024, 'S' || (g / %(brands)s),
              CASE WHEN g <= %(approved)s OR g %% 100 = 0 THEN 'ready-to-wear'
                   ELSE 'couture' END,
              CASE WHEN g <= %(approved)s THEN 'approved'
                   WHEN g <= %(pending_until)s THEN 'pending' ELSE 'rejected' END,
              g + 100000, CASE WHEN g > %(pending_until)s THEN 'anna' ELSE '' END,
              CASE WHEN g > %(pending_until)s THEN 'blurry' ELSE '' END,
              now() - make_interval(mins => g)
       FROM generate_series(1, %(runway_drafts)s) g""",
    """INSERT INTO street_snaps (id, city, year, month, title)
       SELECT g, 'City ' || g %% 50, 2000 + g %% 25, g %% 12 + 1,
              CASE WHEN g %% 500 = 0 THEN NULL ELSE 'Street ' || g END
       FROM generate_series(1, %(streets)s) g""",
    """INSERT INTO street_snap_drafts (id, city, year, month, title, status, created_at)
       SELECT g, 'City ' || g %% 50, 2025, g %% 12 + 1, 'Draft  ' || g,
              CASE WHEN g %% 3 = 0 THEN 'rejected' ELSE 'pending' END,
              now() - make_interval(mins => g)
       FROM generate_series(1, %(street_drafts)s) g""",
]

# Image k of record r has id (r - 1) * per_record + k + 1; the last image of each album is a
# near-duplicate of the first; in street albums every fourth image is a detail of the one
# before it.
IMAGES_SQL = """INSERT INTO {images} (id, {fk}, url, sort_order, width, height, phash,
                                     is_duplicate, dup_of, {extra_columns})
    SELECT id, r, 'images/' || md5({prefix} || id) || '.jpg', k, 800, 1200,
           ('x' || substr(md5(id::text), 1, 16))::bit(64)::bigint,
           (k = %(last)s)::int, CASE WHEN k = %(last)s THEN id - k ELSE 0 END,
           {extra_values}
    FROM (SELECT r, k, (r - 1) * %(per_record)s + k + 1 AS id
          FROM generate_series(1, %(count)s) r, generate_series(0, %(last)s) k) s"""


def build_legacy(name: str, records: int, per_record: int) -> dict[str, int]:
    """Shares of the records: 60% published runways, 20% runway drafts (a quarter approved,
    each with its published counterpart; half pending; a quarter rejected), 15% published
    street snaps, 5% street drafts."""
    counts = {
        "brands": 500,
        "per_record": per_record,
        "runways": records * 60 // 100,
        "runway_drafts": records * 20 // 100,
        "streets": records * 15 // 100,
    }
    counts["street_drafts"] = (
        records - counts["runways"] - counts["runway_drafts"] - counts["streets"]
    )
    counts["approved"] = counts["runway_drafts"] // 4
    counts["pending_until"] = counts["runway_drafts"] * 3 // 4
    with psycopg.connect(url(name), autocommit=True) as conn:
        conn.execute(SCHEMA.read_text())
        for statement in RECORDS_SQL:
            conn.execute(statement, counts)
        for images, fk, count, street in (
            ("brand_runway_images", "runway_id", "runways", False),
            ("brand_runway_draft_images", "draft_id", "runway_drafts", False),
            ("street_snap_images", "snap_id", "streets", True),
            ("street_snap_draft_images", "draft_id", "street_drafts", True),
        ):
            query = sql.SQL(IMAGES_SQL).format(
                images=sql.Identifier(images),
                fk=sql.Identifier(fk),
                prefix=sql.Literal(f"{images}-"),
                extra_columns=sql.SQL("is_detail, parent_image_id" if street else "look_index"),
                extra_values=sql.SQL(
                    "(k %% 4 = 3)::int, CASE WHEN k %% 4 = 3 THEN id - 1 ELSE 0 END"
                    if street
                    else "k / 2 + 1"
                ),
            )
            conn.execute(
                query,
                {"last": per_record - 1, "per_record": per_record, "count": counts[count]},
            )
        conn.execute("ANALYZE")
    return {"records": records, "images": records * per_record, "brands": counts["brands"]}


def run_phase(command: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS in MiB, exit status and stdout of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 - our own scripts
        [sys.executable, *command],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    stdout = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), stdout


def bulk_create_child(legacy_url: str) -> None:
    """The real run, writing through Django's bulk_create (the portable path) instead of COPY."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from catalog.legacy import inserters, writer

    writer.default_inserter = inserters.OrmInserter
    call_command("migrate_legacy_drafts", "--legacy-url", legacy_url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--images-per-record", type=int, default=20)
    parser.add_argument(
        "--keep", action="store_true", help="keep the databases (to profile or inspect them)"
    )
    parser.add_argument("--bulk-create-child", metavar="LEGACY_URL", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bulk_create_child:
        bulk_create_child(options.bulk_create_child)
        return
    source, target, target_orm = "bench_legacy_source", "bench_legacy_target", "bench_legacy_orm"
    env = {**os.environ, "DATABASE_URL": url(target), "DEBUG": "false"}
    env_orm = {**env, "DATABASE_URL": url(target_orm)}
    try:
        for name in (source, target, target_orm):
            recreate(name)
        started = time.perf_counter()
        sizes = build_legacy(source, options.records, options.images_per_record)
        print(
            f"legacy archive: {sizes['records']:,} records, {sizes['images']:,} images,"
            f" {sizes['brands']:,} brands (built in {time.perf_counter() - started:.1f} s)"
        )
        for environment in (env, env_orm):
            subprocess.run(  # noqa: S603
                [sys.executable, "manage.py", "migrate", "-v", "0"],
                cwd=ROOT,
                env=environment,
                check=True,
            )
        rows = sizes["records"] + sizes["images"] + sizes["brands"]
        _, baseline, _, _ = run_phase(["manage.py", "check"], env)
        print(f"{'phase':<30}{'wall s':>9}{'rows/s':>12}{'peak RSS MiB':>15}{'above check':>13}")
        print(f"{'manage.py check (baseline)':<30}{'':>9}{'':>12}{baseline:>15.0f}{'':>13}")
        command = ["manage.py", "migrate_legacy_drafts", "--legacy-url", url(source)]
        walls = {}
        for label, phase, environment in (
            ("dry run", [*command, "--dry-run"], env),
            ("real run (COPY)", command, env),
            ("rerun (no-op)", command, env),
            ("real run (bulk_create)", [__file__, "--bulk-create-child", url(source)], env_orm),
        ):
            wall, rss, code, stdout = run_phase(phase, environment)
            if code != 0:
                print(stdout[-3000:])
                raise SystemExit(f"{label} exited {code}")
            walls[label] = wall
            print(
                f"{label:<30}{wall:>9.1f}{rows / wall:>12,.0f}{rss:>15.0f}{rss - baseline:>13.0f}"
            )
            if label == "rerun (no-op)":
                assert "nothing to import" in stdout, stdout[-2000:]
        ratio = walls["real run (bulk_create)"] / walls["real run (COPY)"]
        print(f"bulk_create / COPY wall time: {ratio:.1f}x (one run each, same archive)")
    finally:
        if not options.keep:
            for name in (source, target, target_orm):
                drop(name)


if __name__ == "__main__":
    main()
