#!/usr/bin/env bash
# Something to review on a first run: push a demo runway and a demo street album to the server
# `make run` started (same HOST and PORT), as a crawler would, and print each job's report.
# Run it in a second terminal while `make run` serves; again for two more albums.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh requirements.txt
host=${HOST:-127.0.0.1}
[ "$host" = "0.0.0.0" ] && host=127.0.0.1  # listening everywhere: reached here as 127.0.0.1
port=${PORT:-8000}
.venv/bin/python manage.py ingest_demo --url "http://$host:$port"
cat <<MSG

  The albums wait in the review queue: http://$host:$port/admin/catalog/runway/
  and http://$host:$port/admin/catalog/streetsnap/ (log in as \`editor\`).
MSG
