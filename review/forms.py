from django import forms
from django.core.exceptions import ValidationError

from catalog.keys import fold_title
from catalog.models import Runway, StreetSnap
from catalog.services import ENTITY_KEY_TAKEN
from review.conflicts import BadToken, Loaded, conflict_message, loaded_token, read_token

ENTITY_KEY = {
    Runway: ("brand", "season_code", "collection_type"),
    StreetSnap: ("city", "year", "month"),  # and title_key, derived from the title
}
OUT_OF_DATE = "This page is out of date or incomplete. Reload it and make your changes again."


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

    def clean(self):
        cleaned = super().clean()
        try:
            self.loaded_state = read_token(cleaned.get("loaded"))
        except BadToken:
            raise ValidationError(OUT_OF_DATE, code="bad_token") from None
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
        key = {name: cleaned.get(name, getattr(self.instance, name)) for name in ENTITY_KEY[model]}
        if model is StreetSnap:
            key["title_key"] = fold_title(cleaned.get("title", self.instance.title))
        if None in key.values():
            return  # a field error already
        if model.objects.live().filter(**key).exclude(pk=self.instance.pk).exists():
            raise ValidationError(ENTITY_KEY_TAKEN[model], code="entity_key")


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label="Reason",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60, "autofocus": True}),
        help_text="Required. It is kept in the album's review history.",
    )
