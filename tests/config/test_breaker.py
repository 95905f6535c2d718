"""The Redis circuit breaker: after a few failures in a row, the web processes skip Redis for
a while (the throttle lets requests through, /readyz says failing, an enqueue is left to
reconcile), log it once, and try again one caller at a time. A hung Redis is a socket of the
test's own that accepts and never answers (tests.support.HungRedis)."""

import logging

import pytest

from config import breaker
from config.breaker import Breaker
from ingest.models import IngestJob
from ingest.queueing import ingest_job_enqueue
from tests.factories import IngestJobFactory


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(breaker.time, "monotonic", clock)
    return clock


def test_it_opens_after_the_failures_pauses_and_tries_one_caller_again(clock, caplog):
    b = Breaker("Redis", failures=2, pause=10)
    error = TimeoutError("Timeout reading from socket")

    assert b.allow()
    b.failed(error)
    assert b.allow()  # one failure is not an outage
    b.failed(error)
    assert not b.allow()  # open

    clock.now += 10
    assert b.allow()  # the pause is over: one caller tries
    assert not b.allow()  # and no other meanwhile
    b.failed(error)
    assert not b.allow()  # open for another pause

    clock.now += 10
    assert b.allow()
    b.succeeded()
    assert b.allow() and b.allow()  # closed

    warnings = [r for r in caplog.records if r.name == "config.breaker"]
    assert [r.getMessage() for r in warnings] == [
        "Redis is unavailable (TimeoutError: Timeout reading from socket): skipped for 10 s "
        "at a time until it answers",
        "Redis answers again",
    ]
    assert all(r.exc_info is None for r in warnings)


def test_a_success_between_failures_keeps_it_closed():
    b = Breaker("Redis", failures=2, pause=10)

    b.failed(OSError())
    b.succeeded()
    b.failed(OSError())

    assert b.allow()


def test_a_cancelled_trial_counts_as_a_failure(clock):
    b = Breaker("Redis", failures=1, pause=10)
    b.failed(OSError())
    clock.now += 10
    assert b.allow()

    with pytest.raises(KeyboardInterrupt), b.call():
        raise KeyboardInterrupt

    clock.now += 10
    assert b.allow()  # not stuck behind a trial that never reported


def hung_cache(hung_redis) -> dict:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": hung_redis.url,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},  # as in production
        }
    }


@pytest.mark.django_db
def test_a_hung_redis_costs_the_api_its_timeout_only_until_the_breaker_opens(
    client, settings, hung_redis, caplog
):
    # given: the throttle's cache is a Redis that never answers
    settings.CACHES = hung_cache(hung_redis)
    caplog.set_level(logging.INFO)

    # when: the API is asked again and again
    statuses = [client.get("/api/v1/runways/").status_code for _ in range(6)]

    # then: every request served; Redis tried by the first two only; one line, no traceback
    assert statuses == [200] * 6
    assert hung_redis.connections == breaker.FAILURES
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in problems] == ["config.breaker"]
    assert "Redis is unavailable (TimeoutError" in problems[0].getMessage()
    assert all(r.exc_info is None for r in caplog.records)


@pytest.mark.django_db(transaction=True)
def test_a_hung_redis_costs_readyz_and_the_ingest_enqueue_nothing_once_open(
    client, settings, hung_redis
):
    settings.REDIS_URL = hung_redis.url
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        settings.INGEST_QUEUE: {
            "URL": f"{hung_redis.url}?socket_timeout=1&socket_connect_timeout=1"
        },
    }

    # the first probe waits for Redis and fails; so does an enqueue: the breaker opens
    assert client.get("/readyz").json()["redis"] == "failing"
    first = IngestJobFactory()
    assert ingest_job_enqueue(job_id=first.pk) is False
    assert hung_redis.connections == 2

    # then neither reaches Redis any more
    later = [IngestJobFactory() for _ in range(3)]
    probes = [client.get("/readyz") for _ in range(3)]
    enqueued = [ingest_job_enqueue(job_id=job.pk) for job in later]

    assert [p.status_code for p in probes] == [503] * 3
    assert [p.json()["redis"] for p in probes] == ["failing"] * 3
    assert enqueued == [False] * 3
    assert hung_redis.connections == 2
    # the jobs wait in the database for reconcile
    assert set(IngestJob.objects.values_list("status", flat=True)) == {"queued"}
