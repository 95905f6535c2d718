#!/usr/bin/env bash
# What the browser tests need: Debian's Chromium (Playwright drives it through executablePath;
# Playwright never downloads a browser here), and axe-core from npm (package.json, pinned by
# package-lock.json), which the accessibility tests inject into the pages. Idempotent: does
# nothing when both are installed. Installing needs root (or a sudo without a password) and
# the Debian archive, and the npm registry for axe-core; without them it stops at once with
# one line saying what is missing (scripts/need.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh

if [ ! -x /usr/bin/chromium ]; then
    echo "==> installing Debian's chromium for the browser tests"
    apt_install chromium
    /usr/bin/chromium --version
fi

if [ ! -f node_modules/axe-core/axe.min.js ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "==> installing Debian's npm for axe-core"
        apt_install npm
    fi
    echo "==> installing axe-core (package-lock.json) for the accessibility tests"
    log=$(mktemp "${TMPDIR:-/tmp}/npm-ci.XXXXXX")
    npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1 ||
        missing "axe-core (node_modules/)" "npm ci failed (is the npm registry reachable? its output: $log)"
    rm -f "$log"
fi
