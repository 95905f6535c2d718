"""The loaded-version token and the words for what changed since. Portable."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.core import signing

from catalog.models import Runway
from catalog.services import (
    RecordWriteRefused,
    StaleRecord,
    image_delete,
    record_set_cover,
    record_update,
)
from review.conflicts import (
    OUT_OF_DATE,
    BadToken,
    Loaded,
    OutOfDate,
    conflict_if_stale,
    conflict_message,
    describe_changes,
    loaded_token,
    read_loaded,
    read_token,
)
from review.services import record_approve, record_edit, record_reject
from tests.review.support import make_runway
from tests.support import curator

pytestmark = pytest.mark.django_db


def loaded(record) -> Loaded:
    return read_token(loaded_token(record))


def current(record):
    return type(record).objects.get(pk=record.pk)


class TestToken:
    def test_round_trip(self):
        runway = make_runway(title="Acme")

        state = loaded(runway)

        assert state.version == 1
        assert state.values["title"] == "Acme"
        assert state.values["status"] == "pending"

    @pytest.mark.parametrize(
        "token",
        [
            pytest.param(None, id="missing"),
            pytest.param("", id="empty"),
            pytest.param("garbage", id="garbage"),
            # Signed now, at collection: its value carries the time, its id must not (every
            # pytest-xdist worker must collect the same ids).
            pytest.param(signing.dumps({"v": 1}, salt="x"), id="signed-for-another-purpose"),
        ],
    )
    def test_a_missing_forged_or_foreign_token_is_refused(self, token):
        with pytest.raises(BadToken):
            read_token(token)

    @pytest.mark.parametrize("token", [None, "garbage"])
    def test_a_write_from_a_page_without_a_valid_token_is_refused_as_out_of_date(self, token):
        with pytest.raises(OutOfDate) as refused:
            read_loaded(token)

        assert str(refused.value) == OUT_OF_DATE
        assert isinstance(refused.value, RecordWriteRefused)  # reported like any refusal

    def test_a_long_description_travels_as_a_digest(self):
        runway = make_runway(description="A" * 5000)

        token = loaded_token(runway)

        assert len(token) < 1000
        assert "A" * 100 not in str(read_token(token).values)


class TestDescribe:
    def test_transitions_since_the_loaded_version_name_who_and_when(self, make_editor):
        runway = make_runway()
        record_approve(record=runway, actor=make_editor("early"))
        state = loaded(current(runway))
        Runway.objects.filter(pk=runway.pk).update(status="pending")
        record_reject(record=runway, actor=make_editor("anna"), reason="Wrong brand")

        lines = describe_changes(current(runway), state)

        assert len([line for line in lines if line.startswith("status changed")]) == 1
        assert lines[0].startswith("status changed from pending to rejected by anna at ")
        assert lines[0].endswith("(reason: “Wrong brand”)")

    def test_field_edits_show_old_and_new_values(self):
        runway = make_runway(title="Old", description="x")
        state = loaded(runway)

        record_update(
            actor=curator(),
            record=runway,
            changes={"title": "New", "description": "y", "year": 1999},
        )

        lines = describe_changes(current(runway), state)
        assert "title changed from “Old” to “New”" in lines
        assert "year changed from “2024” to “1999”" in lines
        assert "description changed" in lines

    def test_image_and_cover_changes(self):
        runway = make_runway(images=3)
        state = loaded(runway)
        images = list(runway.images.order_by("sort_order"))

        record_set_cover(actor=curator(), record=runway, image=images[2])
        assert describe_changes(current(runway), state) == ["its cover changed"]

        image_delete(actor=curator(), image=images[1])
        assert describe_changes(current(runway), state) == ["its images changed (3 → 2 images)"]

    def test_the_admins_change_log_names_the_editor(self, editor):
        runway = make_runway()
        state = loaded(runway)
        record_set_cover(
            actor=curator(), record=runway, image=runway.images.order_by("sort_order").last()
        )
        LogEntry.objects.log_actions(
            user_id=editor.pk,
            queryset=[runway],
            action_flag=CHANGE,
            change_message="Image 3 is now the cover.",
            single_object=True,
        )

        lines = describe_changes(current(runway), state)

        assert lines[0] == "its cover changed"
        assert lines[1].startswith("edited by anna at ")
        assert lines[1].endswith("(Image 3 is now the cover)")

    def test_with_only_a_version_it_still_says_something(self):
        runway = make_runway()
        record_update(actor=curator(), record=runway, changes={"title": "Somebody's"})

        lines = describe_changes(current(runway), Loaded(version=1))

        assert lines == ["someone else changed it"]  # in words: no "version" jargon

    def test_an_edit_while_published_is_named_once_as_an_edit_not_a_status_change(
        self, make_editor
    ):
        runway = make_runway(title="Acme")
        record_approve(record=runway, actor=make_editor("anna"))
        state = loaded(current(runway))

        record_edit(record=runway, actor=make_editor("bob"), changes={"title": "Acme FW"})

        lines = describe_changes(current(runway), state)
        assert lines == ["title changed from “Acme” to “Acme FW”"]

    def test_the_message_says_nothing_was_saved(self):
        runway = make_runway(title="Acme")
        state = loaded(runway)
        record_update(actor=curator(), record=runway, changes={"title": "Acme FW"})

        message = conflict_message(current(runway), state)

        assert message.startswith("“Acme FW” changed since you opened it: title changed")
        assert "Nothing was saved" in message
        assert "version" not in message


class TestConflictIfStale:
    def test_a_stale_write_is_refused_with_what_changed(self):
        runway = make_runway(title="Acme")
        state = loaded(runway)
        record_update(actor=curator(), record=runway, changes={"title": "Acme FW"})

        with pytest.raises(RecordWriteRefused) as refused, conflict_if_stale(state):
            record_update(
                actor=curator(), record=runway, changes={"title": "Mine"}, expected_version=1
            )

        assert not isinstance(refused.value, StaleRecord)
        assert str(refused.value) == conflict_message(current(runway), state)
        assert isinstance(refused.value.__cause__, StaleRecord)

    def test_other_refusals_pass_through_unchanged(self):
        refusal = RecordWriteRefused("No.")

        with pytest.raises(RecordWriteRefused) as refused, conflict_if_stale(Loaded(version=1)):
            raise refusal

        assert refused.value is refusal
