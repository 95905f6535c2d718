"""A repeated album (review.admin.views.repeats, review.services): shown at the album level
in the list and at the top of its page, compared with the album it repeats as two groups,
and decided in one step: reject as a duplicate of it, merge into it, or not a duplicate
(remembered, so ingest does not flag the pair again)."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.utils import formats, timezone

from catalog.models import NotDuplicate, Runway, RunwayImage
from catalog.selectors import image_near_duplicate_candidates
from review.models import ReviewEvent
from tests.factories import BrandFactory, IngestJobFactory, RunwayFactory, images_of
from tests.review.admin.support import change_url, in_queue, messages_of, url
from tests.review.support import form_data

pytestmark = pytest.mark.django_db

PHASH = "phash-draft128-v1"


def show(title: str, images: int, **fields) -> tuple[Runway, list[RunwayImage]]:
    runway = RunwayFactory(
        title=title,
        images=[{"phash": n} for n in range(images)],
        images__shots=1,
        images__phash_algorithm=PHASH,
        **fields,
    )
    return runway, images_of(runway)


@pytest.fixture
def repeated():
    """ "Acme AW24" (pending, 16 images): 14 repeat "Acme Fall 2024 RTW" (published, 14)."""
    acme = BrandFactory(name="Acme")
    original, originals = show(
        "Acme Fall 2024 RTW", 14, brand=acme, season_code="FW24", published=True
    )
    again, images = show("Acme AW24", 16, brand=acme, season_code="AW24")
    for image, twin in zip(images, originals, strict=False):
        RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=twin)
    return original, again


def test_the_list_and_the_page_say_the_album_repeats_another(editor_client, repeated):
    original, again = repeated

    listing = editor_client.get(url(Runway, "changelist")).content.decode()
    page = editor_client.get(change_url(again)).content.decode()

    assert "14 of 16 repeat “Acme Fall 2024 RTW” (published)</span>" in listing
    banner = page[page.index('id="review-repeat"') :]
    assert "14 of 16 images repeat" in banner
    assert f'<a href="{change_url(original)}">Acme Fall 2024 RTW</a></strong> (published)' in banner
    assert 'data-key="u"' in banner and 'data-key="m"' in banner
    # the original repeats nothing: its images are the ones repeated
    assert 'id="review-repeat"' not in editor_client.get(change_url(original)).content.decode()


def test_the_two_albums_compare_as_groups(editor_client, repeated):
    original, again = repeated

    response = editor_client.get(url(again, "repeats", again.pk, original.pk))

    assert [(p["here_number"], p["there_number"]) for p in response.context["pairs"]] == [
        (n, n) for n in range(1, 15)
    ]
    assert [item["number"] for item in response.context["only_here"]] == [15, 16]
    assert "Merge the 2 images it lacks into it (m)" in response.content.decode()


def decide(client, again, original, action):
    page = client.get(change_url(again))
    return client.post(
        url(again, "repeat", again.pk, original.pk, action), form_data(page, "transition-form")
    )


def test_reject_as_a_duplicate_names_the_album_it_repeats(editor_client, repeated):
    original, again = repeated
    following = RunwayFactory(title="Next in the queue")

    response = decide(editor_client, again, original, "reject")

    again.refresh_from_db()
    assert again.status == "rejected"
    assert again.reject_reason == (
        f"Duplicate of “Acme Fall 2024 RTW” (runway {original.pk}), which it repeats."
    )
    assert response.url == change_url(following)  # on to the next album of the queue


def test_merge_adds_the_images_the_other_lacks_and_rejects_this_one(editor_client, repeated):
    original, again = repeated
    extra = list(again.images.order_by("sort_order"))[14:]
    RunwayImage.objects.filter(pk=extra[0].pk).update(
        renditions=[{"width": 400, "height": 600, "key": "renditions/x/400.webp"}],
        rendition_status="done",
    )

    decide(editor_client, again, original, "merge")

    original.refresh_from_db()
    added = list(original.images.order_by("sort_order"))[14:]
    assert [(i.sort_order, i.storage_key) for i in added] == [
        (14, extra[0].storage_key),
        (15, extra[1].storage_key),
    ]
    assert added[0].rendition(400)["key"] == "renditions/x/400.webp"  # no new renditions needed
    assert (original.image_count, original.status) == (16, "published")
    again.refresh_from_db()
    assert again.status == "rejected"
    assert again.reject_reason == (
        f"Merged into “Acme Fall 2024 RTW” (runway {original.pk}): 2 images it lacked added to it."
    )
    # the published album's history says what came into it, and from where
    edit = ReviewEvent.objects.get(runway=original, action="edit")
    assert edit.reason == f"Added images 15, 16 from “Acme AW24” (runway {again.pk})."


def test_not_a_duplicate_clears_the_flags_and_ingest_remembers_it(editor_client, repeated):
    original, again = repeated
    compared = editor_client.get(url(again, "repeats", again.pk, original.pk))

    response = editor_client.post(
        url(again, "repeat", again.pk, original.pk, "distinct"),
        form_data(compared, "repeat-form"),
        follow=True,
    )

    assert "14 images no longer flagged as repeating" in messages_of(response)[0]
    assert not again.images.filter(is_duplicate=True).exists()
    assert 'id="review-repeat"' not in response.content.decode()
    assert NotDuplicate.objects.count() == 14
    # A new crawl of the same pictures: the lookup leaves out what an editor said is distinct
    first = again.images.order_by("sort_order").first()
    twin = original.images.order_by("sort_order").first()
    probes = [[first.phash_band0], [first.phash_band1], [first.phash_band2], [first.phash_band3]]
    found = image_near_duplicate_candidates(
        image_model=RunwayImage, probes=probes, phash_algorithm=PHASH
    )
    remembered = image_near_duplicate_candidates(
        image_model=RunwayImage,
        probes=probes,
        phash_algorithm=PHASH,
        sha1=first.sha1,
    )
    assert twin.pk in {pk for pk, _ in found}
    assert twin.pk not in {pk for pk, _ in remembered}


def test_a_stale_page_decides_nothing(editor_client, repeated):
    original, again = repeated
    page = editor_client.get(change_url(again))
    Runway.objects.filter(pk=again.pk).update(version=again.version + 1)

    response = editor_client.post(
        in_queue(url(again, "repeat", again.pk, original.pk, "merge")),
        form_data(page, "transition-form"),
        follow=True,
    )

    assert "changed since you opened it" in messages_of(response)[0]
    assert Runway.objects.get(pk=again.pk).status == "pending"
    assert original.images.count() == 14


def test_deciding_needs_the_permission_to_reject(client, repeated):
    original, again = repeated
    viewer = User.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_runway"))
    client.force_login(viewer)

    response = client.post(url(again, "repeat", again.pk, original.pk, "reject"), {})

    assert response.status_code == 403
    assert Runway.objects.get(pk=again.pk).status == "pending"


def test_two_albums_of_one_title_are_named_by_season_source_and_id(editor_client):
    # given the same show crawled twice under two season codes, every image repeated
    acme = BrandFactory(name="Acme")
    original, originals = show(
        "Acme Fall 2024", 3, brand=acme, season_code="FW24", source="vogue", published=True
    )
    again, images = show("Acme Fall 2024", 3, brand=acme, season_code="AW24", source="wwd")
    for image, twin in zip(images, originals, strict=True):
        RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=twin)

    response = editor_client.get(url(again, "repeats", again.pk, original.pk))
    page = editor_client.get(change_url(again)).content.decode()

    # then the page does not call itself "X beside X"
    assert response.context["title"] == (
        f"“Acme Fall 2024” (AW24, wwd, runway {again.pk}) beside "
        f"“Acme Fall 2024” (FW24, vogue, runway {original.pk})"
    )
    # and offers no merge: every image repeats one of the other album's, a merge adds nothing
    assert response.context["can_merge"] is False
    assert "Merge the" not in response.content.decode()
    assert 'data-key="m"' not in page[page.index('id="review-repeat"') :]
    assert 'data-key="u"' in page


def test_the_album_page_and_the_job_page_show_times_in_one_format(editor_client, editor):
    # given an album from an ingest job, both made at one moment
    moment = timezone.now().replace(year=2026, month=12, day=7, hour=2, minute=54)
    job = IngestJobFactory(status="succeeded")
    runway, _ = show("Dated", 1)
    Runway.objects.filter(pk=runway.pk).update(created_at=moment, ingest_job_id=job.pk)
    type(job).objects.filter(pk=job.pk).update(created_at=moment)
    editor.user_permissions.add(Permission.objects.get(codename="view_ingestjob"))

    album = editor_client.get(change_url(runway)).content.decode()
    listing = editor_client.get(url(Runway, "changelist")).content.decode()
    job_page = editor_client.get(url(job, "change", job.pk)).content.decode()

    # then each page writes it as Django's own fields do: the locale's DATETIME_FORMAT
    shown = formats.date_format(timezone.localtime(moment), "DATETIME_FORMAT")
    assert shown == "Dec. 7, 2026, 2:54 a.m."
    assert f"received {shown}" in album
    assert f'title="{shown}"' in listing
    assert shown in job_page


# --- many repeats at once: the bulk reject with its preview, the undo, a source's re-posts --


def test_the_bulk_reject_of_repeats_previews_then_rejects_only_those_that_repeat(
    editor_client, repeated
):
    original, again = repeated
    unrelated, _ = show("Other show", 2, brand=original.brand, season_code="SS25")
    selection = {
        "action": "reject_repeats_selected",
        "_selected_action": [again.pk, unrelated.pk],
    }

    # the preview: which album, which published album it repeats, how many images
    preview = editor_client.post(url(Runway, "changelist"), selection)
    html = preview.content.decode()
    start = html.index('id="repeats-rejected"')
    rows = html[start : html.index("</table>", start)]
    assert "Acme AW24" in rows and "Acme Fall 2024 RTW" in rows and "14 of 16" in rows
    assert "Other show" not in rows
    assert "Other show" in html[html.index('id="repeats-left"') :]
    assert Runway.objects.get(pk=again.pk).status == "pending"  # nothing done yet

    # confirmed: the album that repeats is rejected as a repeat; the other is left pending
    done = editor_client.post(
        url(Runway, "changelist"),
        {**selection, "_selected_action": [again.pk], "confirm": "yes"},
        follow=True,
    )
    assert "Rejected 1 runway." in messages_of(done)
    assert Runway.objects.get(pk=again.pk).status == "rejected"
    assert Runway.objects.get(pk=unrelated.pk).status == "pending"
    assert ReviewEvent.objects.get().action == "reject_repeat"


def test_a_rejection_as_a_repeat_is_undone_from_the_albums_history(editor_client, repeated):
    _, again = repeated
    editor_client.post(
        url(Runway, "changelist"),
        {"action": "reject_repeats_selected", "_selected_action": [again.pk], "confirm": "yes"},
    )
    page = editor_client.get(change_url(again))
    undo = page.context["review"]["undo"]
    assert "Undo: back to pending" in page.content.decode()

    response = editor_client.post(undo["url"], follow=True)

    assert f"“{again}” is back in the review queue, pending." in messages_of(response)
    assert Runway.objects.get(pk=again.pk).status == "pending"
    assert list(ReviewEvent.objects.values_list("action", flat=True)) == [
        "reject_repeat",
        "restore",
    ]
    # the undone row is no longer offered: the album changed since
    assert editor_client.get(change_url(again)).context["review"]["undo"] is None


def test_a_sources_reposts_fold_under_the_first_album_and_go_with_its_decision(editor_client):
    # given a crawler that sent one show twice, under two URLs: every image repeated
    acme = BrandFactory(name="Acme")
    first, firsts = show("Acme FW24", 3, brand=acme, season_code="FW24", source="vogue")
    Runway.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(hours=1))
    again, images = show("Acme FW24 (2)", 3, brand=acme, season_code="AW24", source="vogue")
    for image, twin in zip(images, firsts, strict=True):
        RunwayImage.objects.filter(pk=image.pk).update(is_duplicate=True, dup_of=twin)

    # the queue lists one row, the first album, which names its re-post; the tab counts rows
    queue = editor_client.get(url(Runway, "changelist"))
    assert [r.pk for r in queue.context["cl"].result_list] == [first.pk]
    assert "Re-posted once by vogue, decided with it" in queue.content.decode()
    assert (
        dict((t["label"], t["count"]) for t in queue.context["status_tabs"])["Pending review"] == 1
    )
    page = editor_client.get(change_url(first))
    assert page.context["review"]["reposts"] == [again]

    # approving the first album decides the re-post: rejected as its duplicate
    response = editor_client.post(
        change_url(first), form_data(page, "runway_form", _approve="Approve"), follow=True
    )

    assert any(m.startswith("Also rejected 1 re-post of it") for m in messages_of(response))
    again.refresh_from_db()
    assert (again.status, again.reject_reason) == (
        "rejected",
        f"Duplicate of “Acme FW24” (runway {first.pk}), which it repeats.",
    )
