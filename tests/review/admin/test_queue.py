"""The queue the editor came from (review.admin.queue): approve, reject and skip open its
next album, "3 of 41 pending in this queue", refusals keep it, and soft claims between two
editors on one queue."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client, RequestFactory
from django.utils import timezone

from catalog.models import Runway
from catalog.services import record_update
from review.admin import queue
from review.models import ReviewClaim
from review.services import record_approve
from tests.factories import BrandFactory, RunwayFactory
from tests.review.admin.support import (
    approve,
    in_queue,
    messages_after,
    url,
)
from tests.review.support import (
    form_data,
    make_runway,
)
from tests.support import curator

pytestmark = pytest.mark.django_db


class TestTheQueueTheEditorCameFrom:
    def test_the_page_says_where_the_album_stands_in_the_queue(self, anna, acme_queue):
        acme, (first, second, third) = acme_queue
        filters = {"status": "pending", "brand__id__exact": acme.pk}

        html = anna.get(in_queue(url(second, "change", second.pk), **filters)).content.decode()

        assert "2 of 3 pending in" in html
        # the link back is the list she came from
        link = f"{url(Runway, 'changelist')}?{urlencode(filters)}".replace("&", "&amp;")
        assert f'href="{link}"' in html

    def test_approve_opens_the_next_album_of_the_filtered_queue(self, anna, acme_queue):
        acme, (first, second, _) = acme_queue
        filters = {"status": "pending", "brand__id__exact": acme.pk}

        response = approve(anna, first, filters)

        # the next Acme show, not the other brand's older one; the filters ride along
        assert response.status_code == 302
        assert response.url == in_queue(url(second, "change", second.pk), **filters)
        first.refresh_from_db()
        assert first.status == "published"

    def test_reject_and_skip_open_the_next_album_too(self, anna, acme_queue):
        acme, (first, second, third) = acme_queue
        filters = {"status": "pending", "brand__id__exact": acme.pk}
        page = anna.get(in_queue(url(first, "change", first.pk), **filters))

        rejected = anna.post(
            in_queue(url(first, "reject", first.pk), **filters),
            {**form_data(page, "transition-form"), "reason": "Blurry", "confirm": "yes"},
        )
        skipped = anna.post(
            in_queue(url(second, "skip", second.pk), **filters),
            form_data(page, "transition-form"),
        )

        assert rejected.url == in_queue(url(second, "change", second.pk), **filters)
        assert skipped.url == in_queue(url(third, "change", third.pk), **filters)
        second.refresh_from_db()
        assert second.status == "pending"  # skipping decides nothing

    def test_skipping_the_last_album_comes_round_to_the_first(self, anna, acme_queue):
        acme, (first, _, third) = acme_queue
        filters = {"brand__id__exact": acme.pk}

        response = anna.post(in_queue(url(third, "skip", third.pk), **filters))

        assert response.url == in_queue(url(first, "change", first.pk), **filters)

    def test_the_search_and_order_of_the_list_count(self, anna):
        brand = BrandFactory(name="Acme")
        a = make_runway(images=1, brand=brand, title="Spring A")
        make_runway(images=1, brand=brand, title="Autumn")
        b = make_runway(images=1, brand=brand, title="Spring B")
        # newest first (the list's order: -created_at), searched for "Spring"
        filters = {"q": "Spring", "o": "-9"}

        response = anna.post(in_queue(url(b, "skip", b.pk), **filters))

        assert response.url == in_queue(url(a, "change", a.pk), **filters)

    def test_the_last_album_of_a_filtered_queue_goes_back_to_that_list(self, anna, acme_queue):
        acme, shows = acme_queue
        filters = {"status": "pending", "brand__id__exact": acme.pk}
        for show in shows[:-1]:
            Runway.objects.filter(pk=show.pk).update(status="published")

        response = approve(anna, shows[-1], filters)

        assert response.url == f"{url(Runway, 'changelist')}?{urlencode(filters)}"

    def test_deciding_the_last_album_of_a_filtered_queue_says_that_queue_is_done(
        self, anna, acme_queue
    ):
        acme, shows = acme_queue
        filters = {"status": "pending", "brand__id__exact": acme.pk}
        for show in shows[:-1]:
            Runway.objects.filter(pk=show.pk).update(status="published")

        response = approve(anna, shows[-1], filters)

        # the brand's queue is done; the other brand's albums still wait in the pending one
        assert messages_after(anna, response) == [
            f"Approved and published “{shows[-1]}”.",
            "This queue is done: no pending album is left in it.",
        ]

    @pytest.mark.parametrize("filtered", [True, False], ids=["filtered", "unfiltered"])
    def test_skipping_the_last_album_says_there_is_no_other_not_that_it_is_empty(
        self, anna, filtered
    ):
        show = make_runway(images=1, brand=BrandFactory(name="Acme"))
        filters = {"status": "pending", **({"brand__id__exact": show.brand_id} if filtered else {})}

        response = anna.post(in_queue(url(show, "skip", show.pk), **filters))

        # the album is still pending in that queue: skipping decides nothing
        assert response.url == f"{url(Runway, 'changelist')}?{urlencode(filters)}"
        assert messages_after(anna, response) == ["No other album in this queue."]

    # The list's own orders (each tab's, and sorted by a column: title, season, status,
    # received, and brand, a foreign key, which is counted from the ids instead).
    @pytest.mark.parametrize("status", ["pending", "all", "published"])
    @pytest.mark.parametrize("o", [None, "1", "-3.2", "6", "-9", "2"])
    def test_the_place_is_the_albums_place_in_the_list_whatever_its_order(self, status, o):
        # Given albums in every status, some never reviewed, with repeated titles and years
        now = timezone.now()
        albums = [
            RunwayFactory(
                title=f"Show {n % 4}",
                year=2000 + n % 3,
                status=["pending", "published", "rejected"][n % 3],
                reviewed_at=None if n % 4 == 0 else now - timedelta(days=n % 5),
            )
            for n in range(12)
        ]
        request = RequestFactory().get(
            "/", {"_changelist_filters": urlencode({"status": status, **({"o": o} if o else {})})}
        )
        request.user = User.objects.create_superuser("root")
        runways = admin.site._registry[Runway]

        # When each album's place is asked for, then it is its place among the list's ids
        ids = queue.queue_ids(runways, request)
        for album in albums:
            expected = ids.index(album.pk) + 1 if album.pk in ids else None
            assert queue.queue_place(runways, request, album) == (expected, len(ids))

    @pytest.mark.postgres  # SQLite does not count the rows a SELECT returned
    @pytest.mark.parametrize("filtered", [False, True], ids=["pending", "brand"])
    def test_the_page_reads_its_place_in_the_queue_not_the_whole_queue(self, anna, filtered):
        # Given a pending queue of 30 albums, 20 of one brand and 10 of another
        acme, other = BrandFactory(name="Acme"), BrandFactory(name="Other")
        shows = [RunwayFactory(brand=acme if n % 3 else other) for n in range(30)]
        acme_shows = [show for show in shows if show.brand_id == acme.pk]
        filters = {"status": "pending", **({"brand__id__exact": acme.pk} if filtered else {})}
        show, place = (acme_shows[9], "10 of 20") if filtered else (shows[9], "10 of 30")

        # When an editor opens one of them
        rows: list[int] = []
        table = f"FROM {connection.ops.quote_name(Runway._meta.db_table)}"

        def count_rows(execute, sql, params, many, context):
            result = execute(sql, params, many, context)
            if table in sql:
                rows.append(context["cursor"].rowcount)
            return result

        with connection.execute_wrapper(count_rows):
            html = anna.get(in_queue(url(show, "change", show.pk), **filters)).content.decode()

        # Then the page says where it stands, having read no list of albums (nor the brands
        # of the list's filter, which it does not show) to say it
        assert f"{place} pending in" in html
        assert rows and max(rows) == 1


class TestARefusalKeepsTheQueue:
    """A refused decision or save brings the editor back to the album's page in their
    queue: its "N of M" and its next album are still those of the list they came from."""

    @pytest.fixture
    def filters(self, acme_queue):
        acme, _ = acme_queue
        return {"status": "pending", "brand__id__exact": acme.pk}

    def test_a_refused_approve(self, anna, acme_queue, filters):
        _, (first, *_) = acme_queue
        page = anna.get(in_queue(url(first, "change", first.pk), **filters))
        record_update(actor=curator(), record=first, changes={"title": "Changed meanwhile"})

        response = anna.post(
            in_queue(url(first, "approve", first.pk), **filters),
            form_data(page, "transition-form"),
        )

        assert Runway.objects.get(pk=first.pk).status == "pending"
        assert response.url == in_queue(url(first, "change", first.pk), **filters)

    def test_a_refused_reject(self, anna, acme_queue, filters):
        _, (first, *_) = acme_queue
        asked = anna.get(in_queue(url(first, "reject", first.pk), **filters))
        record_approve(record=first, actor=curator())

        response = anna.post(
            in_queue(url(first, "reject", first.pk), **filters),
            {**form_data(asked, "reason-form"), "reason": "Late"},
        )

        assert Runway.objects.get(pk=first.pk).status == "published"
        assert response.url == in_queue(url(first, "change", first.pk), **filters)

    def test_a_refused_save(self, acme_queue, filters, make_editor):
        _, (first, *_) = acme_queue
        junior = Client()
        junior.force_login(make_editor("junior", publish=False))
        page = junior.get(in_queue(url(first, "change", first.pk), **filters))
        record_approve(record=first, actor=curator())  # now junior may not change it

        response = junior.post(
            in_queue(url(first, "change", first.pk), **filters),
            form_data(page, "runway_form", title="Renamed"),
        )

        assert Runway.objects.get(pk=first.pk).title != "Renamed"
        assert response.url == in_queue(url(first, "change", first.pk), **filters)

    def test_a_refused_image_operation(self, anna, acme_queue, filters):
        _, (first, *_) = acme_queue
        page = anna.get(in_queue(url(first, "change", first.pk), **filters))
        record_update(actor=curator(), record=first, changes={"title": "Changed meanwhile"})
        image = first.images.order_by("sort_order").last()

        response = anna.post(
            in_queue(url(first, "image", first.pk, image.pk, "delete"), **filters),
            {"loaded": form_data(page, "transition-form")["loaded"]},
        )

        assert first.images.live().count() == 2
        assert response.url == in_queue(url(first, "change", first.pk), **filters) + "#images"


class TestTwoEditorsOnOneQueue:
    def test_the_next_album_passes_over_the_one_another_editor_has_open(
        self, anna, bob, acme_queue
    ):
        acme, (first, second, third) = acme_queue
        filters = {"status": "pending", "brand__id__exact": acme.pk}
        anna.get(in_queue(url(first, "change", first.pk), **filters))
        bob.get(in_queue(url(second, "change", second.pk), **filters))

        response = approve(anna, first, filters)

        assert response.url == in_queue(url(third, "change", third.pk), **filters)

    def test_the_page_says_who_has_it_open_and_saving_is_not_blocked(self, anna, bob):
        runway = make_runway(images=2)
        anna.get(url(runway, "change", runway.pk))

        page = bob.get(url(runway, "change", runway.pk))
        html = page.content.decode()
        saved = bob.post(
            url(runway, "change", runway.pk),
            form_data(page, "runway_form", title="Bob's title", _continue="1"),
        )

        assert "open by <strong>anna</strong>" in html
        assert saved.status_code == 302
        runway.refresh_from_db()
        assert runway.title == "Bob's title"

    def test_a_reader_who_may_only_view_never_holds_an_album(self, anna):
        from django.contrib.auth.models import Permission

        runway = make_runway(images=2)
        reader = User.objects.create_user("reader", is_staff=True)
        reader.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
        client = Client()
        client.force_login(reader)

        page = client.get(url(runway, "change", runway.pk))
        beat = client.post(url(runway, "claim", runway.pk))
        html = anna.get(url(runway, "change", runway.pk)).content.decode()

        assert page.status_code == 200 and beat.status_code == 403
        assert "open by <strong>reader</strong>" not in html
        assert list(ReviewClaim.objects.values_list("user__username", flat=True)) == ["anna"]

    def test_a_claim_lapses_after_a_few_minutes_without_a_sign_of_life(self, anna, bob, settings):
        settings.REVIEW_CLAIM_SECONDS = 300
        runway = make_runway(images=1)
        anna.get(url(runway, "change", runway.pk))
        ReviewClaim.objects.update(touched_at=timezone.now() - timedelta(seconds=301))

        html = bob.get(url(runway, "change", runway.pk)).content.decode()
        pinged = anna.post(url(runway, "claim", runway.pk)).json()

        assert 'id="review-open-by" class="review-open-by"' in html and " hidden>" in html
        assert pinged == {"held": False, "open_by": "bob"}

    def test_the_heartbeat_keeps_the_claim(self, anna, bob):
        runway = make_runway(images=1)
        anna.get(url(runway, "change", runway.pk))
        assert anna.post(url(runway, "claim", runway.pk)).json() == {"held": True, "open_by": ""}
        assert bob.post(url(runway, "claim", runway.pk)).json() == {
            "held": False,
            "open_by": "anna",
        }

    def test_when_every_other_album_is_open_the_list_says_so(self, anna, bob):
        first, second = make_runway(images=1), make_runway(images=1)
        bob.get(url(second, "change", second.pk))

        response = anna.post(url(first, "skip", first.pk), follow=True)

        assert "Every other album of this queue is open by another editor." in [
            str(m) for m in response.context["messages"]
        ]
