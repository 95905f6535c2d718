"""Embargoes from the editors' side (issue 33, review.admin.views.embargo): the banner and the
form on the record page, approving for a time, the Scheduled tab and its count, the history
rows and the dashboard's "going live today". Times are typed and read in the editors' time
zone (Paris here) and stored in UTC; the clock is frozen and moved with time-machine
(embargo_clock). Portable: PostgreSQL and SQLite."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from catalog.models import Runway
from publicapi.models import PublicRunway
from review.models import ReviewEvent
from review.services import record_approve_for, record_embargo_reached, record_schedule
from tests.review.admin.support import (
    KINDS,
    approve,
    change_url,
    in_queue,
    messages_after,
    messages_of,
    url,
)
from tests.review.support import form_data, make_runway
from tests.support import curator

pytestmark = pytest.mark.django_db

Action = ReviewEvent.Action
T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)  # Sun 1 Mar, 20:00 in Paris
GO_LIVE = datetime(2026, 3, 3, 19, 30, tzinfo=UTC)  # Tue 3 Mar, 20:30 in Paris (CET)
EXPIRY = datetime(2026, 3, 10, 11, 0, tzinfo=UTC)  # Tue 10 Mar, 12:00 in Paris


@pytest.fixture(autouse=True)
def paris(settings):
    settings.EDITORS_TIME_ZONE = "Europe/Paris"


@pytest.fixture
def clock(embargo_clock):
    return embargo_clock(T0)


def scheduled_runway(**fields) -> Runway:
    runway = make_runway(images=2, **fields)
    record_approve_for(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=EXPIRY)
    runway.refresh_from_db()
    return runway


def post_times(client, record, view: str = "schedule", page=None, **times):
    """The embargo form of the record page, posted to `view` with `times` typed in."""
    page = page or client.get(change_url(record))
    data = form_data(page, "embargo-form", **times)
    return client.post(url(record, view, record.pk), data)


def banner(response) -> str:
    """The banner's words, without its "Scheduled." lead."""
    html = text(response)
    start = html.index('id="review-embargo-banner">')
    words = re.sub(r"<[^>]+>", "", html[start : html.index("</p>", start)].split(">", 1)[1])
    return " ".join(words.split()).removeprefix("Scheduled. ")


def text(response) -> str:
    """The page, its no-break spaces (Django's "2\xa0days") as spaces."""
    return response.content.decode().replace("\xa0", " ")


def said(client, response) -> list[str]:
    return [message.replace("\xa0", " ") for message in messages_after(client, response)]


# --- The banner --------------------------------------------------------------------------------


def test_a_scheduled_album_says_when_it_goes_live_and_expires_in_the_editors_time_zone(
    clock, editor_client
):
    runway = scheduled_runway()

    page = editor_client.get(change_url(runway))

    assert page.context["review"]["embargo"]["scheduled"]
    assert banner(page).endswith(
        "Goes live Tue 3 Mar 20:30 Paris, in 2 days. Expires Tue 10 Mar 12:00 Paris, in 1 week."
    )
    # The form shows the times as the editors typed them, in their zone
    times = form_data(page, "embargo-form")
    assert (times["go_live_at"], times["expires_at"]) == ("2026-03-03T20:30", "2026-03-10T12:00")


def test_the_banner_follows_the_clock_went_live_then_expired(clock, editor_client):
    runway = scheduled_runway()

    clock.move_to(GO_LIVE + timedelta(hours=3))
    live = editor_client.get(change_url(runway))
    clock.move_to(EXPIRY + timedelta(days=1))
    expired = editor_client.get(change_url(runway))

    assert not live.context["review"]["embargo"]["scheduled"]
    assert banner(live) == (
        "Went live Tue 3 Mar 20:30 Paris, 3 hours ago. Expires Tue 10 Mar 12:00 Paris, in 6 days."
    )
    assert banner(expired) == (
        "Went live Tue 3 Mar 20:30 Paris, 1 week ago. Expired Tue 10 Mar 12:00 Paris, 1 day ago."
    )


@pytest.mark.parametrize("make", KINDS)
def test_an_album_without_times_shows_no_banner_but_the_form(make, clock, editor_client):
    record = make(images=2)

    page = editor_client.get(change_url(record))

    html = page.content.decode()
    assert 'id="review-embargo-banner"' not in html
    # folded into the status bar: an album page is no taller for it
    assert '<details class="review-embargo-closed" id="review-embargo">' in html
    assert form_data(page, "embargo-form")["go_live_at"] == ""


# --- Setting and clearing the times ------------------------------------------------------------


