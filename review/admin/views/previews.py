"""Press previews on the album page: its links (who each is for, who made it, its expiry, its
views and last use), a form to make one, and a Revoke button per link. Making and revoking
are review.services' (preview_link_make, preview_link_revoke), which refuse what is not
allowed; a refusal becomes a message.

A new link's URL is shown once, on the album page the editor comes back to (kept in their
session until then): only the token's hash is stored, so it cannot be shown again."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404
from django.urls import reverse
from django.utils import timezone

from catalog.models import Record
from review.admin.display import admin_url
from review.admin.queue import back_to_page, page_album, with_queue
from review.models import PreviewLink
from review.services import (
    PREVIEW_HOURS_DEFAULT,
    PREVIEW_HOURS_MAX,
    PreviewRefused,
    preview_link_make,
    preview_link_revoke,
)

ANCHOR = "#preview-links"
# The session key of the link just made: {"link": id, "url": its URL}, shown once.
MADE = "review_preview_made"


class PreviewLinkForm(forms.Form):
    label = forms.CharField(
        max_length=200, label="For", help_text="Who the link is for, e.g. a journalist's name."
    )
    hours = forms.IntegerField(
        min_value=1,
        max_value=PREVIEW_HOURS_MAX,
        initial=PREVIEW_HOURS_DEFAULT,
        label="Expires in (hours)",
        help_text=f"{PREVIEW_HOURS_DEFAULT} by default, {PREVIEW_HOURS_MAX} (7 days) at most.",
    )


def previews_context(modeladmin, request, obj: Record) -> dict[str, Any]:
    """What the album page's Press previews section shows (includes/preview_links.html)."""
    field = PreviewLink.record_field(modeladmin.model)
    links = list(
        PreviewLink.objects.filter(**{field: obj.pk}).select_related("made_by", "revoked_by")
    )
    now = timezone.now()
    made = request.session.pop(MADE, None)
    return {
        "links": [
            {
                "link": link,
                "state": _state(link, now),
                "revoke_url": with_queue(
                    modeladmin, request, admin_url(obj, "previewrevoke", obj.pk, link.pk)
                ),
            }
            for link in links
        ],
        "made": made if made and any(link.pk == made.get("link") for link in links) else None,
        "can_make": modeladmin.has_publish_permission(request, obj),
        "make_url": with_queue(modeladmin, request, admin_url(obj, "previewmake", obj.pk)),
        "form": PreviewLinkForm(auto_id="preview-%s"),
        # Previews are for an album on its way to the public: pending, or scheduled.
        "may_have": obj.status == Record.Status.PENDING or obj.is_scheduled(now),
        "is_public": obj.is_public(now),
    }


def _state(link: PreviewLink, now) -> str:
    if link.revoked_at is not None:
        return "revoked"
    return "expired" if link.expires_at <= now else "valid"


def preview_make(modeladmin, request, object_id):
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_publish_permission)
    if obj is None:
        raise Http404("No such album.")
    if request.method != "POST":
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    form = PreviewLinkForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(
            f"{form.fields[name].label}: {' '.join(map(str, found))}"
            for name, found in form.errors.items()
        )
        modeladmin.message_user(request, f"No link was made. {errors}", messages.ERROR)
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    try:
        link, token = preview_link_make(
            record=obj,
            actor=request.user,
            label=form.cleaned_data["label"],
            hours=form.cleaned_data["hours"],
        )
    except PreviewRefused as refusal:
        modeladmin.message_user(request, str(refusal), messages.ERROR)
    else:
        url = request.build_absolute_uri(reverse("preview", args=[token]))
        request.session[MADE] = {"link": link.pk, "url": url}
        modeladmin.message_user(
            request,
            f"Made a preview link for {link.label}. Copy it now, under Press previews: "
            "it is shown this once.",
            messages.SUCCESS,
        )
    return back_to_page(modeladmin, request, obj.pk, ANCHOR)


def preview_revoke(modeladmin, request, object_id, link_id: int):
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_publish_permission)
    if obj is None:
        raise Http404("No such album.")
    if request.method != "POST":
        return back_to_page(modeladmin, request, obj.pk, ANCHOR)
    # The link must be this album's: another album's id is no link of this page.
    field = PreviewLink.record_field(modeladmin.model)
    link = PreviewLink.objects.filter(**{field: obj.pk}, pk=link_id).first()
    if link is None:
        raise Http404("No such preview link on this album.")
    try:
        revoked = preview_link_revoke(link=link, actor=request.user)
    except PreviewRefused as refusal:
        modeladmin.message_user(request, str(refusal), messages.ERROR)
    else:
        if revoked:
            modeladmin.message_user(
                request,
                f"Revoked the preview link for {link.label}: it shows nothing any more.",
                messages.SUCCESS,
            )
        else:
            modeladmin.message_user(
                request, f"The preview link for {link.label} was revoked already.", messages.INFO
            )
    return back_to_page(modeladmin, request, obj.pk, ANCHOR)
