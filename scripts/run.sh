#!/usr/bin/env bash
# Install and start the system on the embedded default: SQLite, local media, ingest jobs
# in-process. No service needed. Prints the editor login and the crawler secret.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh requirements.txt
export PATH="$PWD/.venv/bin:$PATH"

# Development values, unless the environment already says otherwise.
export DEBUG=${DEBUG:-true}
mkdir -p .dev
if [ -z "${INGEST_SECRETS:-}" ]; then
    [ -s .dev/ingest-secret ] || python -c \
        'import base64, os; print("whsec_" + base64.b64encode(os.urandom(24)).decode())' \
        >.dev/ingest-secret
    INGEST_SECRETS=$(cat .dev/ingest-secret)
    export INGEST_SECRETS
fi
# `make demo` (manage.py ingest_demo) and the walk-through of docs/crawlers.md serve their
# images from this machine; let the local server fetch them, by address or by name (never set
# this in production: it exempts these hosts from the private-address guard).
export INGEST_FETCH_ALLOWED_HOSTS=${INGEST_FETCH_ALLOWED_HOSTS-127.0.0.1,localhost}
host=${HOST:-127.0.0.1}
port=${PORT:-8000}

python manage.py migrate --no-input -v 0
python manage.py dev_editor --password-file .dev/editor-password
cat <<MSG

  Admin:     http://$host:$port/admin/
  API docs:  http://$host:$port/api/docs/
  Crawler signing secret (INGEST_SECRETS): $INGEST_SECRETS
  Local image hosts the server may fetch (INGEST_FETCH_ALLOWED_HOSTS): $INGEST_FETCH_ALLOWED_HOSTS

  Something to review: \`make demo\` in another terminal pushes a runway and a street album.

MSG
exec python manage.py runserver "$host:$port"
