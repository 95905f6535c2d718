#!/usr/bin/env bash
# What the browser tests need: Debian's Chromium (Playwright drives it through executablePath;
# Playwright never downloads a browser here), and axe-core from npm (package.json, pinned by
# package-lock.json), which the accessibility tests inject into the pages. Idempotent: does
# nothing when both are installed.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
updated=""
apt_install() {
    if [ -z "$updated" ]; then
        $sudo apt-get update -qq
        updated=yes
    fi
    $sudo apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x /usr/bin/chromium ]; then
    echo "==> installing Debian's chromium for the browser tests"
    apt_install chromium
    /usr/bin/chromium --version
fi

if [ ! -f node_modules/axe-core/axe.min.js ]; then
    if ! command -v npm >/dev/null; then
        echo "==> installing Debian's npm for axe-core"
        apt_install npm
    fi
    echo "==> installing axe-core (package-lock.json) for the accessibility tests"
    npm ci --no-audit --no-fund --loglevel=error
fi
