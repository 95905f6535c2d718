#!/usr/bin/env bash
# Debian's Varnish and varnish-modules (xkey, which config/varnish.vcl purges by) for the edge
# tests and bench/edge.py (they start varnishd themselves, on a free port, with
# config/varnish.vcl; the package's own service is never used). Idempotent: does nothing when
# both are installed.
set -euo pipefail

if [ -x /usr/sbin/varnishd ] && [ -n "$(find /usr/lib -name libvmod_xkey.so -print -quit)" ]; then
    exit 0
fi
echo "==> installing Debian's varnish and varnish-modules for the edge tests"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq varnish varnish-modules >/dev/null
/usr/sbin/varnishd -V 2>&1 | head -n 1
