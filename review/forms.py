from typing import cast

from django import forms
from django.core.exceptions import ValidationError
from django.db.models.functions import Lower

from catalog.keys import (
    KeyValueError,
    fold_whitespace,
    normalize_city,
    normalize_collection_type,
    normalize_season_code,
)
from catalog.models import YEAR_MAX, YEAR_MIN, BrandAlias
from catalog.selectors import record_by_entity_key
from review.conflicts import Loaded, OutOfDate, conflict_message, loaded_token, read_loaded

# Entity-key fields an editor types, with the normaliser ingest and the legacy import use, and
# what the field's help says happens to the value.
NORMALISED_FIELDS = {
    "season_code": (normalize_season_code, "Saved in its normal form: “fw 24” is saved as FW24."),
    "collection_type": (
        normalize_collection_type,
        "Saved in its normal form: “Ready to Wear” is saved as ready-to-wear.",
    ),
    "city": (
        normalize_city,
        "Extra spaces are removed when saved; capitals are kept: “Paris” and “paris” are two "
        "cities to the archive.",
    ),
}


class LoadedField(forms.CharField):
    """The signed token of the version a page was loaded at. Never counts as a change."""

    widget = forms.HiddenInput

    def has_changed(self, initial, data) -> bool:
        return False


class RecordForm(forms.ModelForm):
    """The record page's form: the editable fields plus the version it was loaded at.

    The check here is the early, friendly one (the editor keeps the form with their edits
    and reads what changed); the decisive one runs again under the row lock in the service.
    """

    loaded = LoadedField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loaded_state: Loaded | None = None
        if self.instance.pk and not self.is_bound:
            self.initial["loaded"] = loaded_token(self.instance)
        for name, (_, help_text) in NORMALISED_FIELDS.items():
            if name in self.fields:
                self.fields[name].help_text = help_text
        if "year" in self.fields:
            self.fields["year"].help_text = f"From {YEAR_MIN} to {YEAR_MAX}."
        if "month" in self.fields:
            self.fields["month"].help_text = (
                "1 (January) to 12 (December). 0 means unknown: albums from the old archive "
                "keep it until someone knows the month."
            )

    # Entity-key parts are saved in the form ingest looks them up in (catalog.keys): an editor's
    # "fw24" saved as typed would be a second key for the show the next crawl sends as FW24.
    def clean_season_code(self) -> str:
        return self._normalised("season_code")

    def clean_collection_type(self) -> str:
        return self._normalised("collection_type")

    def clean_city(self) -> str:
        return self._normalised("city")

    # Dates: the range ingest accepts. A value the album already holds is kept as it is, so
    # an album from the old archive with year or month 0 (unknown) still saves when an editor
    # fixes something else; entering 0 is for those albums only.
    def clean_year(self) -> int | None:
        year = self.cleaned_data["year"]
        if year is not None and year != self.instance.year and not YEAR_MIN <= year <= YEAR_MAX:
            raise ValidationError(
                f"Enter a year from {YEAR_MIN} to {YEAR_MAX}, e.g. 2024.", code="year_range"
            )
        return year

    def clean_month(self) -> int | None:
        month = self.cleaned_data["month"]
        if month is None or month == self.instance.month or 1 <= month <= 12:
            return month
        if month == 0:
            raise ValidationError(
                "0 (month unknown) is only for albums from the old archive: enter the month "
                "as a number from 1 (January) to 12 (December).",
                code="month_unknown",
            )
        raise ValidationError(
            "Enter the month as a number from 1 (January) to 12 (December).", code="month_range"
        )

    def _normalised(self, name: str) -> str:
        normalise, _ = NORMALISED_FIELDS[name]
        try:
            value = normalise(self.cleaned_data[name])
        except KeyValueError as error:
            raise ValidationError(str(error), code="invalid") from None
        # The field checked the length of what was typed; the column holds the normal form,
        # which can be longer (a ligature "ﬁ" becomes "fi").
        max_length = cast(forms.CharField, self.fields[name]).max_length
        if max_length is not None and len(value) > max_length:
            raise ValidationError(
                f"“{value}” is {len(value)} characters once normalised; at most {max_length}.",
                code="max_length",
            )
        return value

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        try:
            self.loaded_state = read_loaded(cleaned.get("loaded"))
        except OutOfDate as refusal:
            raise ValidationError(str(refusal), code="bad_token") from None
        # self.instance still holds the row as read at the start of this request:
        # ModelForm copies the edits onto it only after clean().
        if self.instance.version != self.loaded_state.version:
            raise ValidationError(conflict_message(self.instance, self.loaded_state), code="stale")
        self.check_entity_key(cleaned)
        return cleaned

    def check_entity_key(self, cleaned) -> None:
        """Refuse, on the form, an edit that would give the album another live album's
        entity key. (Django's own constraint validation skips these keys: they are partial,
        on deleted_at, which is not on the form.) The database constraint still decides a
        race; the service turns that into a message."""
        model = type(self.instance)
        key = {
            name: cleaned.get(name, getattr(self.instance, name))
            for name in model.entity_key_fields
        }
        if None in key.values():
            return  # a field error already
        holder = record_by_entity_key(model=model, values=key)
        if holder is not None and holder.pk != self.instance.pk:
            raise ValidationError(model.entity_key_taken, code="entity_key")


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label="Reason",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60, "autofocus": True}),
        help_text="Required. It is kept in the album's review history.",
    )


