#!/usr/bin/env bash
# Debian's Varnish for the edge tests and bench/edge.py (they start varnishd themselves, on a
# free port, with config/varnish.vcl; the package's own service is never used). Idempotent:
# does nothing when it is installed. Installing needs root (or a sudo without a password) and
# the Debian archive; without them it stops at once with one line (scripts/need.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh

if [ -x /usr/sbin/varnishd ]; then
    exit 0
fi
echo "==> installing Debian's varnish for the edge tests"
apt_install varnish
/usr/sbin/varnishd -V 2>&1 | head -n 1
