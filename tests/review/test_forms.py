"""The record form: entity-key parts an editor types are saved in the catalog's normal form
(catalog.keys, as ingest and the legacy import store them), shown that way, and checked against
other albums' keys in that form. Portable (PostgreSQL and SQLite)."""

import pytest
from django.forms import modelform_factory
from django.urls import reverse

from catalog.keys import normalize_collection_type, normalize_season_code
from catalog.models import Runway, StreetSnap
from review.forms import RecordForm
from tests.factories import BrandFactory
from tests.review.support import form_data, make_runway, make_street_snap

pytestmark = pytest.mark.django_db


def change_url(record) -> str:
    opts = record._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[record.pk])


def edit(editor_client, record, **fields):
    """Post the record page's form with some fields changed, as an editor does."""
    page = editor_client.get(change_url(record))
    form_id = f"{record._meta.model_name}_form"
    return editor_client.post(change_url(record), form_data(page, form_id, **fields), follow=True)


def bound_form(record, **fields) -> RecordForm:
    """The record form as the admin builds it, submitted with some fields changed."""
    form_class = modelform_factory(type(record), form=RecordForm, fields=record.editable_fields)
    unbound = form_class(instance=record)
    data = {name: unbound[name].value() for name in unbound.fields}
    return form_class(data={**data, **fields}, instance=record)


class TestKeyPartsAreNormalised:
    def test_an_editors_fw24_is_saved_and_shown_as_fw24(self, editor_client):
        runway = make_runway(season_code="SS25", collection_type="couture")

        response = edit(
            editor_client,
            runway,
            season_code=" fw 24",
            collection_type="Ready to Wear",
            _continue="Save and continue editing",
        )

        runway.refresh_from_db()
        assert (runway.season_code, runway.collection_type) == ("FW24", "ready-to-wear")
        # The page the editor lands on shows the stored, normal value.
        shown = response.context["adminform"].form
        assert (shown["season_code"].value(), shown["collection_type"].value()) == (
            "FW24",
            "ready-to-wear",
        )

    def test_approve_saves_the_edit_in_its_normal_form(self, editor_client):
        runway = make_runway(season_code="SS25")

        edit(editor_client, runway, season_code="fw24", _approve="1")

        runway.refresh_from_db()
        assert (runway.status, runway.season_code) == ("published", "FW24")

    def test_a_street_city_is_saved_with_its_spaces_folded_and_its_case_kept(self, editor_client):
        snap = make_street_snap(city="Paris")

        edit(editor_client, snap, city="  New   York ")

        snap.refresh_from_db()
        assert snap.city == "New York"

    def test_a_decomposed_city_and_title_are_saved_composed(self, editor_client):
        # "São Paulo" typed with an "a" and a combining tilde (as some keyboards send it).
        snap = make_street_snap(city="Paris", title="Look")

        edit(editor_client, snap, city="Sa\u0303o Paulo", title="Sa\u0303o Paulo Look")

        snap.refresh_from_db()
        assert (snap.city, snap.title_key) == ("S\u00e3o Paulo", "S\u00e3o Paulo Look")

    def test_retyping_the_stored_value_in_another_spelling_changes_nothing(self, editor_client):
        runway = make_runway(season_code="FW24")

        edit(editor_client, runway, season_code="fw-24")

        runway.refresh_from_db()
        assert (runway.season_code, runway.version) == ("FW24", 1)

    def test_the_help_text_says_what_is_saved(self, editor_client):
        page = editor_client.get(change_url(make_runway())).content.decode()

        assert "is saved as FW24" in page
        assert "is saved as ready-to-wear" in page

    @pytest.mark.parametrize(
        ("field", "value", "message"),
        [
            ("season_code", "FW/24", "Letters and digits"),
            ("season_code", "ÉTÉ24", "Letters and digits"),
            ("collection_type", "---", "A collection type"),
            ("collection_type", "ﬀ" * 20, "at most 32"),
        ],
    )
    def test_a_value_without_a_normal_form_is_a_field_error(self, field, value, message):
        runway = make_runway(images=0)

        form = bound_form(runway, **{field: value})

        assert not form.is_valid()
        assert message in str(form.errors[field])

    def test_the_form_gives_the_values_the_ingest_normalisers_give(self):
        runway = make_runway(images=0)

        form = bound_form(runway, season_code="Pf 25", collection_type="PRE_FALL")

        assert form.is_valid(), form.errors
        assert form.cleaned_data["season_code"] == normalize_season_code("Pf 25") == "PF25"
        assert form.cleaned_data["collection_type"] == normalize_collection_type("PRE_FALL")


