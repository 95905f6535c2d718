"""The review history, append-only: one row per transition of a record, and one per change
made to a published album (its status stays; the row says who changed the public album,
and what)."""

from datetime import datetime
from typing import cast

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import formats, timezone

from catalog.models import Record, Runway, StreetSnap


class ReviewHistoryIsAppendOnly(Exception):
    pass


class OfOneAlbum(models.Model):
    """A row about one album of either kind: a `runway` and a `street_snap` foreign key, of
    which its model's check constraint keeps exactly one set."""

    class Meta:
        abstract = True

    @classmethod
    def record_field(cls, record_model: type[Record]) -> str:
        """The foreign key naming a record of this model (`runway`, `street_snap`)."""
        return next(
            f.name
            for f in cls._meta.get_fields()
            if f.many_to_one and f.related_model is record_model
        )

    @property
    def record(self) -> Record:
        runway: Runway | None = getattr(self, "runway", None)
        return runway or cast(StreetSnap, getattr(self, "street_snap", None))


class ReviewEventQuerySet(models.QuerySet):
    # The history is evidence of who did what: rows are only ever added. Bulk paths are shut
    # too, not just Model.save()/delete(), so no code path rewrites it by accident. (A
    # database trigger would also stop raw SQL; the only writer is review.services, so the
    # extra moving part in two databases' dialects is not worth it.)
    def update(self, **kwargs):
        raise ReviewHistoryIsAppendOnly("Review history rows are never updated.")

    def delete(self):
        raise ReviewHistoryIsAppendOnly("Review history rows are never deleted.")


class ReviewEvent(OfOneAlbum):
    class Action(models.TextChoices):
        APPROVE = "approve", "Approved"
        REJECT = "reject", "Rejected"
        # A rejection whose reason is the album this one repeats (the same show crawled again):
        # the one rejection an editor can undo from the history (RESTORE), so a bulk reject of
        # repeats, or of a show's re-posts, can be taken back one album at a time.
        REJECT_REPEAT = "reject_repeat", "Rejected as a repeat"
        RESTORE = "restore", "Put back to pending"
        UNPUBLISH = "unpublish", "Unpublished"
        # Not a transition (from and to are both published): a field edit or an image
        # operation on an album the public sees, which no approve reviewed.
        EDIT = "edit", "Edited while published"
        # A takedown request: the album (to rejected, maybe deleted) or one of its images
        # leaves the public site, with who, when and why.
        TAKEDOWN = "takedown", "Taken down"
        # An embargo: an editor set or cleared its go-live and expiry (changes: the times);
        # then the archive itself, at each time, noted that it went live or expired.
        SCHEDULE = "schedule", "Scheduled"
        GO_LIVE = "go_live", "Went live"
        EXPIRE = "expire", "Expired"

    # Exactly one of the two records. PROTECT: a record with history is never hard-deleted
    # (records are soft-deleted), and a cascade would silently erase its history.
    runway = models.ForeignKey(
        Runway, null=True, blank=True, on_delete=models.PROTECT, related_name="review_events"
    )
    street_snap = models.ForeignKey(
        StreetSnap, null=True, blank=True, on_delete=models.PROTECT, related_name="review_events"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    from_status = models.CharField(max_length=16, choices=Record.Status.choices)
    to_status = models.CharField(max_length=16, choices=Record.Status.choices)
    # Why, for a reject or unpublish; for an edit while published, what was done to the
    # images ("Deleted image 12; the cover moved to image 13.").
    reason = models.TextField(blank=True, default="")
    # Field edits applied with an approve or an edit while published: {field: [old, new]},
    # display values.
    changes = models.JSONField(default=dict, blank=True)
    # PROTECT: an editor who reviewed something is deactivated, not deleted, so the history
    # keeps naming a real account. None: the archive itself (an embargo's go-live or expiry).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="review_events",
    )
    at = models.DateTimeField()
    # The record's version right after this transition: the admin's stale-edit message finds
    # the transitions made since a page was loaded by comparing versions, not clocks. It is
    # also the order of a record's history: every write to a record bumps its version under
    # the record's row lock (catalog.services.record_save), so versions follow the order in
    # which the writes committed, where `at` is one web server's clock, and clocks of two
    # servers can disagree by more than the time between two decisions.
    record_version = models.PositiveIntegerField()

    objects = ReviewEventQuerySet.as_manager()

    class Meta:
        db_table = "review_events"
        # The order within one record's history, which is how it is read (versions of two
        # records do not compare: the admin's list of every record's history sorts by time).
        ordering = ["record_version", "pk"]
        verbose_name = "review event"
        verbose_name_plural = "review history"
        constraints = [
            models.CheckConstraint(
                condition=Q(runway__isnull=False, street_snap__isnull=True)
                | Q(runway__isnull=True, street_snap__isnull=False),
                name="review_event_one_record",
            ),
        ]

    def __str__(self) -> str:
        # As the admin writes every time (its DATETIME_FORMAT): this names the row there.
        at = formats.date_format(timezone.localtime(self.at), "DATETIME_FORMAT")
        return f"{self.get_action_display()} by {self.actor_id} at {at}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ReviewHistoryIsAppendOnly("Review history rows are never updated.")
        super().save(*args, **kwargs)

    @property
    def who(self) -> str:
        """The editor's username, or the archive for what it did by itself (an embargo)."""
        return self.actor.get_username() if self.actor is not None else "the archive"

    def delete(self, *args, **kwargs):
        raise ReviewHistoryIsAppendOnly("Review history rows are never deleted.")


