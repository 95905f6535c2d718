"""The image grid and its operations (review.admin.views.curation): the plain form posts, the
in-page answers (JSON) and the near-duplicate compare view, through the image services.
Portable."""

import pytest
from django.test import Client

from catalog.models import Runway, RunwayImage, StreetSnap
from tests.review.admin.support import (
    change_url,
    messages_of,
    post_image_op,
    url,
)
from tests.review.support import (
    FormReader,
    form_data,
    make_runway,
    make_street_snap,
)

pytestmark = pytest.mark.django_db


# --- curation endpoints ----------------------------------------------------------------------


class TestCuration:
    def test_delete_the_cover_moves_it_and_says_so(self, editor_client):
        runway = make_runway(images=3)
        first, second, _ = runway.images.order_by("sort_order")

        response = post_image_op(editor_client, runway, first.pk, "delete")

        runway.refresh_from_db()
        assert (runway.cover_id, runway.image_count) == (second.pk, 2)
        assert messages_of(response) == [
            f"Deleted image 1 (id {first.pk}); the cover moved to image 2 (id {second.pk})."
        ]
        assert response.redirect_chain[-1][0] == change_url(runway) + "#images"

    def test_make_cover(self, editor_client):
        runway = make_runway(images=3)
        last = runway.images.order_by("sort_order").last()

        post_image_op(editor_client, runway, last.pk, "cover")

        runway.refresh_from_db()
        assert runway.cover_id == last.pk

    def test_street_attach_detach_and_attach_selected(self, editor_client):
        snap = make_street_snap(images=4)  # main, detail, main, detail
        a, a_detail, b, b_detail = snap.images.order_by("sort_order")

        post_image_op(editor_client, snap, b.pk, "attach-previous")
        assert set(snap.images.filter(parent=a).values_list("pk", flat=True)) == {
            a_detail.pk,
            b.pk,
            b_detail.pk,
        }

        post_image_op(editor_client, snap, b.pk, "detach")
        page = editor_client.get(change_url(snap))
        editor_client.post(
            url(snap, "attach", snap.pk),
            {**form_data(page, "image-ops"), "main": b.pk, "images": [a_detail.pk, b_detail.pk]},
        )

        assert set(snap.images.filter(parent=b).values_list("pk", flat=True)) == {
            a_detail.pk,
            b_detail.pk,
        }
        assert not snap.images.filter(parent=a).exists()

    def test_attach_selected_moves_a_main_image_with_its_own_detail(self, editor_client):
        snap = make_street_snap(images=4)  # main, detail, main, detail
        a, a_detail, b, b_detail = snap.images.order_by("sort_order")
        page = editor_client.get(change_url(snap))

        response = editor_client.post(
            url(snap, "attach", snap.pk),
            {**form_data(page, "image-ops"), "main": a.pk, "images": [b.pk, b_detail.pk]},
            follow=True,
        )

        assert set(snap.images.filter(parent=a).values_list("pk", flat=True)) == {
            a_detail.pk,
            b.pk,
            b_detail.pk,
        }
        assert messages_of(response) == [
            f"Images 3 (id {b.pk}), 4 (id {b_detail.pk}) attached to main image 1 (id {a.pk})."
        ]
        assert StreetSnap.objects.get(pk=snap.pk).version == 2

    def test_attach_selected_refuses_the_main_image_itself(self, editor_client):
        snap = make_street_snap(images=4)
        a, a_detail, b, _ = snap.images.order_by("sort_order")
        page = editor_client.get(change_url(snap))

        response = editor_client.post(
            url(snap, "attach", snap.pk),
            {**form_data(page, "image-ops"), "main": a.pk, "images": [a.pk, b.pk]},
            follow=True,
        )

        assert "cannot be a detail of itself" in messages_of(response)[0]
        assert StreetSnap.objects.get(pk=snap.pk).version == 1

    def test_a_refused_operation_says_why(self, editor_client):
        snap = make_street_snap(images=2)
        main = snap.images.order_by("sort_order").first()

        response = post_image_op(editor_client, snap, main.pk, "detach")

        assert messages_of(response) == [f"Image {main.pk} is already a main image."]

    def test_an_image_of_another_album_is_refused(self, editor_client):
        runway, other = make_runway(images=1), make_runway(images=1)
        foreign = other.images.get()

        response = post_image_op(editor_client, runway, foreign.pk, "delete")

        assert RunwayImage.objects.get(pk=foreign.pk).deleted_at is None
        assert "is not an image of" in messages_of(response)[0]

    def test_curation_is_logged_in_the_admin_history(self, editor_client):
        runway = make_runway(images=2)
        last = runway.images.order_by("sort_order").last()

        post_image_op(editor_client, runway, last.pk, "cover")

        history = editor_client.get(url(runway, "history", runway.pk)).content.decode()
        assert f"Image 2 (id {last.pk}) is now the cover." in history

    def test_operations_need_post_and_a_csrf_token(self, editor):
        runway = make_runway(images=2)
        image = runway.images.first()
        strict = Client(enforce_csrf_checks=True)
        strict.force_login(editor)

        got = strict.get(url(runway, "image", runway.pk, image.pk, "delete"))
        posted = strict.post(url(runway, "image", runway.pk, image.pk, "delete"), {})

        assert got.status_code == 302 and posted.status_code == 403
        assert RunwayImage.objects.get(pk=image.pk).deleted_at is None


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
