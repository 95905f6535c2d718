"""The project's `rqcron` (ingest.scheduler): rq's cron scheduler waiting for
Redis instead of ending, one override at a time; the whole process through a real outage is in
test_cron.py."""

import logging
import socket
import uuid

import pytest
import redis
from django.core.management import get_commands
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import cron_scheduler_registry

from ingest import tasks
from ingest.scheduler import AFTER_AN_OUTAGE, OutageProofCronScheduler


@pytest.fixture
def down() -> redis.Redis:
    """A Redis client for a port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return redis.Redis(
        host="127.0.0.1", port=port, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
    )


@pytest.fixture
def scheduler(rq_queue):
    """A scheduler of the test's own, on the test queue's Redis, with reconcile every minute and
    purge_webhook_ids hourly; its records are removed afterwards."""
    made = OutageProofCronScheduler(name=f"test-{uuid.uuid4().hex}")
    made.register(tasks.reconcile, rq_queue.name, interval=60)
    made.register(tasks.purge_webhook_ids, rq_queue.name, cron="17 * * * *")
    connection = made.connection
    yield made
    connection.zrem(cron_scheduler_registry.get_registry_key(), made.name)
    connection.delete(made.key)


def test_it_is_the_rqcron_that_manage_py_runs():
    # config comes before django_rq in INSTALLED_APPS; compose, the Dockerfile and `make
    # scheduler` all run `manage.py rqcron config.cron`.
    assert get_commands()["rqcron"] == "config"


@pytest.mark.parametrize("step", ["enqueue_jobs", "heartbeat", "save", "register_birth"])
def test_a_redis_error_in_its_loop_waits_for_redis(scheduler, down, monkeypatch, step):
    scheduler.connection = down
    waited = []
    monkeypatch.setattr(scheduler, "wait_for_redis", lambda error: waited.append(error))
    for job in scheduler.get_jobs():
        job.next_enqueue_time = None  # the interval job is due: enqueue_jobs tries Redis

    getattr(scheduler, step)()

    assert len(waited) == 1
    assert isinstance(waited[0], redis.ConnectionError)


def test_stopping_during_an_outage_is_a_warning_not_a_traceback(scheduler, down, caplog):
    scheduler.connection = down

    with caplog.at_level(logging.WARNING, logger="rq.cron"):
        scheduler.register_death()

    assert "stopped without unregistering, Redis unavailable" in caplog.text


def test_once_redis_answers_it_registers_and_catches_up(scheduler, caplog):
    # Given Redis back empty: nothing of the scheduler is left in it.
    scheduler.connection.delete(scheduler.key)

    with caplog.at_level(logging.INFO, logger="rq.cron"):
        scheduler.wait_for_redis(redis.ConnectionError("gone"))

    # Then it is registered again, reconcile is due now and purge_webhook_ids at its time.
    assert scheduler.connection.exists(scheduler.key)
    due = {job.func_name for job in scheduler.get_jobs() if job.should_run()}
    assert due == {"ingest.tasks.reconcile"}
    assert "Redis is back after" in caplog.text
    assert "enqueueing ingest.tasks.reconcile now" in caplog.text


def test_what_it_catches_up_on_are_tasks_that_exist():
    assert AFTER_AN_OUTAGE == {
        "ingest.tasks.reconcile",
        "catalog.tasks.run_media_sync",
        "catalog.tasks.media_sweep",
    }
