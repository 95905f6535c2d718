"""The project's runserver (config.server): TCP_NODELAY on each client connection, and a
client connection's thread closes its database connections when the client goes, and Redis
connections are the process's pool's, not one per client."""

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.core.management import get_commands
from django.db import connection

from config.server import DevServer

ROOT = Path(__file__).resolve().parent.parent.parent


def test_manage_py_runserver_is_the_projects():
    assert get_commands()["runserver"] == "config"


def test_each_client_connection_gets_tcp_nodelay():
    server = DevServer(("127.0.0.1", 0), None)
    try:
        client = socket.create_connection(server.server_address)
        accepted, _ = server.get_request()

        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)

        accepted.close()
        client.close()
    finally:
        server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_connections(database: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        )
        return cursor.fetchone()[0]


def redis_clients(url: str, name: str) -> int:
    """The server's connections to Redis: those that carry its client name."""
    client = redis.Redis.from_url(url)
    try:
        return sum(1 for c in client.client_list() if c.get("name") == name)
    finally:
        client.close()


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_runserver_keeps_no_connection_of_a_client_that_went():
    database = connection.settings_dict["NAME"]
    redis_url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    name = f"runserver-test-{os.getpid()}"
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database}",
        "REDIS_URL": f"{redis_url}?client_name={name}",
        "DEBUG": "true",  # as scripts/run.sh runs it
        "CONN_MAX_AGE": "60",
        "PUBLIC_API_THROTTLE_RATE": "100000/min",
    }
    server = subprocess.Popen(  # noqa: S603 - our own manage.py, on loopback
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)

        # 200 clients one after the other, each a connection of its own (no keep-alive),
        # each a request that reads the database (and counts in the throttle, in Redis).
        for _ in range(200):
            client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            client.request("GET", "/api/v1/runways/", headers={"Connection": "close"})
            response = client.getresponse()
            response.read()
            client.close()
            assert response.status == 200

        # Each client's thread closed its connections as it ended (the last thread may still
        # be closing its own: waited for, a few seconds at most). Redis: the one connection
        # the process's pool keeps for the next client, whatever the number of clients gone.
        for _ in range(100):
            if server_connections(database) == 0:
                break
            time.sleep(0.1)
        assert server_connections(database) == 0
        assert redis_clients(redis_url, name) <= 1
    finally:
        server.terminate()
        server.wait(timeout=30)
