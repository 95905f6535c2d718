#!/usr/bin/env bash
# Create .venv with a Python >= 3.12 and install the pinned requirements into it.
# Usage: scripts/bootstrap.sh [requirements-file]   (default: requirements.txt)
# Quiet when nothing changed: the install is skipped while the requirements file's hash matches.
# Installing needs PyPI (the pinned packages); when it cannot be reached, or Python or its venv
# module is missing, it stops at once with one line saying what is missing (scripts/need.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh
reqs=${1:-requirements.txt}

# pip_quietly ARGS...: pip with its output in a file, shown only when it says something that
# matters; one line and exit when it fails.
pip_quietly() {
    local log
    log=$(mktemp "${TMPDIR:-/tmp}/pip-install.XXXXXX")
    .venv/bin/python -m pip "$@" >"$log" 2>&1 ||
        missing "Python packages ($reqs)" "pip could not install them (is PyPI reachable? its output: $log)"
    # Some machines' pip.conf names local package folders that may be absent; pip warns about
    # each one on every install. Those lines are noise; everything else is shown.
    grep -v '^WARNING: Location .* is ignored' "$log" || true
    rm -f "$log"
}

find_python() {
    local candidate
    for candidate in python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            command -v "$candidate"
            return
        fi
    done
    # pyenv installs that are not on PATH (a bare python3.12 shim fails without PYENV_VERSION).
    if command -v pyenv >/dev/null 2>&1; then
        local version
        for version in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.(1[2-9]|[2-9][0-9])' | sort -V); do
            local root
            root=$(pyenv root)/versions/$version/bin/python3
            if [ -x "$root" ]; then
                echo "$root"
                return
            fi
        done
    fi
    return 1
}

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    python=$(find_python) ||
        missing "Python 3.12 or newer" "install python3.12 or newer (on PATH, or with pyenv)"
    echo "==> creating .venv with $python ($("$python" --version))"
    rm -rf .venv
    "$python" -m venv .venv >/dev/null 2>&1 || {
        rm -rf .venv
        missing "Python's venv module" "install it (Debian: \`apt-get install python3-venv\`)"
    }
    pip_quietly install --quiet --upgrade pip
fi

stamp=.venv/.installed-$(basename "$reqs")
want=$(cat requirements*.txt constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "==> installing $reqs"
    pip_quietly install --quiet --disable-pip-version-check -r "$reqs" -c constraints.txt
    echo "$want" >"$stamp"
fi
