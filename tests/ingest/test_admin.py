"""The ingest jobs admin: a read-only list and page, readable payload and report, a link to the
record, and a retry action guarded by its permission."""

from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from ingest import admin as ingest_admin
from ingest import queueing
from ingest.models import IngestJob
from tests.factories import BrandFactory, IngestJobFactory, RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:ingest_ingestjob_changelist"


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(
        queueing, "ingest_job_enqueue", lambda *, job_id: calls.append(job_id) or True
    )
    return calls


def staff(*perms: str) -> User:
    user = User.objects.create_user(f"editor-{len(perms)}", password="x", is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app, codename=codename)
        )
    return user


@pytest.fixture
def report() -> dict:
    return {
        "album_images": 2,
        "counts": {"received": 2, "stored": 1, "refused": 1, "repeated": 0, "duplicates": 0},
        "issues": [{"index": 1, "url": "https://example.com/<b>.jpg", "reason": "HTTP 404"}],
        "issues_truncated": False,
    }


class _ResultRows(HTMLParser):
    """The changelist's result rows, each as {column: cell text}; a cell names its column in
    its ``field-<name>`` class."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self._column: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append({})
        elif tag in ("td", "th"):
            classes = (dict(attrs).get("class") or "").split()
            columns = [c.removeprefix("field-") for c in classes if c.startswith("field-")]
            self._column = columns[0] if columns else None
            if self._column:
                self.rows[-1][self._column] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._column = None

    def handle_data(self, data: str) -> None:
        if self._column:
            self.rows[-1][self._column] += data


def result_rows(html: str) -> list[dict[str, str]]:
    reader = _ResultRows()
    reader.feed(html)
    return [row for row in reader.rows if row]


def test_the_list_shows_each_jobs_columns_and_filters(admin_client):
    snap = StreetSnapFactory()
    failed = IngestJobFactory(
        status="failed",
        source="vogue",
        attempts=1,
        reason="unknown_brand",
        payload={"title": "Acme Fall 2024 RTW", "brand": "ACME", "season_code": "FW24"},
    )
    done = IngestJobFactory(
        status="succeeded",
        source="wwd",
        kind="street",
        attempts=2,
        street_snap=snap,
        payload={"title": "Paris, day 2", "city": "Paris", "year": 2026, "month": 3},
    )
    now = timezone.now()
    IngestJob.objects.filter(pk=failed.pk).update(created_at=now - timedelta(hours=3, minutes=5))
    IngestJob.objects.filter(pk=done.pk).update(created_at=now - timedelta(minutes=5, seconds=3))

    response = admin_client.get(reverse(CHANGELIST))
    filtered = admin_client.get(reverse(CHANGELIST), {"status__exact": "failed"})

    assert response.status_code == 200
    # five columns, a second line where there is more to say (reason, attempts; what the
    # album is and where it came from), so the list fits 1280 px with both sidebars open
    assert result_rows(response.content.decode()) == [
        {
            "id": str(done.pk),
            "status_column": "Succeeded2 attempts",
            "album_column": "Paris, day 2street · Paris · 2026-03 · wwd",
            "age": "5\xa0minutes",
            "record_link": f"street snap {snap.pk}",
        },
        {
            "id": str(failed.pk),
            "status_column": "Failedunknown_brand",
            "album_column": "Acme Fall 2024 RTWrunway · ACME · FW24 · vogue",
            "age": "3\xa0hours",
            "record_link": "-",
        },
    ]
    html = response.content.decode()
    for text in ("By status", "By kind", "By source"):
        assert text in html
    assert filtered.context["cl"].result_count == 1


def test_jobs_are_found_by_id_url_or_webhook_id(admin_client):
    job = IngestJobFactory(source_url="https://example.com/shows/acme-fw24", webhook_id="msg_42")
    IngestJobFactory()

    by_id = admin_client.get(reverse(CHANGELIST), {"q": str(job.pk)})
    by_url = admin_client.get(reverse(CHANGELIST), {"q": "acme-fw24"})
    by_webhook = admin_client.get(reverse(CHANGELIST), {"q": "msg_42"})
    by_text = admin_client.get(reverse(CHANGELIST), {"q": "not a number"})

    assert job in by_id.context["cl"].result_list
    assert by_url.context["cl"].result_count == 1
    assert by_webhook.context["cl"].result_count == 1
    assert by_text.status_code == 200


def test_the_job_page_shows_payload_and_report_readably(admin_client, report):
    job = IngestJobFactory(
        status="succeeded",
        report=report,
        payload={"kind": "runway", "title": "Acme <FW24>", "images": []},
    )

    response = admin_client.get(reverse("admin:ingest_ingestjob_change", args=[job.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert '<pre style="white-space: pre-wrap">{\n  &quot;kind&quot;: &quot;runway&quot;' in html
    assert "Acme &lt;FW24&gt;" in html  # escaped, not rendered
    # named as the report names it and as the album's page numbers it
    assert (
        "<td>images[1] (image 2)</td><td>https://example.com/&lt;b&gt;.jpg</td><td>HTTP 404</td>"
        in html
    )
    assert "received: 2, stored: 1, refused: 1, repeated: 0, duplicates: 0" in html


def test_a_job_whose_worker_died_shows_why_and_can_be_retried(admin_client, enqueued):
    job = IngestJobFactory(
        status="failed",
        reason="worker_died",
        error="The worker running this job died 3 times",
        attempts=3,
        lost_executions=3,
    )

    listed = admin_client.get(reverse(CHANGELIST))
    page = admin_client.get(reverse("admin:ingest_ingestjob_change", args=[job.pk]))
    retried = admin_client.post(
        reverse(CHANGELIST), {"action": "retry_jobs", "_selected_action": [job.pk]}, follow=True
    )

    assert [row["status_column"] for row in result_rows(listed.content.decode())] == [
        "Failedworker_died · 3 attempts"
    ]
    html = page.content.decode()
    assert "The worker running this job died 3 times" in html
    assert "Lost executions" in html
    assert "Lease renewed" in html  # when the last execution was last seen alive
    assert f"Queued again: {job.pk}." in retried.content.decode()
    job.refresh_from_db()
    assert (job.status, job.lost_executions) == ("queued", 0)


def test_nobody_adds_changes_or_deletes_jobs_in_the_admin(admin_client):
    job = IngestJobFactory()

    add = admin_client.get(reverse("admin:ingest_ingestjob_add"))
    delete = admin_client.post(
        reverse("admin:ingest_ingestjob_delete", args=[job.pk]), {"post": "yes"}
    )
    change = admin_client.post(
        reverse("admin:ingest_ingestjob_change", args=[job.pk]), {"status": "succeeded"}
    )

    assert add.status_code == 403
    assert delete.status_code == 403
    assert change.status_code == 403
    job.refresh_from_db()
    assert job.status == "queued"


def test_the_record_link_goes_to_the_record_admin_and_degrades_to_text(monkeypatch):
    runway = RunwayFactory()
    job = IngestJobFactory(runway=runway)
    admin = ingest_admin.IngestJobAdmin(IngestJob, None)

    with_admin = admin.record_link(job)

    def no_record_admin(name, args):
        raise NoReverseMatch(name)

    monkeypatch.setattr(ingest_admin, "reverse", no_record_admin)
    without = admin.record_link(job)

    url = reverse("admin:catalog_runway_change", args=[runway.pk])
    assert with_admin == f'<a href="{url}" class="ingest-nowrap">runway {runway.pk}</a>'
    assert without == f'<span class="ingest-nowrap">runway {runway.pk}</span>'


def test_retry_queues_failed_and_stale_jobs_and_refuses_others(admin_client, enqueued):
    failed = IngestJobFactory(status="failed", reason="unknown_brand")
    stale = IngestJobFactory(status="stale")
    done = IngestJobFactory(status="succeeded")

    response = admin_client.post(
        reverse(CHANGELIST),
        {"action": "retry_jobs", "_selected_action": [failed.pk, stale.pk, done.pk]},
        follow=True,
    )

    messages = [str(m) for m in response.context["messages"]]
    assert f"Queued again: {failed.pk}, {stale.pk}." in messages
    assert any(f"{done.pk} (succeeded)" in m for m in messages)
    assert IngestJob.objects.get(pk=failed.pk).status == "queued"
    assert IngestJob.objects.get(pk=stale.pk).status == "queued"
    assert IngestJob.objects.get(pk=done.pk).status == "succeeded"


def test_retry_needs_its_permission(client, enqueued):
    viewer = staff("ingest.view_ingestjob")
    retrier = staff("ingest.view_ingestjob", "ingest.retry_ingestjob")
    job = IngestJobFactory(status="failed")

    client.force_login(viewer)
    page = client.get(reverse(CHANGELIST))
    refused = client.post(
        reverse(CHANGELIST), {"action": "retry_jobs", "_selected_action": [job.pk]}
    )
    job.refresh_from_db()
    status_after_viewer = job.status
    client.force_login(retrier)
    offered = client.get(reverse(CHANGELIST))
    client.post(reverse(CHANGELIST), {"action": "retry_jobs", "_selected_action": [job.pk]})

    assert page.status_code == 200
    assert "retry_jobs" not in page.content.decode()
    assert refused.status_code in (200, 302)
    assert status_after_viewer == "failed"
    assert "retry_jobs" in offered.content.decode()
    job.refresh_from_db()
    assert job.status == "queued"


def test_a_failed_jobs_page_has_a_retry_button_that_queues_it_again(
    client, enqueued, django_capture_on_commit_callbacks
):
    retrier = staff("ingest.view_ingestjob", "ingest.retry_ingestjob")
    failed, done = IngestJobFactory(status="failed"), IngestJobFactory(status="succeeded")
    client.force_login(retrier)

    page = client.get(reverse("admin:ingest_ingestjob_change", args=[failed.pk]))
    finished = client.get(reverse("admin:ingest_ingestjob_change", args=[done.pk]))
    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(page.context["retry_url"], follow=True)

    assert 'value="Retry this job"' in page.content.decode()
    assert 'value="Retry this job"' not in finished.content.decode()
    assert IngestJob.objects.get(pk=failed.pk).status == "queued"
    assert enqueued == [failed.pk]
    assert [str(m) for m in retried.context["messages"]] == ["Queued again."]
    assert retried.request["PATH_INFO"] == page.request["PATH_INFO"]


def test_the_retry_button_needs_its_permission(client, enqueued):
    viewer = staff("ingest.view_ingestjob")
    job = IngestJobFactory(status="failed")
    client.force_login(viewer)

    page = client.get(reverse("admin:ingest_ingestjob_change", args=[job.pk]))
    refused = client.post(reverse("admin:ingest_ingestjob_retry", args=[job.pk]))

    assert "Retry this job" not in page.content.decode()
    assert refused.status_code == 403
    assert IngestJob.objects.get(pk=job.pk).status == "failed"


def test_a_job_failed_on_an_unknown_brand_links_the_alias_pre_filled(admin_client):
    job = IngestJobFactory(
        status="failed", reason="unknown_brand", payload={"brand": "Acne  Studios"}
    )
    other = IngestJobFactory(status="failed", reason="fetch_failed", payload={"brand": "Acme"})

    page = admin_client.get(reverse("admin:ingest_ingestjob_change", args=[job.pk]))
    plain = admin_client.get(reverse("admin:ingest_ingestjob_change", args=[other.pk]))
    form = admin_client.get(page.context["brand_alias_add_url"])

    assert "Add “Acne  Studios” as an alias of a brand" in page.content.decode()
    assert plain.context.get("brand_alias_add_url") is None
    assert form.context["adminform"].form.initial["alias"] == "Acne  Studios"


def test_once_the_brand_exists_the_failed_jobs_page_says_so_not_that_it_is_unknown(admin_client):
    # given a job failed on "Acme", and the brand added after it failed
    job = IngestJobFactory(
        status="failed",
        reason="unknown_brand",
        payload={"brand": "Acme"},
        finished_at=timezone.now() - timedelta(hours=1),
    )
    url = reverse("admin:ingest_ingestjob_change", args=[job.pk])
    before = admin_client.get(url).content.decode()
    acme = BrandFactory(name="Acme Studios", slug="acme")

    # when the editor opens the job's page again
    after = admin_client.get(url)

    # then the page says what was true when it ran and what is true now: retry, no alias link
    text = after.content.decode()
    assert "No brand has the slug or an alias “Acme” (as of this page)" in before
    assert "No brand has" not in text
    assert "When this job ran" in text and "no brand had the slug or an alias “Acme”" in text
    assert after.context["brand_now"] == acme
    assert reverse("admin:catalog_brand_change", args=[acme.pk]) in text
    assert after.context["brand_alias_add_url"] is None
    assert "Retry this job" in text
