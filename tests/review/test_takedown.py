"""Takedowns (review.services.record_take_down, image_take_down): the album or image leaves
the public site with the write, its bytes go private after it, the history says who, when
and why; its own permission. On both databases; the public store is a folder of copies."""

import pytest
from django.contrib.auth.models import Permission, User

from catalog.models import MediaChange
from catalog.services import RecordStateError
from publicapi.models import PublicRunway, PublicRunwayImage
from review.models import ReviewEvent
from review.services import (
    TransitionRefused,
    image_take_down,
    record_approve,
    record_take_down,
)
from tests.support import curator
from tests.visibility_support import album, keys_of, public_files, run_jobs

pytestmark = pytest.mark.django_db


def published(**kwargs):
    record = album(status="pending", **kwargs)
    record_approve(record=record, actor=curator())
    run_jobs()
    return record


def only_takedown(username: str = "legal") -> User:
    """Staff who may take albums down and nothing else: no change, publish or reject."""
    user = User.objects.create_user(username, is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["takedown_runway", "takedown_streetsnap"])
    )
    return User.objects.get(pk=user.pk)


@pytest.mark.parametrize("kind", ["runway", "street"])
def test_a_takedown_leaves_the_site_at_once_and_its_bytes_after(public_copies, kind):
    record = album(kind, status="pending")
    record_approve(record=record, actor=curator())
    run_jobs()
    actor = only_takedown()

    event = record_take_down(record=record, actor=actor, reason="The photographer asked")

    record.refresh_from_db()
    assert (record.status, record.reject_reason, record.bytes_public) == (
        "rejected",
        "The photographer asked",
        False,
    )
    assert (event.action, event.from_status, event.to_status, event.actor) == (
        "takedown",
        "published",
        "rejected",
        actor,
    )
    assert public_files() == keys_of(record)  # until the job runs
    run_jobs()
    assert public_files() == set()


def test_a_takedown_with_delete_keeps_crawlers_from_bringing_it_back(public_copies):
    runway = published()

    event = record_take_down(
        record=runway, actor=only_takedown(), reason="Agency request", delete=True
    )

    runway.refresh_from_db()
    assert runway.deleted_at is not None and runway.status == "rejected"
    assert event.changes == {"deleted": ["no", "yes"]}
    run_jobs()
    assert public_files() == set()
    # A deleted album cannot be changed any more (its article stays taken: crawlers.md).
    with pytest.raises(RecordStateError):
        record_take_down(record=runway, actor=curator(), reason="again")


def test_a_pending_album_taken_down_is_announced_even_though_nobody_saw_it(public_copies):
    runway = album(status="pending")

    record_take_down(record=runway, actor=only_takedown(), reason="Embargoed show")

    assert MediaChange.objects.filter(record_id=runway.pk).exists()
    run = run_jobs()
    assert run.ok and public_files() == set()


def test_a_takedown_needs_its_own_permission_and_a_reason(make_editor):
    runway = published()
    publisher_only = make_editor("bob")
    publisher_only.groups.first().permissions.remove(
        *Permission.objects.filter(codename__startswith="takedown_")
    )
    publisher_only = User.objects.get(pk=publisher_only.pk)

    with pytest.raises(TransitionRefused, match="permission to take runways down"):
        record_take_down(record=runway, actor=publisher_only, reason="no")
    with pytest.raises(TransitionRefused, match="A reason is required"):
        record_take_down(record=runway, actor=only_takedown(), reason="  ")
    assert not ReviewEvent.objects.filter(action="takedown").exists()


def test_an_image_taken_down_leaves_the_album_and_its_bytes_go(public_copies):
    runway = published(photos=("astronaut", "coffee", "rocket"))
    image = runway.images.exclude(pk=runway.cover_id).first()

    curated = image_take_down(image=image, actor=only_takedown(), reason="The model asked")

    assert not PublicRunwayImage.objects.filter(pk=image.pk).exists()
    assert PublicRunway.objects.filter(pk=runway.pk).exists()
    assert curated.note.startswith("Took down image") and curated.note.endswith("The model asked")
    event = runway.review_events.get(action="takedown")
    assert (event.from_status, event.to_status, event.reason) == (
        "published",
        "published",
        curated.note,
    )
    run_jobs()
    assert image.storage_key not in public_files()
    assert public_files() == keys_of(runway)


def test_the_last_image_taken_down_takes_the_album_with_it(public_copies):
    runway = published(photos=("astronaut",))

    curated = image_take_down(
        image=runway.images.get(), actor=only_takedown(), reason="The photographer asked"
    )

    runway.refresh_from_db()
    assert runway.status == "rejected"
    assert "and the album with it" in curated.note
    assert list(
        runway.review_events.filter(action="takedown").values_list("to_status", flat=True)
    ) == [
        "rejected",
        "rejected",
    ]
    run_jobs()
    assert public_files() == set()
