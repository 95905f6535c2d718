"""Liveness and readiness (django-health-check), served by config.ops before the host check.

``/healthz``: the process serves (no dependency touched: a database outage restarts nothing).
``/readyz``: the database answers and is migrated, Redis answers (with ``REDIS_URL``), the
storage reads; each check "OK" or "failing" (why goes to the log), 503 when one fails.
"""

import dataclasses
from typing import ClassVar

import pybreaker
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.utils.cache import add_never_cache_headers
from health_check.base import HealthCheck
from health_check.checks import Database
from health_check.contrib.redis import Redis
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

# A Redis that never answers would hold every probe and scrape for its timeout: after two
# failures in a row they skip it for ten seconds, then one tries again. Per process.
redis_breaker = pybreaker.CircuitBreaker(
    fail_max=2, reset_timeout=10, name="Redis", throw_new_error_on_trip=False
)


@dataclasses.dataclass
class Migrated(HealthCheck):
    """Every migration this code knows is applied: a web process of a new release must not
    take traffic before `migrate` has run (its queries would name columns that do not exist)."""

    alias: str = "default"
    # Once this process has seen its migrations applied they stay applied (a release never
    # unapplies them under running code): later probes skip reading the migration graph.
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


@dataclasses.dataclass
class StorageAnswers(HealthCheck):
    """The media storage answers a read: a HEAD of one small object on S3, a stat on disk.

    Not a write and a delete per probe (django-health-check's Storage): load balancers ask
    every few seconds, and on S3 each of those is a paid request. The object is written once,
    when it is missing: reading an existing key needs only s3:GetObject, where asking for a
    missing one answers 403, not 404, to a role without s3:ListBucket."""

    alias: str = "default"
    key: ClassVar[str] = "health/readyz.txt"

    def run(self) -> None:
        storage = storages[self.alias]
        try:
            if storage.exists(self.key):
                return
        except Exception:  # noqa: BLE001, S110 - a missing key without ListBucket: written below
            pass
        saved = storage.save(self.key, ContentFile(b"ok\n"))
        if saved != self.key:  # another process wrote it meanwhile (a local folder renames)
            storage.delete(saved)


@dataclasses.dataclass
class RedisAnswers(Redis):
    """Redis answers a PING, unless the breaker skips it after recent failures."""

    async def run(self) -> None:
        try:
            with redis_breaker.calling():
                await super().run()
        except pybreaker.CircuitBreakerError as exc:
            raise ServiceUnavailable("skipped: Redis failed just before") from exc


# The name each check answers under: what is checked, never where (no host, port or path).
_NAMES = {
    Database: "database",
    Migrated: "migrations",
    RedisAnswers: "redis",
    StorageAnswers: "storage",
}


class ReadinessView(HealthCheckView):
    def get_checks(self):
        yield Database()
        yield Migrated()
        if settings.REDIS_URL:
            yield RedisAnswers(client_factory=_redis_client)
        yield StorageAnswers()

    def render_to_response_json(self, status):
        # django-health-check answers 500 on a failed check; 503 is what load balancers and
        # Kubernetes read as "not ready, try another". Each check by its name, OK or failing:
        # its own words (a host, a port, a count of migrations) are for the log, which
        # django-health-check writes for every failed check.
        return JsonResponse(
            {
                _NAMES[type(result.check)]: "failing" if result.error else "OK"
                for result in self.results
            },
            status=503 if status >= 500 else status,
        )

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