@pytest.mark.parametrize("make", KINDS)
def test_an_editor_schedules_a_published_album_and_it_goes_live_on_time(make, clock, editor_client):
    record = make(images=2)
    record_approve_for(record=record, actor=curator(), go_live_at=None)
    record.refresh_from_db()
    assert record.is_public()

    response = post_times(
        editor_client, record, go_live_at="2026-03-03T20:30", expires_at="2026-03-10T12:00"
    )

    assert response.status_code == 302 and response.url.endswith("#review-embargo")
    record.refresh_from_db()
    # Typed in Paris, stored in UTC
    assert (record.go_live_at, record.expires_at) == (GO_LIVE, EXPIRY)
    assert record.is_scheduled() and not record.is_public()
    assert said(editor_client, response) == [
        f"“{record}”: Goes live Tue 3 Mar 20:30 Paris, in 2 days. "
        "Expires Tue 10 Mar 12:00 Paris, in 1 week."
    ]
    event = record.review_events.latest("pk")
    assert (event.action, event.actor.username) == (Action.SCHEDULE, "anna")

    clock.move_to(GO_LIVE)
    assert record.is_public() and not record.is_scheduled()
    clock.move_to(EXPIRY)
    assert not record.is_public()


def test_empty_fields_clear_the_times_and_the_album_is_public_at_once(clock, editor_client):
    runway = scheduled_runway()

    response = post_times(editor_client, runway, go_live_at="", expires_at="")

    runway.refresh_from_db()
    assert (runway.go_live_at, runway.expires_at) == (None, None)
    assert runway.is_public()
    assert said(editor_client, response) == [
        f"“{runway}” has no go-live or expiry: it is on the public site now."
    ]


def test_a_go_live_in_the_past_means_now(clock, editor_client):
    runway = scheduled_runway()

    post_times(editor_client, runway, go_live_at="2026-03-01T08:00")

    runway.refresh_from_db()
    assert runway.go_live_at is None and runway.expires_at == EXPIRY
    assert runway.is_public()


def test_clearing_the_expiry_of_an_expired_album_brings_it_back(clock, editor_client):
    runway = scheduled_runway()
    clock.move_to(EXPIRY + timedelta(hours=1))
    assert not runway.is_public()

    post_times(editor_client, runway, expires_at="")

    runway.refresh_from_db()
    assert runway.expires_at is None and runway.is_public()
    assert PublicRunway.objects.filter(pk=runway.pk).exists()


def test_the_same_times_again_change_nothing(clock, editor_client):
    runway = scheduled_runway()
    version = runway.version

    response = post_times(editor_client, runway)

    runway.refresh_from_db()
    assert runway.version == version
    assert said(editor_client, response) == [
        f"“{runway}” already had these times: nothing changed."
    ]


def test_an_expiry_before_the_go_live_is_refused_with_a_clear_message(clock, editor_client):
    runway = scheduled_runway()

    response = post_times(
        editor_client, runway, go_live_at="2026-03-05T10:00", expires_at="2026-03-04T10:00"
    )

    runway.refresh_from_db()
    assert (runway.go_live_at, runway.expires_at) == (GO_LIVE, EXPIRY)
    [message] = said(editor_client, response)
    assert message.startswith("The expiry (")
    assert "must come after the go-live" in message and "Nothing was changed." in message


def test_an_expiry_already_past_is_refused(clock, editor_client):
    runway = scheduled_runway()

    response = post_times(editor_client, runway, expires_at="2026-03-01T08:00")

    runway.refresh_from_db()
    assert runway.expires_at == EXPIRY
    [message] = said(editor_client, response)
    assert "has passed" in message and "Unpublish it instead" in message


def test_a_time_the_form_cannot_read_is_said_and_nothing_changes(clock, editor_client):
    runway = scheduled_runway()

    response = post_times(editor_client, runway, go_live_at="next tuesday")

    runway.refresh_from_db()
    assert runway.go_live_at == GO_LIVE
    assert said(editor_client, response) == ["Go live at: Enter a valid date/time."]


def test_a_time_the_clocks_skip_in_the_editors_zone_is_refused(clock, editor_client):
    runway = scheduled_runway()

    # 02:30 on 29 March 2026 does not exist in Paris: the clocks go from 02:00 to 03:00
    response = post_times(editor_client, runway, go_live_at="2026-03-29T02:30")

    runway.refresh_from_db()
    assert runway.go_live_at == GO_LIVE
    [message] = said(editor_client, response)
    assert message.startswith("Go live at: 2026-03-29 02:30:00 couldn’t be interpreted")
    assert "Europe/Paris" in message


