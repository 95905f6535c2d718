"""What the fault suite measured: jobs, records, duplicates, half-written records, retries and
time to drain under each fault (docs/operations.md, *Operations: reliability*).

Runs the fault scenarios of tests/faults (real gunicorn, rq worker processes, PostgreSQL, and a
Redis and an S3 server of their own) with pytest, and prints one table row per scenario and run
from the figures each scenario records, then, with more than one run, the median time to drain
of each scenario. The scenarios assert that nothing was lost; a failed assertion fails this
script too.

The database blip (`db_blip`) is one job whose database goes away for 4 s mid-job; its time to
drain is counted from the database's return to the job's end (its retry included).

Database: pytest-django's test database on BENCH_DATABASE_URL's PostgreSQL server (default
postgres://postgres@127.0.0.1:5432/postgres), named test_bench_faults, dropped at the end.

Run: .venv/bin/python bench/faults.py [-k PYTEST_EXPRESSION] [--runs N]
  e.g. bench/faults.py -k blip --runs 5: the time a job takes to finish after a blip
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="expression", help="only the scenarios pytest -k selects")
    parser.add_argument("--runs", type=int, default=1, help="run the scenarios this many times")
    options = parser.parse_args()
    server = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    base = server.rpartition("/")[0]
    command = [sys.executable, "-m", "pytest", "tests/faults", "-q", "-p", "no:cacheprovider"]
    if options.expression:
        command += ["-k", options.expression]
    returncode = 0
    with tempfile.TemporaryDirectory() as folder:
        figures_file = Path(folder) / "figures.jsonl"
        env = {
            **os.environ,
            "DATABASE_URL": f"{base}/bench_faults",
            "FAULT_FIGURES": str(figures_file),
            "FAULT_LOG_DIR": folder,
        }
        for _ in range(options.runs):
            run = subprocess.run(command, cwd=ROOT, env=env, check=False)  # noqa: S603 - ours
            returncode = returncode or run.returncode
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
    if options.runs > 1:
        print()
        drains: dict[str, list[float]] = {}
        for row in rows:
            drains.setdefault(row["scenario"], []).append(row["drain_seconds"])
        for scenario, seconds in drains.items():
            print(
                f"{scenario}: median time to drain {statistics.median(seconds):.1f} s "
                f"over {len(seconds)} runs (min {min(seconds):.1f}, max {max(seconds):.1f})"
            )
    return returncode


if __name__ == "__main__":
    sys.exit(main())
