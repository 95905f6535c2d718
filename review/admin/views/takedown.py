"""Take down: an album, or one of its images, from its page. Each asks for the reason on a
page of its own (the album's also offers to delete it), then calls its review service
(record_take_down, image_take_down) and turns a refusal into a message; the rules are the
services'."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from review.admin.display import thumbnail_url
from review.admin.queue import back_to_page, change_url, changelist_url, page_album, with_queue
from review.admin.views.transitions import decide_on_page
from review.conflicts import loaded_token
from review.forms import ReasonForm, TakedownForm
from review.naming import image_name
from review.services import image_take_down, record_take_down

EXPLANATION = (
    "The album leaves the public site at once: its images stop answering, the caches in front "
    "of the site forget it, and it stays in the archive, rejected, with this reason. Images "
    "another published album shows stay public there."
)
IMAGE_EXPLANATION = (
    "The image leaves the album and the public site at once (unless another published album "
    "shows the same picture). If it is the album's last image, the album is taken down too."
)


def take_down(modeladmin, request, object_id):
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_takedown_permission)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    token = request.POST.get("loaded") or loaded_token(obj)
    form = TakedownForm(request.POST if "confirm" in request.POST else None)
    if form.is_bound and form.is_valid():
        reason, delete = form.cleaned_data["reason"], form.cleaned_data["delete"]
        done = decide_on_page(
            modeladmin,
            request,
            token,
            lambda version: record_take_down(
                record=obj,
                actor=request.user,
                reason=reason,
                delete=delete,
                expected_version=version,
            ),
        )
        if done:
            deleted = " and deleted it" if delete else ""
            modeladmin.message_user(
                request, f"Took “{obj}” down{deleted}: {reason}", messages.SUCCESS
            )
            if delete:  # its page is gone with it
                return HttpResponseRedirect(changelist_url(modeladmin, request))
        return back_to_page(modeladmin, request, obj.pk)
    return _reason_page(
        modeladmin,
        request,
        title=f"Take down “{obj}”",
        record=obj,
        thumb=thumbnail_url(obj.cover),
        form=form,
        hidden=[("loaded", token)],
        cancel_url=with_queue(modeladmin, request, change_url(modeladmin, obj.pk)),
        explanation=EXPLANATION,
    )


def take_down_image(modeladmin, request, object_id, image_id: int):
    obj = page_album(modeladmin, request, object_id, may=modeladmin.has_takedown_permission)
    if obj is None:
        return HttpResponseRedirect(reverse("admin:index"))
    image = obj.images.live().filter(pk=image_id).first()
    if image is None:
        modeladmin.message_user(
            request, f"Image {image_id} is not a live image of “{obj}”.", messages.ERROR
        )
        return back_to_page(modeladmin, request, obj.pk)
    token = request.POST.get("loaded") or loaded_token(obj)
    form = ReasonForm(request.POST if "confirm" in request.POST else None)
    if form.is_bound and form.is_valid():
        reason = form.cleaned_data["reason"]
        notes: list[str] = []

        def decide(version: int) -> None:
            notes.append(
                image_take_down(
                    image=image, actor=request.user, reason=reason, expected_version=version
                ).note
            )

        if decide_on_page(modeladmin, request, token, decide):
            modeladmin.message_user(request, notes[0], messages.SUCCESS)
        return back_to_page(modeladmin, request, obj.pk, "#images")
    return _reason_page(
        modeladmin,
        request,
        title=f"Take down {image_name(image)} of “{obj}”",
        record=obj,
        thumb=thumbnail_url(image),
        form=form,
        hidden=[("loaded", token)],
        cancel_url=with_queue(modeladmin, request, change_url(modeladmin, obj.pk)) + "#images",
        explanation=IMAGE_EXPLANATION,
    )


def _reason_page(
    modeladmin, request, *, title, record, thumb, form, hidden, cancel_url, explanation
):
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.opts,
        "title": title,
        "action": "takedown",
        "verb": "take down",
        "records": [{"record": record, "thumb": thumb}],
        "form": form,
        "hidden": hidden,
        "cancel_url": cancel_url,
        "submit_label": "Take down",
        "explanation": explanation,
    }
    return TemplateResponse(request, "admin/review/transition_reason.html", context)