def test_a_page_loaded_before_another_change_is_refused(clock, editor_client):
    runway = scheduled_runway()
    page = editor_client.get(change_url(runway))
    record_schedule(record=runway, actor=curator(), go_live_at=GO_LIVE, expires_at=None)

    response = post_times(editor_client, runway, page=page, go_live_at="2026-03-04T09:00")

    runway.refresh_from_db()
    assert (runway.go_live_at, runway.expires_at) == (GO_LIVE, None)
    [message] = said(editor_client, response)
    # who changed it since the page was loaded, and how
    assert (
        "changed since you opened it: scheduled by curator at 8 p.m. "
        "(reason: “Goes live March 3, 2026, 8:30 p.m.”)" in message
    )


# --- Approve for a time ------------------------------------------------------------------------


@pytest.mark.parametrize("make", KINDS)
def test_approve_for_a_time_publishes_and_schedules_a_pending_album(make, clock, editor_client):
    record = make(images=2)
    page = editor_client.get(change_url(record))
    assert page.context["review"]["embargo"]["can_approve_for"]

    response = post_times(
        editor_client, record, "approvefor", page=page, go_live_at="2026-03-03T20:30"
    )

    assert response.status_code == 302
    record.refresh_from_db()
    assert (record.status, record.go_live_at, record.expires_at) == ("published", GO_LIVE, None)
    assert record.is_scheduled()
    actions = list(record.review_events.order_by("pk").values_list("action", flat=True))
    assert actions == [Action.SCHEDULE, Action.APPROVE]
    assert said(editor_client, response)[0] == (
        f"Approved “{record}”. “{record}”: Goes live Tue 3 Mar 20:30 Paris, in 2 days."
    )


def test_approving_an_album_with_a_crawlers_embargo_schedules_it(clock, editor_client):
    runway = make_runway(images=2)
    Runway.objects.filter(pk=runway.pk).update(go_live_at=GO_LIVE)  # embargo_until
    page = editor_client.get(change_url(runway))
    assert banner(page) == "Would go live, once approved, Tue 3 Mar 20:30 Paris, in 2 days."

    response = approve(editor_client, runway, {"status": "pending"})

    runway.refresh_from_db()
    assert runway.status == "published" and runway.is_scheduled()
    assert said(editor_client, response)[0] == (
        f"Approved “{runway}”: scheduled, it goes live Tue 3 Mar 20:30 Paris, in 2 days."
    )


def test_approve_for_needs_a_go_live(clock, editor_client):
    runway = make_runway(images=2)

    response = post_times(editor_client, runway, "approvefor", go_live_at="")

    runway.refresh_from_db()
    assert runway.status == "pending"
    assert said(editor_client, response) == [
        "Give the time it goes live to approve it for that time, or use Approve and publish."
    ]


def test_approve_for_is_offered_on_pending_albums_only(clock, editor_client):
    runway = scheduled_runway()

    page = editor_client.get(change_url(runway))

    assert not page.context["review"]["embargo"]["can_approve_for"]
    assert "Approve for this time" not in page.content.decode()


# --- Permissions -------------------------------------------------------------------------------


def test_scheduling_needs_the_publish_permission(clock, client, make_editor):
    runway = scheduled_runway()
    pending = make_runway(images=2)
    client.force_login(make_editor("junior", publish=False))

    page = client.get(change_url(runway))
    data = {"go_live_at": "", "expires_at": "", "loaded": page.context["review"]["token"]}
    refused = client.post(url(runway, "schedule", runway.pk), data)
    refused_approve = client.post(
        url(pending, "approvefor", pending.pk), {**data, "go_live_at": "2026-03-03T20:30"}
    )

    # The banner, but no form; the views answer 403 and nothing changes
    assert "Goes live Tue 3 Mar 20:30 Paris" in banner(page)
    assert page.context["review"]["embargo"]["form"] is None
    assert "embargo-form" not in page.content.decode()
    assert (refused.status_code, refused_approve.status_code) == (403, 403)
    runway.refresh_from_db(), pending.refresh_from_db()
    assert runway.go_live_at == GO_LIVE and pending.status == "pending"


# --- The Scheduled tab -------------------------------------------------------------------------


def test_the_scheduled_tab_lists_albums_to_come_with_their_go_live_and_its_count(
    clock, editor_client
):
    later = scheduled_runway(title="Later show")
    sooner = make_runway(images=2, title="Sooner show")
    record_approve_for(record=sooner, actor=curator(), go_live_at=GO_LIVE - timedelta(days=1))
    make_runway(images=2, published=True, title="Live show")
    make_runway(images=2, title="Waiting show")

    response = editor_client.get(url(Runway, "changelist") + "?status=scheduled")

    assert [r.pk for r in response.context["cl"].result_list] == [sooner.pk, later.pk]
    tabs = {t["label"]: (t["count"], t["current"]) for t in response.context["status_tabs"]}
    # The Published tab counts every published album, the scheduled ones among them
    assert tabs == {
        "Pending review": (1, False),
        "Published": (3, False),
        "Scheduled": (2, True),
        "Rejected": (0, False),
        "All": (4, False),
    }
    html = text(response)
    assert "Goes live Mon 2 Mar 20:30 Paris, in 1 day" in html
    assert "Goes live Tue 3 Mar 20:30 Paris, in 2 days" in html


