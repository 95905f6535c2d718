"""Soft claims (review.services.claim_take / claim_release, review.selectors.claims_of_others):
one holder per album, refreshed by its holder, free again when it lapses or is let go; two
editors taking one album at the same moment on real concurrent connections: one gets it."""

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.utils import timezone

from catalog.models import Runway
from review.models import ReviewClaim
from review.selectors import claims_of_others
from review.services import claim_release, claim_take
from tests.factories import RunwayFactory, StreetSnapFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def anna():
    return User.objects.create_user("anna")


@pytest.fixture
def bob():
    return User.objects.create_user("bob")


def test_the_first_editor_holds_the_album_and_the_others_see_who(anna, bob):
    runway = RunwayFactory()

    assert claim_take(record=runway, user=anna)
    assert not claim_take(record=runway, user=bob)

    assert claims_of_others(model=Runway, user=bob) == {runway.pk: "anna"}
    assert claims_of_others(model=Runway, user=anna) == {}
    assert claim_take(record=runway, user=anna)  # her own: refreshed, still hers
    assert ReviewClaim.objects.get().user == anna


def test_a_lapsed_claim_goes_to_the_next_editor(anna, bob, settings):
    settings.REVIEW_CLAIM_SECONDS = 300
    runway = RunwayFactory()
    claim_take(record=runway, user=anna)
    ReviewClaim.objects.update(touched_at=timezone.now() - timedelta(seconds=301))

    assert claims_of_others(model=Runway, user=bob) == {}
    assert claim_take(record=runway, user=bob)
    assert claims_of_others(model=Runway, user=anna) == {runway.pk: "bob"}


def test_letting_go_frees_the_album_at_once(anna, bob):
    runway = RunwayFactory()
    claim_take(record=runway, user=anna)

    claim_release(record=runway, user=bob)  # not his: nothing happens
    assert not claim_take(record=runway, user=bob)
    claim_release(record=runway, user=anna)

    assert claim_take(record=runway, user=bob)


def test_claims_of_two_kinds_do_not_mix(anna, bob):
    runway, snap = RunwayFactory(), StreetSnapFactory()
    snap.pk = runway.pk
    claim_take(record=runway, user=anna)

    assert claim_take(record=snap, user=bob)  # the street album with the same id is free


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("lapsed", [False, True], ids=["first claim", "lapsed claim"])
def test_two_editors_taking_one_album_at_once_one_gets_it(lapsed):
    runway = RunwayFactory()
    editors = [User.objects.create_user(name) for name in ("anna", "bob")]
    if lapsed:
        carl = User.objects.create_user("carl")
        claim_take(record=runway, user=carl)
        ReviewClaim.objects.update(touched_at=timezone.now() - timedelta(hours=1))
    for _ in range(10):
        start, results = threading.Barrier(2), {}

        def take(editor, start=start, results=results):
            try:
                start.wait()
                results[editor.username] = claim_take(record=runway, user=editor)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=take, args=(editor,)) for editor in editors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

        assert sorted(results.values()) == [False, True]
        [winner] = [name for name, won in results.items() if won]
        assert ReviewClaim.objects.get().user.username == winner
        ReviewClaim.objects.update(touched_at=timezone.now() - timedelta(hours=1))
