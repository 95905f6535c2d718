"""Brands and their aliases in the admin (review.admin.brands). Portable."""

from urllib.parse import urlencode

import pytest
from django.urls import reverse

from catalog.models import Brand, BrandAlias
from catalog.selectors import brand_resolve
from review import forms as review_forms
from tests.factories import BrandAliasFactory, BrandFactory
from tests.review.admin.support import (
    messages_of,
    url,
)
from tests.review.support import (
    form_data,
    page_forms,
)

pytestmark = pytest.mark.django_db


# --- brands -----------------------------------------------------------------------------------


def test_an_editor_adds_an_alias_to_a_brand(editor_client):
    brand = BrandFactory(name="Acne Studios", slug="acne-studios")
    page = editor_client.get(url(brand, "change", brand.pk))
    data = form_data(page, "brand_form", **{"aliases-0-alias": "ACNE"})

    response = editor_client.post(url(brand, "change", brand.pk), data)

    assert response.status_code == 302
    assert list(brand.aliases.values_list("alias", flat=True)) == ["ACNE"]
    assert "aliases-TOTAL_FORMS" in page_forms(page)["brand_form"]


class TestBrandAliases:
    def post_aliases(self, client, brand, *aliases: str, **extra):
        """Save the brand's page with `aliases` typed into its empty alias rows."""
        page = client.get(url(brand, "change", brand.pk))
        data = form_data(page, "brand_form")
        existing = int(data["aliases-INITIAL_FORMS"])
        for n, alias in enumerate(aliases, start=existing):
            data[f"aliases-{n}-alias"] = alias
            data[f"aliases-{n}-brand"] = str(brand.pk)
        data["aliases-TOTAL_FORMS"] = str(existing + len(aliases))
        data.update(extra)
        return client.post(url(brand, "change", brand.pk), data, follow=True)

    def row_errors(self, response) -> list[str]:
        [formset] = response.context["inline_admin_formsets"]
        return [str(error) for form in formset.formset.forms for error in form.errors.values()]

    def test_one_alias_typed_twice_in_different_capitals_is_a_row_error(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")

        response = self.post_aliases(editor_client, brand, "ACNE", "acne")

        assert response.status_code == 200
        [error] = self.row_errors(response)
        assert "“acne” is the same alias as “ACNE”" in error
        assert "capitals and spaces do not count" in error
        assert not brand.aliases.exists()

    def test_the_same_alias_spaced_differently_is_one_alias(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")

        response = self.post_aliases(editor_client, brand, "Acne Studios", " acne   studios")

        assert "is the same alias as “Acne Studios”" in self.row_errors(response)[0]
        assert not brand.aliases.exists()

    def test_an_alias_another_brand_holds_names_that_brand(self, editor_client):
        BrandAliasFactory(
            brand=BrandFactory(name="Acne Studios", slug="acne-studios"), alias="Acne"
        )
        other = BrandFactory(name="Acme", slug="acme")

        response = self.post_aliases(editor_client, other, "ACNE")

        [error] = self.row_errors(response)
        assert "“ACNE” is already an alias of Acne Studios" in error
        assert "Constraint" not in response.content.decode()
        assert not other.aliases.exists()

    def test_an_alias_is_saved_with_its_spaces_folded_and_then_resolves(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")

        self.post_aliases(editor_client, brand, "  ACNE \t  Paris ")

        assert list(brand.aliases.values_list("alias", flat=True)) == ["ACNE Paris"]
        assert brand_resolve(name="acne  paris") == brand

    def test_every_writer_folds_the_spaces(self):
        alias = BrandAliasFactory(alias="Acne  Studios\n")

        assert BrandAlias.objects.get(pk=alias.pk).alias == "Acne Studios"

    def test_an_editor_deletes_an_alias(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")
        BrandAliasFactory(brand=brand, alias="Wrong brand name")

        response = self.post_aliases(editor_client, brand, **{"aliases-0-DELETE": "on"})

        assert response.redirect_chain[-1][0] == url(brand, "changelist")
        assert not brand.aliases.exists()

    def test_renaming_one_row_frees_its_alias_for_a_new_row(self, editor_client):
        brand = BrandFactory(name="Acne Studios", slug="acne-studios")
        BrandAliasFactory(brand=brand, alias="Acne")

        self.post_aliases(editor_client, brand, "acne", **{"aliases-0-alias": "Acne Paris"})

        assert sorted(brand.aliases.values_list("alias", flat=True)) == ["Acne Paris", "acne"]

    def test_an_alias_another_editor_saved_meanwhile_is_a_message(self, editor_client, monkeypatch):
        # Given another editor who saves "ACNE" for another brand after this page's checks
        # passed, and before its save
        brand = BrandFactory(name="Acme", slug="acme")
        holder = BrandFactory(name="Acne Studios", slug="acne-studios")
        checked = review_forms.BrandAliasFormSet.clean

        def clean_then_lose_the_race(formset):
            checked(formset)
            BrandAlias.objects.create(brand=holder, alias="acne")

        monkeypatch.setattr(review_forms.BrandAliasFormSet, "clean", clean_then_lose_the_race)

        # When this editor saves the alias
        response = self.post_aliases(editor_client, brand, "ACNE", name="Acme Paris")

        # Then nothing of the save is kept, and the message says why
        [message] = messages_of(response)
        assert "Nothing was saved" in message and "already" in message
        assert not brand.aliases.exists()
        assert Brand.objects.get(pk=brand.pk).name == "Acme"


def test_an_alias_added_from_a_failed_job_goes_back_to_the_job(editor_client):
    acne = Brand.objects.create(name="Acne Studios", slug="acne-studios")
    job_page = "/admin/ingest/ingestjob/7/change/"
    query = urlencode({"alias": "ACNE", "next": job_page})
    add = f"{reverse('admin:catalog_brandalias_add')}?{query}"

    response = editor_client.post(add, {"brand": acne.pk, "alias": " ACNE  "})

    assert response.status_code == 302 and response.url == job_page
    assert brand_resolve(name="acne") == acne
    assert BrandAlias.objects.get().alias == "ACNE"


def test_an_alias_of_another_brand_is_refused_on_its_own_page(editor_client):
    acne, other = (Brand.objects.create(name=n, slug=n.lower()) for n in ("Acne", "Other"))
    BrandAlias.objects.create(brand=other, alias="ACNE")

    response = editor_client.post(
        reverse("admin:catalog_brandalias_add") + "?next=https://evil.example/",
        {"brand": acne.pk, "alias": "acne"},
    )

    assert response.status_code == 200
    assert "Another brand already has this alias." in response.content.decode()
    assert BrandAlias.objects.filter(brand=acne).count() == 0
