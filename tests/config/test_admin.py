"""The archive's admin site (config.admin, review.dashboard): named after the archive, a
"View site" that leads somewhere, and an index that says what waits for the editors."""

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from redis import Redis
from rq import Queue

from catalog.models import Runway
from ingest.models import IngestJob
from tests.factories import RunwayFactory, RunwayImageFactory, StreetSnapFactory
from tests.review.support import editors_group
from tests.support import TEST_REDIS_URL

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor_client():
    user = User.objects.create_user("anna", is_staff=True)
    user.groups.add(editors_group())
    client = Client()
    client.force_login(user)
    return client


def job(status: str, *, finished_ago: timedelta) -> IngestJob:
    return IngestJob.objects.create(
        kind="runway",
        payload={},
        payload_checksum="0" * 64,
        webhook_id=uuid.uuid4().hex,
        status=status,
        finished_at=timezone.now() - finished_ago,
    )


def test_the_index_says_what_waits_for_the_editors(editor_client):
    # Given pending albums of both kinds (the oldest runway three days old), a published one,
    # jobs failed an hour and two days ago, and images still without renditions
    old = RunwayFactory()
    Runway.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    RunwayFactory(), StreetSnapFactory(), RunwayFactory(published=True)
    job("failed", finished_ago=timedelta(hours=1))
    job("failed", finished_ago=timedelta(days=2))
    job("succeeded", finished_ago=timedelta(hours=1))
    RunwayImageFactory(runway=old, rendition_status="pending")
    RunwayImageFactory(runway=old, rendition_status="done")

    # When an editor opens the admin
    response = editor_client.get(reverse("admin:index"))

    # Then it counts them, says how old the oldest is, and links each list
    html = response.content.decode()
    pending = {kind.label: (kind.count, kind.url) for kind in response.context["pending"]}
    assert pending == {
        "runways": (2, reverse("admin:catalog_runway_changelist") + "?status=pending"),
        "street snaps": (1, reverse("admin:catalog_streetsnap_changelist") + "?status=pending"),
    }
    assert "the oldest received 3\xa0days ago" in html
    assert response.context["failed_jobs"].count == 1
    failed = editor_client.get(response.context["failed_jobs"].url)
    assert [j.status for j in failed.context["cl"].result_list] == ["failed"]
    assert response.context["renditions"].images == 1
    assert response.context["renditions"].jobs is None  # the embedded mode: no queue


def test_the_renditions_queue_is_read_by_its_name(editor_client, settings):
    # Given two renditions jobs waiting in a queue of their own on the jobs' Redis
    name = f"renditions-test-{uuid.uuid4().hex[:10]}"
    settings.REDIS_URL = TEST_REDIS_URL
    settings.RQ_QUEUES = {
        **settings.RQ_QUEUES,
        settings.INGEST_QUEUE: {"URL": TEST_REDIS_URL, "DEFAULT_TIMEOUT": 60},
    }
    settings.RENDITIONS_QUEUE = name
    queue = Queue(name, connection=Redis.from_url(TEST_REDIS_URL))
    try:
        for _ in range(2):
            queue.enqueue("os.getpid")

        # When an editor opens the admin, then the dashboard counts them
        response = editor_client.get(reverse("admin:index"))
        assert response.context["renditions"].jobs == 2
        assert "(2 albums in the renditions queue)" in response.content.decode()
    finally:
        queue.empty()
        queue.delete(delete_jobs=True)


def test_the_header_names_the_archive_and_view_site_leads_to_the_public_side(
    editor_client, settings
):
    html = editor_client.get(reverse("admin:index")).content.decode()

    assert "<title>What waits for the editors | Fashion archive admin</title>" in html
    assert f'<div id="site-name"><a href="{reverse("admin:index")}">Fashion archive</a>' in html
    assert '<a href="/api/docs/">View site</a>' in html
    assert editor_client.get("/api/docs/").status_code == 200


def test_an_editor_without_the_jobs_view_sees_no_job_figures():
    user = User.objects.create_user("viewer", is_staff=True)
    client = Client()
    client.force_login(user)

    response = client.get(reverse("admin:index"))

    assert response.context["failed_jobs"] is None
    assert response.context["pending"] == []
    assert response.context["renditions"] is None
