"""The review flow of the record page (review.admin): the queue the editor came from (approve,
reject and skip open its next album; "3 of 41 pending in this queue"), soft claims between two
editors on one queue, the near-duplicate compare view and its "review duplicates" mode, and
image operations answered in the page (JSON), through the same service and stale check."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from catalog.models import Runway, RunwayImage
from catalog.services import record_update
from review.models import ReviewClaim
from review.services import record_approve
from tests.factories import BrandFactory, RunwayFactory
from tests.review.support import (
    FormReader,
    editors_group,
    form_data,
    make_runway,
    make_street_snap,
)
from tests.support import curator

pytestmark = pytest.mark.django_db


def url(record_or_model, view: str, *args) -> str:
    opts = record_or_model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def in_queue(path: str, **filters) -> str:
    """`path` as the list with `filters` links to it (Django's preserved filters)."""
    return f"{path}?{urlencode({'_changelist_filters': urlencode(filters)})}"


def editor_client(username: str) -> Client:
    user = User.objects.create_user(username, is_staff=True)
    user.groups.add(editors_group())
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def anna():
    return editor_client("anna")


@pytest.fixture
def bob():
    return editor_client("bob")


@pytest.fixture
def acme_queue():
    """Three pending Acme shows (oldest first) with another brand's between them."""
    acme, other = BrandFactory(name="Acme"), BrandFactory(name="Other")
    shows = []
    for brand in (acme, other, acme, other, acme):
        shows.append(make_runway(images=2, brand=brand))
    return acme, [show for show in shows if show.brand == acme]


def messages_after(client, response) -> list[str]:
    """The messages the page a redirect leads to shows."""
    return [str(message) for message in client.get(response.url).context["messages"]]


def approve(client, record, filters: dict):
    page = client.get(in_queue(url(record, "change", record.pk), **filters))
    return client.post(
        in_queue(url(record, "change", record.pk), **filters),
        form_data(page, "runway_form", _approve="Approve and publish"),
    )


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

        # Then the page says where it stands, having read no list of albums to say it (the
        # most rows any query of the album table read: the list's brand filter, two brands)
        assert f"{place} pending in" in html
        assert rows and max(rows) <= 2


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


class TestCompareView:
    def test_a_near_duplicate_beside_the_image_it_repeats(self, anna):
        elsewhere = make_runway(images=1, title="Elsewhere", published=True)
        runway = make_runway(images=3, title="Here")
        original = elsewhere.images.get()
        twin = runway.images.order_by("sort_order")[2]
        RunwayImage.objects.filter(pk=original.pk).update(
            phash=0b1011, phash_algorithm="dct", width=640, height=960, byte_size=2048
        )
        RunwayImage.objects.filter(pk=twin.pk).update(
            is_duplicate=True, dup_of=original, phash=0b0110, phash_algorithm="dct"
        )

        response = anna.get(url(runway, "compare", runway.pk, twin.pk))
        html = response.content.decode()

        assert "This image: image 3 (id" in html
        assert f"The image it repeats: image 1 (id {original.pk})" in html
        assert 'id="review-distance">3<' in html  # 1011 ^ 0110 = 1101
        assert "640×960" in html and "2048 (2.0\xa0KB)" in html
        assert f'href="{url(elsewhere, "change", elsewhere.pk)}#image-{original.pk}"' in html
        assert "review-status-published" in html and "review-status-pending" in html
        # only the image of this album can be deleted from here
        assert html.count("Delete this one") == 1
        assert url(runway, "image", runway.pk, twin.pk, "delete") in html

    def test_review_duplicates_steps_through_the_flagged_images(self, anna):
        runway = make_runway(images=5)
        first, second, third, fourth, _ = runway.images.order_by("sort_order")
        for image in (second, fourth):
            RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=first)

        album = anna.get(url(runway, "change", runway.pk)).content.decode()
        step1 = anna.get(url(runway, "compare", runway.pk, second.pk), {"mode": "duplicates"})
        html = step1.content.decode()

        assert "Review duplicates (2)" in album
        assert "Near-duplicate 1 of 2" in html
        following = url(runway, "compare", runway.pk, fourth.pk) + "?mode=duplicates"
        assert f'href="{following}"' in html

        # Delete this one: the grid's own delete, then on to the next flagged image
        deleted = anna.post(
            url(runway, "image", runway.pk, second.pk, "delete"),
            _delete_form(step1),
        )
        assert deleted.url == following
        assert RunwayImage.objects.get(pk=second.pk).deleted_at is not None
        last = anna.get(following).content.decode()
        assert "Near-duplicate 1 of 1" in last  # the deleted one is no longer flagged here
        assert "Keep it, back to the album" in last

    def test_delete_this_one_from_an_out_of_date_page_is_refused(self, anna):
        runway = make_runway(images=3, duplicate=True)
        twin = runway.images.order_by("sort_order").last()
        page = anna.get(url(runway, "compare", runway.pk, twin.pk))
        Runway.objects.filter(pk=runway.pk).update(title="Changed meanwhile", version=9)

        response = anna.post(
            url(runway, "image", runway.pk, twin.pk, "delete"), _delete_form(page), follow=True
        )

        assert "changed since you opened it" in str(list(response.context["messages"])[0])
        assert RunwayImage.objects.get(pk=twin.pk).deleted_at is None


def _delete_form(page) -> dict:
    """The fields of the compare page's "Delete this one" form."""
    html = page.content.decode()
    start = html.index('<form method="post" action="')
    end = html.index("</form>", start)
    reader = FormReader()
    reader.feed(html[start : end + 7])
    [fields] = reader.forms.values()
    return {name: values[0] for name, values in fields.items()}


class TestImageOperationsInThePage:
    def test_the_answer_is_the_message_a_new_token_and_the_grid(self, anna):
        runway = make_runway(images=3)
        first, second, _ = runway.images.order_by("sort_order")
        page = anna.get(url(runway, "change", runway.pk))

        answer = anna.post(
            url(runway, "image", runway.pk, second.pk, "cover"),
            form_data(page, "image-ops"),
            headers={"X-Requested-With": "fetch"},
        ).json()

        assert answer["ok"] and answer["message"] == f"Image 2 (id {second.pk}) is now the cover."
        assert answer["image_total"] == 3
        assert f'id="image-{second.pk}"' in answer["grid"] and "is-cover" in answer["grid"]
        # the new token is the page's next write: a delete with it goes through
        deleted = anna.post(
            url(runway, "image", runway.pk, first.pk, "delete"),
            {**form_data(page, "image-ops"), "loaded": answer["token"]},
            headers={"X-Requested-With": "fetch"},
        ).json()
        assert deleted["ok"] and deleted["image_total"] == 2
        # and the page's old token is refused, as a reloaded page would not be
        stale = anna.post(
            url(runway, "image", runway.pk, second.pk, "delete"),
            form_data(page, "image-ops"),
            headers={"X-Requested-With": "fetch"},
        )
        assert stale.status_code == 409
        assert "changed since you opened it" in stale.json()["message"]
        assert RunwayImage.objects.get(pk=second.pk).deleted_at is None

    def test_a_street_operation_redraws_the_groups(self, anna):
        snap = make_street_snap(images=4)
        _, _, second, _ = snap.images.order_by("sort_order")
        page = anna.get(url(snap, "change", snap.pk))

        answer = anna.post(
            url(snap, "image", snap.pk, second.pk, "attach-previous"),
            form_data(page, "image-ops"),
            headers={"X-Requested-With": "fetch"},
        ).json()

        assert answer["ok"]
        assert answer["grid"].count('class="review-group"') == 1  # one group of four