class ReviewClaim(models.Model):
    """A soft claim: this editor has the album open. The next-album choice of the queue passes
    over albums another editor holds, and their page says "open by anna". It never blocks a
    write (the stale-page checks decide), and it lapses after REVIEW_CLAIM_SECONDS without
    a sign of life from the editor's page.

    A row in the database, not Django's cache: the cache is per process by default, and the
    web runs as several processes. One row per album: the holder is the last editor to take
    it while it was free (review.services.claim_take)."""

    kind = models.CharField(max_length=16)  # the record's model name: runway, streetsnap
    record_id = models.BigIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_claims"
    )
    touched_at = models.DateTimeField()

    class Meta:
        db_table = "review_claims"
        constraints = [
            models.UniqueConstraint(fields=["kind", "record_id"], name="review_claim_one_holder")
        ]
        indexes = [models.Index(fields=["kind", "touched_at"], name="review_claim_fresh")]

    def __str__(self) -> str:
        return f"{self.kind} {self.record_id} open by {self.user_id}"


class PreviewLinkQuerySet(models.QuerySet):
    def valid(self, now: datetime | None = None):
        """Links that still open: not revoked, not expired (the album is checked apart:
        PreviewLink.shows_album)."""
        return self.filter(revoked_at__isnull=True, expires_at__gt=now or timezone.now())


class PreviewLink(OfOneAlbum):
    """A press preview: a read-only page of an album that is not public yet, for whoever holds
    the link (review.services.previews, review.previews). It expires, and it can be revoked
    at once: every request for the page or one of its images checks it again.

    Only the token's SHA-256 is stored: the editor copies the link once, when it is made, and
    a copy of the database opens no album before its time."""

    # Exactly one of the two records (preview_link_one_record). A link dies with its album.
    runway = models.ForeignKey(
        Runway, null=True, blank=True, on_delete=models.CASCADE, related_name="preview_links"
    )
    street_snap = models.ForeignKey(
        StreetSnap, null=True, blank=True, on_delete=models.CASCADE, related_name="preview_links"
    )
    token_hash = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=200, help_text="Who it is for.")
    # PROTECT, as the history: editors are deactivated, not deleted.
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="preview_links_made"
    )
    made_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="preview_links_revoked",
    )
    view_count = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = PreviewLinkQuerySet.as_manager()

    class Meta:
        db_table = "review_preview_links"
        ordering = ["-made_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(runway__isnull=False, street_snap__isnull=True)
                | Q(runway__isnull=True, street_snap__isnull=False),
                name="preview_link_one_record",
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("made_at")),
                name="preview_link_expires_after_made",
            ),
        ]

    def __str__(self) -> str:
        return f"preview of {self.record} for {self.label}"

    def is_valid(self, now: datetime | None = None) -> bool:
        """Not revoked, not expired, and its album may still be shown (shows_album)."""
        now = now or timezone.now()
        return (
            self.revoked_at is None and self.expires_at > now and self.shows_album(self.record, now)
        )

    @staticmethod
    def shows_album(record: Record, now: datetime) -> bool:
        """Whether a preview may show `record`: not deleted, not rejected (a takedown rejects
        it), and not past its own expiry (its licence ended)."""
        return (
            record.deleted_at is None
            and record.status != Record.Status.REJECTED
            and (record.expires_at is None or record.expires_at > now)
        )