class TakedownForm(ReasonForm):
    delete = forms.BooleanField(
        label="Also delete the album",
        required=False,
        # The help below the box (transition_reason.html) is what a screen reader reads with it.
        widget=forms.CheckboxInput(attrs={"aria-describedby": "id_delete_help"}),
        help_text=(
            "A deleted album stays in the archive for reference, but a crawler can never bring "
            "its article back. Leave it unticked to keep it among the rejected albums."
        ),
    )


class BrandAliasForm(forms.ModelForm):
    """One alias row of a brand's page. The alias is compared and saved with its whitespace
    folded, as brand resolution reads it (catalog.keys.fold_whitespace)."""

    class Meta:
        model = BrandAlias
        fields = ["alias"]

    def clean_alias(self) -> str:
        return fold_whitespace(self.cleaned_data["alias"])

    def validate_constraints(self) -> None:
        # The alias's one constraint (brand_alias_unique_ci) is checked by BrandAliasFormSet,
        # which sees what Django's check of one row cannot: the other rows of the same save
        # (two rows typed alike, a row that frees an alias another row takes). The database
        # still decides a race; the brand admin turns that into a message.
        pass


class BrandAliasAddForm(forms.ModelForm):
    """An alias on its own page (review.admin.brands.BrandAliasAdmin): the brand and the name,
    with its whitespace folded; Django checks the unique constraint against every brand."""

    class Meta:
        model = BrandAlias
        fields = ["brand", "alias"]
        help_texts = {"alias": "The name crawlers send; capitals and spaces do not count."}

    def clean_alias(self) -> str:
        return fold_whitespace(self.cleaned_data["alias"])


class BrandAliasFormSet(forms.BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        kept: dict[str, forms.ModelForm] = {}  # lower-cased alias -> its first row
        for form in self.forms:
            alias = getattr(form, "cleaned_data", {}).get("alias")
            # A private method of BaseFormSet (what its own clean() uses) the stubs leave out.
            if not alias or self._should_delete_form(form):  # type: ignore[attr-defined]
                continue
            first = kept.setdefault(alias.lower(), form)
            if first is not form:
                form.add_error(
                    "alias",
                    f"“{alias}” is the same alias as “{first.cleaned_data['alias']}” in another "
                    "row (capitals and spaces do not count): keep one of the two rows.",
                )
        # Every alias of this brand is a row here, so only other brands' aliases can clash.
        # One query for all rows.
        others = BrandAlias.objects.annotate(alias_lower=Lower("alias")).filter(
            alias_lower__in=list(kept)
        )
        if self.instance.pk is not None:
            others = others.exclude(brand=self.instance)
        for held in others.select_related("brand"):
            form = kept[held.alias_lower]
            alias = form.cleaned_data["alias"]
            form.add_error(
                "alias",
                f"“{alias}” is already an alias of {held.brand} (as “{held.alias}”). An alias "
                f"names one brand only: remove it from {held.brand} first, or clear this row.",
            )
