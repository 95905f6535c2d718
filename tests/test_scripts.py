"""The install scripts on a machine that lacks what they would install or start: each stops at
once with one line naming what is missing and how to get it (scripts/need.sh), never with a
page of apt, npm or pip output or a bare `command not found`."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT

# What the scripts themselves run, found on this machine; nothing else is on the test's PATH.
BASICS = ["bash", "dirname", "env", "mktemp", "rm", "cat", "grep", "ls", "sort", "tail", "seq"]


@pytest.fixture
def bare_path(tmp_path) -> Path:
    """A PATH with the basic tools only: no apt-get, npm, PostgreSQL, Redis or Python."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in BASICS:
        found = shutil.which(tool)
        if found:
            (folder / tool).symlink_to(found)
    return folder


def fake(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def run(args: list[str], path: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - the repository's own scripts, fixed arguments
        args,
        cwd=cwd,
        env={"PATH": str(path), "HOME": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_an_apt_package_without_apt_get_says_so(bare_path):
    result = run(["bash", "-c", ". scripts/need.sh; apt_install chromium"], bare_path)

    line = one_line(result)
    assert line.startswith("error: chromium is missing; no apt-get on this system")


def test_an_apt_package_without_root_or_sudo_names_the_command_that_gets_it(bare_path):
    # given a user who is not root, whose sudo asks for a password, on a Debian machine
    fake(bare_path, "id", "echo 1000")
    fake(bare_path, "sudo", "exit 1")
    fake(bare_path, "apt-get", "echo apt-get must not run >&2; exit 3")

    result = run(["bash", "-c", ". scripts/need.sh; apt_install varnish"], bare_path)

    assert one_line(result) == (
        "error: varnish is missing; installing it needs root: "
        "run `sudo apt-get install varnish`, then this again"
    )


def test_an_unreachable_archive_is_one_line_with_apt_gets_output_kept_aside(bare_path):
    # given root, and an apt-get whose update cannot reach the archive
    fake(bare_path, "id", "echo 0")
    fake(
        bare_path,
        "apt-get",
        "echo 'E: Failed to fetch http://deb.example/ Temporary failure'; exit 100",
    )

    result = run(["bash", "-c", ". scripts/need.sh; apt_install chromium"], bare_path)

    line = one_line(result)
    assert line.startswith("error: chromium is missing; apt-get update failed")
    assert "Debian archive reachable" in line
    kept = Path(line.rsplit("its output: ", 1)[1].rstrip(")"))
    assert "Failed to fetch" in kept.read_text()
    kept.unlink()


def test_services_without_postgresql_say_which_and_how_to_install_it(bare_path):
    result = run(["scripts/services.sh"], bare_path)

    assert one_line(result).startswith(
        "error: PostgreSQL is missing; install it (`apt-get install postgresql`"
    )


def test_bootstrap_without_a_new_enough_python_says_so(bare_path, tmp_path):
    # given a copy of the repository's scripts with no .venv beside them, and no Python
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", copy / "scripts")

    result = run(["scripts/bootstrap.sh"], bare_path, cwd=copy)

    assert one_line(result) == (
        "error: Python 3.12 or newer is missing; "
        "install python3.12 or newer (on PATH, or with pyenv)"
    )
    assert not (copy / ".venv").exists()
