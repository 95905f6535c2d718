#!/usr/bin/env bash
# Debian's Varnish and varnish-modules (xkey, which config/varnish.vcl purges by) for the edge
# tests and bench/edge.py (they start varnishd themselves, on a free port, with
# config/varnish.vcl; the package's own service is never used). Idempotent: does nothing when
# both are installed. Installing needs root (or a sudo without a password) and the Debian
# archive; without them it stops at once with one line (scripts/need.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh

if [ -x /usr/sbin/varnishd ] && [ -n "$(find /usr/lib -name libvmod_xkey.so -print -quit)" ]; then
    exit 0
fi
echo "==> installing Debian's varnish and varnish-modules for the edge tests"
apt_install varnish varnish-modules
/usr/sbin/varnishd -V 2>&1 | head -n 1
