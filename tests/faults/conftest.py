"""Fixtures of the fault suite: a fresh bucket per test on the shared S3 server (moto_s3,
tests/conftest.py), the brand the albums name, and the test process's settings pointed at a
rig's Redis and queue (reconcile runs in the test process, as cron would run it beside the
workers)."""

import json
import os
import uuid

import pytest

from tests.factories import BrandFactory
from tests.faults.harness import Figures, Rig


@pytest.fixture
def bucket(moto_s3):
    import boto3

    name = f"faults-{uuid.uuid4().hex[:12]}"
    client = boto3.client(
        "s3",
        endpoint_url=moto_s3,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=name)
    return client, name


@pytest.fixture
def rig_for(settings, moto_s3, bucket):
    """``rig_for(**options)``: a started Rig, stopped after the test; this process's settings
    (reconcile's) point at its Redis and queue."""
    from django.db import connection

    BrandFactory(name="Acme", slug="acme")
    started = []

    def start(**options) -> Rig:
        rig = Rig(database=connection.settings_dict, moto_url=moto_s3, bucket=bucket[1], **options)
        started.append(rig)
        rig.__enter__()
        settings.REDIS_URL = rig.redis.url
        settings.INGEST_QUEUE = rig.queue
        settings.VISIBILITY_QUEUE = rig.queue
        settings.RQ_QUEUES = {
            **settings.RQ_QUEUES,
            rig.queue: {"URL": f"{rig.redis.url}?socket_connect_timeout=2", "DEFAULT_TIMEOUT": 120},
        }
        settings.INGEST_RECONCILE_GRACE_SECONDS = 3
        settings.INGEST_WORKER_HEARTBEAT_SECONDS = 2
        settings.INGEST_RETRY_INTERVALS = [0, 0, 0, 0, 0]
        return rig

    yield start
    for rig in started:
        rig.__exit__(None, None, None)


@pytest.fixture
def report_figures():
    """Print a scenario's figures; with FAULT_FIGURES set, append them there (bench/faults.py)."""

    def report(figures: Figures) -> None:
        print(f"\nfault figures: {figures.line()}")
        path = os.environ.get("FAULT_FIGURES")
        if path:
            with open(path, "a") as out:
                out.write(json.dumps(figures.__dict__) + "\n")

    return report
