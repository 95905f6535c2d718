"""The development server (`manage.py runserver`: the embedded mode's server and every
developer's), made to behave like a server.

- TCP_NODELAY on each client connection: Python's wsgiref writes a response in several small
  parts, and without it every keep-alive response after the first waited for the client's
  delayed ACK, whatever the app did.
- A thread serves one client connection; when the client goes, the thread's database
  connections are closed with it. Django's own server keeps them for CONN_MAX_AGE in a thread
  that is gone, until PostgreSQL refuses more ("too many clients already"). Redis's are the
  process's pool's (django-redis), shared by the threads.
"""

import socket

from django.core.servers.basehttp import WSGIServer
from django.db import connections


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
            connections.close_all()
