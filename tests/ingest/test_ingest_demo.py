"""`manage.py ingest_demo`, run as a crawler author runs it: a separate process."""

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    # A port that was free a moment ago: nothing listens on it.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_without_a_server_it_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "LANG"}}
    url = f"http://127.0.0.1:{closed_port()}"

    result = subprocess.run(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", "ingest_demo", "--url", url, "--secret", "whsec_unused"],
        cwd=ROOT,
        env={**env, "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"CommandError: No server answers at {url}")
    assert "make run" in line
