"""Grouping an album's images into looks (runway) and main -> details groups (street)."""

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from publicapi.grouping import group_details, group_looks


@dataclass(frozen=True)
class RunwayImage:
    id: int
    look_index: int


@dataclass(frozen=True)
class StreetImage:
    id: int
    parent_id: int | None


runway_albums = st.lists(st.integers(0, 6), max_size=30).map(
    lambda looks: [RunwayImage(id=n + 1, look_index=look) for n, look in enumerate(looks)]
)


@st.composite
def street_albums(draw):
    """Any parent references at all: to a main, to a detail, to an image not in the list."""
    size = draw(st.integers(0, 25))
    ids = list(range(1, size + 1))
    return [
        StreetImage(
            id=image_id,
            parent_id=draw(st.none() | st.sampled_from([*ids, 999]) if ids else st.none()),
        )
        for image_id in ids
    ]


@given(runway_albums)
def test_looks_hold_every_image_once_in_album_order(images):
    looks = group_looks(images)

    flat = [image for look in looks for image in look.images]
    assert sorted(flat, key=lambda i: i.id) == images
    for look in looks:
        assert all(image.look_index == look.look_index for image in look.images)
        assert look.images == [i for i in images if i.look_index == look.look_index]
    assert [look.look_index for look in looks] == sorted({i.look_index for i in images})


def test_looks_group_detail_shots_with_their_look():
    images = [RunwayImage(1, 2), RunwayImage(2, 1), RunwayImage(3, 2), RunwayImage(4, 1)]

    looks = group_looks(images)

    assert [(look.look_index, [i.id for i in look.images]) for look in looks] == [
        (1, [2, 4]),
        (2, [1, 3]),
    ]


@given(street_albums())
def test_groups_hold_every_image_once(images):
    groups = group_details(images)

    flat = [image for group in groups for image in [group.main, *group.details]]
    assert sorted(flat, key=lambda i: i.id) == images


@given(street_albums())
def test_a_detail_sits_under_its_parent_only_when_the_parent_is_a_main(images):
    by_id = {image.id: image for image in images}

    groups = group_details(images)

    for group in groups:
        for detail in group.details:
            assert detail.parent_id == group.main.id
            assert group.main.parent_id is None
        # Anything else stands as a main: no parent, or a parent that is not a main here.
        parent = by_id.get(group.main.parent_id)
        assert group.main.parent_id is None or parent is None or parent.parent_id is not None


@given(street_albums())
def test_groups_and_their_details_keep_album_order(images):
    groups = group_details(images)

    mains = [group.main.id for group in groups]
    assert mains == sorted(mains)
    for group in groups:
        assert [d.id for d in group.details] == sorted(d.id for d in group.details)


def test_details_before_their_main_still_group_under_it():
    images = [StreetImage(1, 3), StreetImage(2, None), StreetImage(3, None), StreetImage(4, 3)]

    groups = group_details(images)

    assert [(g.main.id, [d.id for d in g.details]) for g in groups] == [(2, []), (3, [1, 4])]


def test_an_orphaned_detail_and_a_detail_of_a_detail_stand_as_mains():
    images = [StreetImage(1, None), StreetImage(2, 1), StreetImage(3, 2), StreetImage(4, 99)]

    groups = group_details(images)

    assert [(g.main.id, [d.id for d in g.details]) for g in groups] == [
        (1, [2]),
        (3, []),
        (4, []),
    ]