def test_an_album_leaves_the_scheduled_tab_at_its_go_live(clock, editor_client):
    runway = scheduled_runway()

    clock.move_to(GO_LIVE)
    response = editor_client.get(url(Runway, "changelist") + "?status=scheduled")

    assert list(response.context["cl"].result_list) == []
    published = editor_client.get(url(Runway, "changelist") + "?status=published")
    assert [r.pk for r in published.context["cl"].result_list] == [runway.pk]


# --- History and dashboard ---------------------------------------------------------------------


def test_the_history_shows_the_schedule_and_the_archive_going_live_and_expiring(
    clock, editor_client
):
    runway = scheduled_runway()
    clock.move_to(GO_LIVE)
    record_embargo_reached(record_model=Runway, record_id=runway.pk, moment="go_live", at=GO_LIVE)
    clock.move_to(EXPIRY)
    record_embargo_reached(record_model=Runway, record_id=runway.pk, moment="expiry", at=EXPIRY)

    page = editor_client.get(change_url(runway))

    lines = [(line.who, line.action) for line in page.context["review"]["history"]]
    assert lines == [
        ("curator", "Scheduled"),
        ("curator", "Approved"),
        ("the archive", "Went live"),
        ("the archive", "Expired"),
    ]
    html = page.content.decode()
    # The archive's notes, written by a job outside the admin, in the editors' time zone too
    assert "Went live at March 3, 2026, 8:30 p.m., as scheduled." in html
    assert "Expired at March 10, 2026, noon, as scheduled." in html
    assert "<td>the archive</td>" in html


def test_the_history_names_the_scheduled_fields_as_the_admin_does(clock, editor_client):
    runway = scheduled_runway()

    page = editor_client.get(change_url(runway))

    # The model's verbose names, capitalised as the admin's labels, not the stored names
    schedule = page.context["review"]["history"][0]
    assert (schedule.action, set(schedule.changes)) == ("Scheduled", {"Go live at", "Expire at"})
    history = page.content.decode().split('id="review-history"')[1]
    assert "<div>Go live at: “" in history and "<div>Expire at: “" in history
    assert "go_live_at" not in history and "expires_at" not in history


def test_the_dashboard_says_what_goes_live_today(clock, editor_client):
    today = make_runway(images=2)
    record_approve_for(record=today, actor=curator(), go_live_at=T0 + timedelta(hours=2))
    scheduled_runway()  # in two days: not today

    response = editor_client.get(reverse("admin:index"))

    html = response.content.decode()
    assert 'id="dashboard-going-live-1"' in html
    assert "<strong>1</strong>, the first at 22:00 CET (in 2\xa0hours)" in html
    assert "?status=scheduled" in html
    assert messages_of(response) == []


def test_today_ends_at_the_editors_midnight(clock, editor_client):
    # 23:30 in Paris is today; 00:30 in Paris is tomorrow, though both are 1 March in UTC
    tonight, after_midnight = make_runway(images=2), make_runway(images=2)
    record_approve_for(
        record=tonight, actor=curator(), go_live_at=datetime(2026, 3, 1, 22, 30, tzinfo=UTC)
    )
    record_approve_for(
        record=after_midnight, actor=curator(), go_live_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    )

    response = editor_client.get(reverse("admin:index"))

    runways = next(kind for kind in response.context["going_live"] if kind.label == "runways")
    assert runways.count == 1
    assert "the first at 23:30 CET" in response.content.decode()


def test_the_dashboard_shows_no_going_live_row_without_one_today(clock, editor_client):
    scheduled_runway()  # in two days

    response = editor_client.get(reverse("admin:index"))

    assert "going live today" not in response.content.decode()


def test_a_scheduled_album_page_from_the_tab_is_in_that_queue(clock, editor_client):
    later, sooner = scheduled_runway(), make_runway(images=2)
    record_approve_for(record=sooner, actor=curator(), go_live_at=GO_LIVE - timedelta(days=1))

    page = editor_client.get(in_queue(change_url(later), status="scheduled"))

    review = page.context["review"]
    assert (review["queue_position"], review["queue_total"]) == (2, 2)
    assert "2 of 2 scheduled in" in page.content.decode()
