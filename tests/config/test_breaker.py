"""The Redis circuit breakers (pybreaker, one per app): after two failures in a row, the web
processes skip Redis for a while (the throttle lets requests through, /readyz says failing, an
enqueue is left to reconcile), log it once, and try again one caller at a time. A hung Redis
is a socket of the test's own that accepts and never answers (tests.support.HungRedis)."""

import logging

import pytest

from ingest.models import IngestJob
from ingest.queueing import ingest_job_enqueue
from publicapi.throttling import redis_breaker
from tests.factories import IngestJobFactory


def hung_cache(hung_redis) -> dict:
    return {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": hung_redis.url,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},  # as in production
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
    assert hung_redis.connections == redis_breaker.fail_max == 2
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in problems] == ["publicapi.throttling"]
    assert "Redis is unavailable (TimeoutError" in problems[0].getMessage()
    assert all(r.exc_info is None for r in caplog.records)


@pytest.mark.django_db
def test_the_throttle_tries_redis_again_after_its_pause_and_says_so(
    client, settings, caplog, monkeypatch
):
    # given: an open breaker whose pause is over
    for _ in range(redis_breaker.fail_max):
        with pytest.raises(ConnectionError), redis_breaker.calling():
            raise ConnectionError("down")
    assert redis_breaker.current_state == "open"
    monkeypatch.setattr(redis_breaker, "reset_timeout", 0)
    caplog.set_level(logging.INFO)

    # when: a request reaches the throttle, whose cache answers
    assert client.get("/api/v1/runways/").status_code == 200

    # then: it tried, and closed the breaker
    assert redis_breaker.current_state == "closed"
    assert "Redis answers again" in caplog.text


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

    # two probes wait for Redis and fail; so do two enqueues: each one's breaker opens
    assert [client.get("/readyz").json()["redis"] for _ in range(2)] == ["failing"] * 2
    first = [IngestJobFactory() for _ in range(2)]
    assert [ingest_job_enqueue(job_id=job.pk) for job in first] == [False, False]
    assert hung_redis.connections == 4

    # then neither reaches Redis any more
    later = [IngestJobFactory() for _ in range(3)]
    probes = [client.get("/readyz") for _ in range(3)]
    enqueued = [ingest_job_enqueue(job_id=job.pk) for job in later]

    assert [p.status_code for p in probes] == [503] * 3
    assert [p.json()["redis"] for p in probes] == ["failing"] * 3
    assert enqueued == [False] * 3
    assert hung_redis.connections == 4
    # the jobs wait in the database for reconcile
    assert set(IngestJob.objects.values_list("status", flat=True)) == {"queued"}
