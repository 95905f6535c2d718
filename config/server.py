"""The development server (`manage.py runserver`: the embedded mode's server and every
developer's), made to behave like a server.

- TCP_NODELAY on each client connection: Python's wsgiref writes a response in several small
  parts, and without it every keep-alive response after the first waited for the client's
  delayed ACK, whatever the app did.
- A thread serves one client connection; when the client goes, the thread's database and
  Redis connections are closed with it. Django's own server keeps them for CONN_MAX_AGE in a
  thread that is gone, until PostgreSQL refuses more ("too many clients already").
"""

import logging
import socket

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.core.servers.basehttp import WSGIServer
from django.db import connections

logger = logging.getLogger(__name__)


class DevServer(WSGIServer):
    def get_request(self):
        client, address = super().get_request()
        if client.family in (socket.AF_INET, socket.AF_INET6):
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return client, address

    def shutdown_request(self, request):
        # In the thread that served this client connection, after its last request.
        try:
            super().shutdown_request(request)
        finally:
            close_thread_connections()


def close_thread_connections() -> None:
    """Close this thread's database connections and its caches' Redis connections."""
    connections.close_all()
    for cache in caches.all(initialized_only=True):
        if isinstance(cache, RedisCache):
            try:
                # Django's RedisCache has no public way to close its connection pools.
                for pool in cache._cache._pools.values():  # type: ignore[attr-defined]
                    pool.disconnect()
            except Exception:  # a Redis that is gone has nothing to close
                logger.debug("closing a Redis pool failed", exc_info=True)
