"""Brands and their aliases, saved through Django's own ModelAdmin path: the alias form set
checks the aliases, and the unique constraint decides a race. An alias can also be added on
its own page, pre-filled (?alias=...): an ingest job failed on an unknown brand links it."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import IntegrityError, transaction
from django.http import HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme

from catalog.models import Brand, BrandAlias
from review.forms import BrandAliasAddForm, BrandAliasForm, BrandAliasFormSet


class BrandAliasInline(admin.TabularInline):
    model = BrandAlias
    form = BrandAliasForm
    formset = BrandAliasFormSet
    extra = 1
    verbose_name = "alias"
    verbose_name_plural = (
        "Aliases (names crawlers send for this brand; capitals and spaces do not count)"
    )


class AliasTakenMeanwhile(Exception):
    pass


ALIAS_TAKEN_MEANWHILE = (
    "Nothing was saved: one of these aliases is already taken, most likely saved for another "
    "brand by someone else a moment ago. Reload the page to see the aliases as they are now, "
    "then make your changes again."
)


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    inlines = [BrandAliasInline]
    list_display = ("name", "slug", "aliases_column", "is_featured")
    list_filter = ("is_featured",)
    search_fields = ("name", "slug", "aliases__alias")
    prepopulated_fields = {"slug": ["name"]}

    def save_formset(self, request, form, formset, change):
        try:
            with transaction.atomic():
                super().save_formset(request, form, formset, change)
        except IntegrityError as error:
            # The formset checked the aliases against every other brand's, but another
            # editor's save can commit between that check and this one; the unique
            # constraint (brand_alias_unique_ci) decides.
            raise AliasTakenMeanwhile(ALIAS_TAKEN_MEANWHILE) from error

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # Raised inside the view's transaction, which rolls the brand's own edits back too.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except AliasTakenMeanwhile as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("aliases")

    @admin.display(description="aliases")
    def aliases_column(self, brand: Brand) -> str:
        return ", ".join(alias.alias for alias in brand.aliases.all()) or "–"


@admin.register(BrandAlias)
class BrandAliasAdmin(admin.ModelAdmin):
    """One alias at a time: the page a failed job's "add this alias" link opens, with the
    name the crawler sent filled in; the editor picks the brand. The database's unique
    constraint (brand_alias_unique_ci) refuses a name another brand has, as a form error."""

    form = BrandAliasAddForm
    list_display = ("alias", "brand")
    search_fields = ("alias", "brand__name")
    autocomplete_fields = ["brand"]

    def response_add(self, request, obj, post_url_continue=None):
        # Back where the link came from (the job's page, to retry it), if it is ours.
        following = request.GET.get("next", "")
        if following and url_has_allowed_host_and_scheme(
            following, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            self.message_user(
                request, f"“{obj.alias}” is now an alias of {obj.brand}.", messages.SUCCESS
            )
            return HttpResponseRedirect(following)
        return super().response_add(request, obj, post_url_continue)
