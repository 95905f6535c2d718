"""Fixtures for ingest: the ingest settings, a crawler on the test client, a real
S3-compatible server (moto). The helpers are in tests/ingest/support.py; the local image server
and the throwaway rq queue are shared fixtures (tests/conftest.py)."""

import uuid

import pytest

from tests.ingest.support import Crawler, ingest_test_settings


@pytest.fixture(autouse=True)
def _ingest_settings(settings):
    ingest_test_settings(settings)


@pytest.fixture
def crawler(client) -> Crawler:
    return Crawler(client)


# --- S3 (moto in server mode) --------------------------------------------------------------------


@pytest.fixture(scope="session")
def moto_s3():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_storage(settings, moto_s3):
    """STORAGES["default"] and ["public"] on a fresh bucket of the moto server, as production
    configures them."""
    import boto3

    bucket = f"archive-test-{uuid.uuid4().hex[:12]}"
    options = {
        "endpoint_url": moto_s3,
        "access_key": "testing",
        "secret_key": "testing",
        "region_name": "us-east-1",
    }
    boto3.client(
        "s3",
        endpoint_url=moto_s3,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    ).create_bucket(Bucket=bucket)
    # As production configures them: everything in the bucket, private, and the public
    # copies under public/ in the same bucket (catalog.visibility).
    settings.MEDIA_PUBLIC_COPIES = True
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                **options,
                "bucket_name": bucket,
                "querystring_auth": True,
                "file_overwrite": True,
            },
        },
        "public": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                **options,
                "bucket_name": bucket,
                "location": "public",
                "querystring_auth": False,
                "file_overwrite": True,
            },
        },
    }
    return bucket