class TestEntityKeyCheck:
    def test_another_spelling_of_another_albums_key_is_refused(self, editor_client):
        acme = BrandFactory(slug="acme")
        make_runway(brand=acme, season_code="FW24", collection_type="ready-to-wear")
        mine = make_runway(brand=acme, season_code="SS25", collection_type="ready-to-wear")

        response = edit(editor_client, mine, season_code="fw24")

        assert "already has this brand, season code" in str(
            response.context["adminform"].form.errors
        )
        assert Runway.objects.get(pk=mine.pk).season_code == "SS25"

    def test_a_city_spaced_differently_is_another_albums_key(self, editor_client):
        make_street_snap(city="New York", year=2024, month=9, title="Fashion Week")
        mine = make_street_snap(city="Paris", year=2024, month=9, title="Fashion Week")

        response = edit(editor_client, mine, city="New  York")

        assert "already has this city" in str(response.context["adminform"].form.errors)
        assert StreetSnap.objects.get(pk=mine.pk).city == "Paris"

    def test_a_city_typed_decomposed_is_the_same_albums_key(self, editor_client):
        make_street_snap(city="S\u00e3o Paulo", year=2024, month=9, title="Fashion Week")
        mine = make_street_snap(city="Lisbon", year=2024, month=9, title="Fashion Week")

        response = edit(editor_client, mine, city="Sa\u0303o Paulo")

        assert "already has this city" in str(response.context["adminform"].form.errors)
        assert StreetSnap.objects.get(pk=mine.pk).city == "Lisbon"


class TestYearAndMonth:
    @pytest.mark.parametrize(
        ("make", "fields", "field", "message"),
        [
            (make_street_snap, {"month": "13"}, "month", "a number from 1 (January) to 12"),
            (make_street_snap, {"month": "0"}, "month", "only for albums from the old archive"),
            (make_runway, {"year": "20244"}, "year", "a year from 1850 to 2100"),
            (make_street_snap, {"year": "1492"}, "year", "a year from 1850 to 2100"),
        ],
    )
    def test_an_impossible_date_is_a_field_error_in_words(
        self, make, fields, field, message, editor_client
    ):
        record = make(images=0, month=5) if make is make_street_snap else make(images=0)

        response = edit(editor_client, record, **fields)

        errors = str(response.context["adminform"].form.errors[field])
        assert message in errors and "Constraint" not in errors
        assert type(record).objects.get(pk=record.pk).version == 1

    def test_an_album_from_the_old_archive_keeps_its_unknown_month_and_year(self, editor_client):
        # Given a legacy album whose month and year are unknown (0)
        snap = make_street_snap(images=0, year=0, month=0, title="Old")

        # When an editor fixes its title and leaves the rest as it is
        edit(editor_client, snap, title="Old street style")

        # Then it saves
        snap.refresh_from_db()
        assert (snap.title, snap.year, snap.month, snap.version) == ("Old street style", 0, 0, 2)

    def test_a_legacy_album_can_be_given_its_real_month(self, editor_client):
        snap = make_street_snap(images=0, month=0)

        edit(editor_client, snap, month="9")

        assert StreetSnap.objects.get(pk=snap.pk).month == 9
