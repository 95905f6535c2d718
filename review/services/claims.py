"""Soft claims: who has an album open (review/admin/views/claims.py)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from catalog.models import Record
from review.models import ReviewClaim, ReviewEvent

Action = ReviewEvent.Action
Status = Record.Status


def claim_take(*, record: Record, user: User) -> bool:
    """Hold `record` for `user` (or refresh their hold); False when another editor holds it
    and their claim has not lapsed. Never a lock: nothing else consults it but the queue.

    Race-safe without a transaction of its own: the conditional UPDATE re-checks its WHERE
    on the row it waited for, so of two editors taking one lapsed claim only one matches;
    of two inserting a first claim, the unique constraint lets one in."""
    now = timezone.now()
    lapsed = now - timedelta(seconds=settings.REVIEW_CLAIM_SECONDS)
    claims = ReviewClaim.objects.filter(kind=record._meta.model_name, record_id=record.pk)
    if claims.filter(Q(user=user) | Q(touched_at__lt=lapsed)).update(user=user, touched_at=now):
        return True
    try:
        with transaction.atomic():
            ReviewClaim.objects.create(  # type: ignore[misc]  # model_name: typed optional, set on a model
                kind=record._meta.model_name, record_id=record.pk, user=user, touched_at=now
            )
    except IntegrityError:
        return False  # another editor's fresh claim (or one taken a moment ago)
    return True


def claim_release(*, record: Record, user: User) -> None:
    """`user` has left `record` (decided or skipped it): free it for the others at once."""
    ReviewClaim.objects.filter(
        kind=record._meta.model_name, record_id=record.pk, user=user
    ).delete()
