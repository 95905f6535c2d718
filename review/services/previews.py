"""Press previews: a link to a read-only page of an album that is not public yet, for
journalists (review/admin/views/previews.py makes and revokes them; review/previews.py serves
the page and its pictures).

A link expires (48 hours by default, never later than a week) and is revoked at once: the
page and every picture check the link again at each request, so nothing is shown once it is
revoked or expired. Only an editor who may publish the album's kind makes or revokes one: a
preview shows pictures before their time, as publishing does.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from catalog.models import RECORD_MODELS, Record
from catalog.services import RecordWriteRefused, permission_name
from review.models import PreviewLink
from review.services.transitions import kind_label

PREVIEW_HOURS_DEFAULT = 48
PREVIEW_HOURS_MAX = 7 * 24


class PreviewRefused(RecordWriteRefused):
    pass


def preview_token_hash(token: str) -> str:
    """What the database keeps of a token (PreviewLink.token_hash)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _check_may_preview(record: Record, actor: User) -> None:
    model = type(record)
    if not actor.has_perm(permission_name(model, "publish")):
        raise PreviewRefused(
            f"You do not have permission to share previews of {kind_label(model, plural=True)}: "
            "that is the permission to approve and unpublish them."
        )


def preview_link_make(
    *, record: Record, actor: User, label: str, hours: int = PREVIEW_HOURS_DEFAULT
) -> tuple[PreviewLink, str]:
    """A new link to `record`'s preview page for `label` (who it is for), valid `hours`; the
    link and its token, which is shown this once (only its hash is kept)."""
    _check_may_preview(record, actor)
    label = label.strip()
    if not label:
        raise PreviewRefused("Say who the preview is for: the list of links names them by it.")
    longest = PreviewLink._meta.get_field("label").max_length or 0
    if len(label) > longest:
        raise PreviewRefused(f"Say who the preview is for in at most {longest} characters.")
    if not 1 <= hours <= PREVIEW_HOURS_MAX:
        raise PreviewRefused(
            f"A preview link lasts from 1 hour to {PREVIEW_HOURS_MAX} hours (7 days), "
            f"not {hours}: make a new one when it runs out. No link was made."
        )
    now = timezone.now()
    record = type(record).objects.get(pk=record.pk)  # its state now, not the page's
    if record.deleted_at is not None or record.status == Record.Status.REJECTED:
        raise PreviewRefused(
            f"“{record}” is rejected or deleted: it will not be public, so it has no preview."
        )
    if record.expires_at is not None and record.expires_at <= now:
        raise PreviewRefused(f"“{record}” has expired: it is no longer shown to anyone.")
    if record.is_public(now):
        raise PreviewRefused(
            f"“{record}” is public already: share its public page instead of a preview."
        )
    token = secrets.token_urlsafe(32)
    link = PreviewLink.objects.create(
        **{PreviewLink.record_field(type(record)): record},
        token_hash=preview_token_hash(token),
        label=label,
        made_by=actor,
        made_at=now,
        expires_at=now + timedelta(hours=hours),
    )
    return link, token


@transaction.atomic
def preview_link_revoke(*, link: PreviewLink, actor: User) -> bool:
    """Revoke `link` now: its page and pictures answer 404 from the next request. False if it
    was revoked already (the first revocation stays the one recorded)."""
    _check_may_preview(link.record, actor)
    locked = PreviewLink.objects.select_for_update().get(pk=link.pk)
    if locked.revoked_at is not None:
        return False
    locked.revoked_at, locked.revoked_by = timezone.now(), actor
    locked.save(update_fields=["revoked_at", "revoked_by"])
    link.revoked_at, link.revoked_by = locked.revoked_at, actor
    return True


def preview_link_open(*, token: str, now: datetime | None = None) -> PreviewLink | None:
    """The link whose token this is, with its album, if it still opens (not revoked, not
    expired, its album still to be shown), with this view counted; else None, whatever the
    reason (an unknown token says nothing more than a revoked one)."""
    now = now or timezone.now()
    link = preview_link_find(token_hash=preview_token_hash(token), now=now)
    if link is None:
        return None
    # One UPDATE: two journalists opening the page at once both count.
    PreviewLink.objects.filter(pk=link.pk).update(view_count=F("view_count") + 1, last_used_at=now)
    return link


def preview_link_find(
    *, token_hash: str | None = None, pk: int | None = None, now: datetime | None = None
) -> PreviewLink | None:
    """The valid link with this token hash or id, its album loaded with it (one query); None
    when there is none, or it is revoked or expired, or its album may no longer be shown."""
    now = now or timezone.now()
    # By its hash: the database compares hashes, never the token, and a lookup's timing says
    # nothing useful about a 256-bit secret (no compare_digest to be had in an index).
    found = PreviewLink.objects.valid(now).select_related(*album_paths())
    found = found.filter(token_hash=token_hash) if token_hash is not None else found.filter(pk=pk)
    link = found.first()
    return link if link is not None and link.is_valid(now) else None


def album_paths() -> list[str]:
    """What a link's query loads with it: its album, whichever kind, and the albums' related
    fields an editor fills in (a runway's brand), which the preview page shows."""
    paths = []
    for model in RECORD_MODELS.values():
        field = PreviewLink.record_field(model)
        paths.append(field)
        paths += [
            f"{field}__{name}"
            for name in model.editable_fields
            if model._meta.get_field(name).many_to_one
        ]
    return paths
