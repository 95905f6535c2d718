"""What the fault suite measured: jobs, records, duplicates, half-written records, retries and
time to drain under each fault (docs/operations.md, *Operations: reliability*).

Runs the fault scenarios of tests/faults (real gunicorn, rq worker processes, PostgreSQL, and a
Redis and an S3 server of their own) once, with pytest, and prints one table row per scenario
from the figures each scenario records. The scenarios assert that nothing was lost; a failed
assertion fails this script too.

Database: pytest-django's test database on BENCH_DATABASE_URL's PostgreSQL server (default
postgres://postgres@127.0.0.1:5432/postgres), named test_bench_faults, dropped at the end.

Run: .venv/bin/python bench/faults.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COLUMNS = [
    ("scenario", "scenario"),
    ("albums", "albums"),
    ("accepted", "202s"),
    ("jobs_finished", "jobs finished"),
    ("records", "records"),
    ("duplicate_records", "duplicates"),
    ("half_written", "half-written"),
    ("job_retries", "job retries"),
    ("lost_executions", "lost executions"),
    ("drain_seconds", "time to drain (s)"),
    ("faults", "faults injected and seen"),
]


def main() -> int:
    server = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    base = server.rpartition("/")[0]
    with tempfile.TemporaryDirectory() as folder:
        figures_file = Path(folder) / "figures.jsonl"
        env = {
            **os.environ,
            "DATABASE_URL": f"{base}/bench_faults",
            "FAULT_FIGURES": str(figures_file),
            "FAULT_LOG_DIR": folder,
        }
        run = subprocess.run(  # noqa: S603 - our own test suite
            [sys.executable, "-m", "pytest", "tests/faults", "-q", "-p", "no:cacheprovider"],
            cwd=ROOT,
            env=env,
            check=False,
        )
        rows = (
            [json.loads(line) for line in figures_file.read_text().splitlines()]
            if (figures_file.exists())
            else []
        )
    print()
    print("| " + " | ".join(title for _, title in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        cells = []
        for key, _ in COLUMNS:
            value = row[key]
            if key == "faults":
                value = ", ".join(f"{k} {v}" for k, v in sorted(value.items()) if v)
            cells.append(str(value))
        print("| " + " | ".join(cells) + " |")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
