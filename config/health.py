"""Liveness and readiness for load balancers and orchestrators (django-health-check).

``/healthz``: the process serves requests (no dependency is touched, so a database outage
never gets every web process restarted). ``/readyz``: the database answers and is migrated,
Redis answers when ``REDIS_URL`` is set, the media storage takes a write; JSON with one entry
per check, 503 when one fails. Both are served by ``config.ops.OpsEndpointsMiddleware`` ahead
of the host check and the HTTPS redirect, never cached, never throttled.
"""

import dataclasses
from typing import ClassVar

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.utils.cache import add_never_cache_headers
from health_check.base import HealthCheck
from health_check.checks import Database, Storage
from health_check.contrib.redis import Redis
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView


@dataclasses.dataclass
class Migrated(HealthCheck):
    """Every migration this code knows is applied: a web process of a new release must not
    take traffic before `migrate` has run (its queries would name columns that do not exist)."""

    alias: str = "default"
    # Once this process has seen its migrations applied they stay applied (a release never
    # unapplies them under running code): later probes skip reading the migration graph,
    # which costs tens of milliseconds.
    applied: ClassVar[set[str]] = set()

    def run(self) -> None:
        if self.alias in Migrated.applied:
            return
        connection = connections[self.alias]
        try:
            executor = MigrationExecutor(connection)
            plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        except DatabaseError as exc:
            raise ServiceUnavailable(f"cannot read migrations: {type(exc).__name__}") from exc
        finally:
            connection.close()  # this ran in a worker thread: its connection is its own
        if plan:
            raise ServiceUnavailable(f"{len(plan)} migration(s) not applied")
        Migrated.applied.add(self.alias)


class ReadinessView(HealthCheckView):
    def get_checks(self):
        yield Database()
        yield Migrated()
        if settings.REDIS_URL:
            yield Redis(client_factory=_redis_client)
        yield Storage()

    def render_to_response_json(self, status):
        # django-health-check answers 500 on a failed check; 503 is what load balancers and
        # Kubernetes read as "not ready, try another".
        return super().render_to_response_json(503 if status >= 500 else status)

    async def get(self, request, *args, **kwargs):
        # JSON whatever the Accept header says: a probe is not a browser.
        request.GET = request.GET.copy()
        request.GET["format"] = "json"
        return await super().get(request, *args, **kwargs)


def _redis_client():
    from redis.asyncio import Redis as AsyncRedis

    return AsyncRedis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)


readiness = ReadinessView.as_view()


def liveness(request):
    response = JsonResponse({"process": "OK"})
    add_never_cache_headers(response)
    return response
