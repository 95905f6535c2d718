#!/usr/bin/env bash
# The whole check: lint, migrations, import contracts, types, the suite on PostgreSQL, and the
# portable part of the suite on SQLite. Extra arguments go to both pytest runs
# (e.g. scripts/test.sh -m "not slow" to skip the stress and fault tests).
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
trap 'rm -rf "$sqlite_dir"' EXIT

echo "==> ruff"
ruff check .
ruff format --check .

echo "==> migrations are complete"
DATABASE_URL="sqlite:///$sqlite_dir/check.sqlite3" python manage.py makemigrations --check --dry-run

echo "==> import contracts"
lint-imports

echo "==> types"
# The application packages, as pyproject.toml's [tool.mypy] names them; the django-stubs plugin
# imports config.settings, which needs no environment (the variables are unset above).
mypy

echo "==> suite on PostgreSQL"
DATABASE_URL="$pg_url" python -m pytest "$@"

echo "==> portable suite on SQLite"
# conftest.py deselects the tests marked postgres when the database is SQLite.
DATABASE_URL="sqlite:///$sqlite_dir/test.sqlite3" python -m pytest "$@"
