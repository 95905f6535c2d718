#!/usr/bin/env bash
# The whole check: lint, migrations, import contracts, the code's shape, types, the suite on
# PostgreSQL, and the portable part of the suite on SQLite beside it. Extra arguments go to both
# pytest runs (e.g. scripts/test.sh -m "not slow" to skip the stress and fault tests).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh requirements-dev.txt
scripts/services.sh
scripts/browser.sh
scripts/varnish.sh

export PATH="$PWD/.venv/bin:$PATH"
unset DATABASE_URL REDIS_URL AWS_STORAGE_BUCKET_NAME INGEST_SECRETS
# Tests own their settings; the test database is test_$TEST_DB_NAME on the local PostgreSQL.
pg_url="postgres://${PGUSER:-postgres}@127.0.0.1:5432/${TEST_DB_NAME:-archive}"
sqlite_dir=$(mktemp -d)
# On the way out (an interrupt too) the SQLite pass, if it still runs, goes with the folder.
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$sqlite_dir"' EXIT

echo "==> ruff"
ruff check .
ruff format --check .

echo "==> migrations are complete"
DATABASE_URL="sqlite:///$sqlite_dir/check.sqlite3" python manage.py makemigrations --check --dry-run

echo "==> import contracts"
lint-imports

echo "==> the code's shape: module sizes, the kinds told apart once (scripts/check_shape.py)"
python scripts/check_shape.py

echo "==> types"
# The application packages, as pyproject.toml's [tool.mypy] names them; the django-stubs plugin
# imports config.settings, which needs no environment (the variables are unset above).
mypy

# The two passes run side by side: the PostgreSQL one waits on workers, servers and the
# database much of its time, which the SQLite one (in-process, on the CPU) fills. Each has
# its own Redis database; the SQLite pass's output follows the PostgreSQL pass's.
echo "==> suite on PostgreSQL, and its portable part on SQLite beside it"
# conftest.py deselects the tests marked postgres when the database is SQLite.
DATABASE_URL="sqlite:///$sqlite_dir/test.sqlite3" TEST_REDIS_URL=redis://127.0.0.1:6379/14 \
    python -m pytest -p no:cacheprovider "$@" >"$sqlite_dir/sqlite.log" 2>&1 &
sqlite_pass=$!
postgres_status=0
DATABASE_URL="$pg_url" TEST_REDIS_URL=redis://127.0.0.1:6379/15 python -m pytest "$@" ||
    postgres_status=$?
sqlite_status=0
wait "$sqlite_pass" || sqlite_status=$?

echo "==> portable suite on SQLite (ran beside the PostgreSQL pass)"
cat "$sqlite_dir/sqlite.log"
echo "==> PostgreSQL pass: exit $postgres_status; SQLite pass: exit $sqlite_status"
[ "$postgres_status" -eq 0 ] && [ "$sqlite_status" -eq 0 ]
