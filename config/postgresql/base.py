"""Django's PostgreSQL backend, with a health check that costs no round trip.

With CONN_HEALTH_CHECKS, Django checks a kept connection at its first use in each request by
sending ``SELECT 1``: a round trip per request, an eighth of a small public API response's
time (docs/api.md, "Throughput"). Here the check asks the connection's socket instead. A
connection the server ended (a restart, ``pg_terminate_backend``, ``idle_session_timeout``,
a proxy's idle timeout) has something to read while it should be idle: the server's
goodbye or the end of the stream. So an idle connection with nothing to read is taken as
usable; one that has anything to read, or that psycopg knows to be broken, is closed and the
request opens a new one, as Django does after a failed ``SELECT 1``. What neither check can
see in time (a peer gone silent without closing) is the TCP keepalive's to notice.
"""

import select

from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        pgconn = connection.pgconn
        if pgconn.status != pq.ConnStatus.OK:
            return False
        if pgconn.transaction_status != pq.TransactionStatus.IDLE:
            # Inside a transaction (or a failed one): not idle, ask the server.
            return super().is_usable()
        poller = select.poll()
        poller.register(pgconn.socket, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
