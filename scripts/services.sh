#!/usr/bin/env bash
# Start PostgreSQL and Redis on this machine if they are down (the tests need both, on
# 127.0.0.1 with trust auth). It installs neither: a machine without them gets one line
# saying which is missing and how to install it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/need.sh

command -v pg_isready >/dev/null 2>&1 ||
    missing "PostgreSQL" "install it (\`apt-get install postgresql\`, 14 or newer) and allow trust auth on 127.0.0.1"
command -v redis-cli >/dev/null 2>&1 ||
    missing "Redis" "install it (\`apt-get install redis-server\`)"

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    echo "==> starting PostgreSQL"
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    [ -n "$version" ] && command -v pg_ctlcluster >/dev/null 2>&1 ||
        missing "a PostgreSQL cluster to start" "start PostgreSQL on 127.0.0.1:5432 yourself (no Debian cluster in /etc/postgresql)"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    echo "==> starting Redis"
    command -v redis-server >/dev/null 2>&1 ||
        missing "redis-server" "install it (\`apt-get install redis-server\`) or start Redis on 127.0.0.1:6379"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
pg_isready -q -h 127.0.0.1 -p 5432 || { echo "error: PostgreSQL is not reachable on 127.0.0.1:5432" >&2; exit 1; }
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null || { echo "error: Redis is not reachable on 127.0.0.1:6379" >&2; exit 1; }
