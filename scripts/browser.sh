#!/usr/bin/env bash
# Debian's Chromium for the browser tests (Playwright drives it through executablePath;
# Playwright never downloads a browser here). Idempotent: does nothing when it is installed.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi
echo "==> installing Debian's chromium for the browser tests"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
