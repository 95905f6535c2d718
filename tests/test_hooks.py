"""The git hooks of .pre-commit-config.yaml, run by pre-commit itself in a scratch repository
(so the developer's own work tree is never stashed by a test)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


@pytest.fixture
def scratch_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # noqa: S603, S607
    shutil.copy(ROOT / ".pre-commit-config.yaml", repo)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)  # noqa: S603, S607
    return repo


def commit_msg_hook(repo: Path, message: str) -> subprocess.CompletedProcess:
    message_file = repo / "COMMIT_EDITMSG"
    message_file.write_text(message)
    return subprocess.run(  # noqa: S603 - the venv's pre-commit with fixed arguments
        [
            str(PRE_COMMIT),
            "run",
            "commit-subject",
            "--hook-stage",
            "commit-msg",
            "--commit-msg-filename",
            str(message_file),
        ],
        cwd=repo,
        env={"PATH": "/usr/bin:/bin", "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_subject_of_72_characters_passes_whatever_the_body(scratch_repo):
    message = "s" * 72 + "\n\n" + "a body line may be longer than the subject " * 5 + "\n"

    result = commit_msg_hook(scratch_repo, message)

    assert result.returncode == 0, result.stdout


def test_a_subject_of_73_characters_is_refused(scratch_repo):
    result = commit_msg_hook(scratch_repo, "s" * 73 + "\n\nbody\n")

    assert result.returncode == 1
    assert "commit subject at most 72 characters" in result.stdout
    assert "Failed" in result.stdout
