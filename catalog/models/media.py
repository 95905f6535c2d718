"""The objects behind the images: what ingest stored (the collector's bound), what the public
store holds (the visibility ledger), the outbox of changes the public may see, and each sweep."""

from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone


class StoredObject(models.Model):
    """An object `catalog.storage.image_store` put in storage: the only objects `gc_media` may
    ever delete.

    The legacy archive's images live in the same bucket under the same prefix and key scheme,
    and skipped legacy rows are never referenced, so "unreferenced" alone must never mean
    "ours". The row is written (and `last_stored_at` renewed) *before* the object is put, and
    the collector deletes an object only while holding this row's lock: see catalog.storage.
    """

    key = models.CharField(max_length=512)
    last_stored_at = models.DateTimeField()
    # The object was already in storage the first time ingest stored this key (the legacy
    # archive's copy of the same bytes, or an object from before this table existed): ingest
    # never overwrote it and the collector never deletes it.
    preexisting = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "stored_objects"
        # A constraint, not unique=True: on PostgreSQL that would add a second index for LIKE
        # (varchar_pattern_ops) that no query uses, as big as the first.
        constraints = [models.UniqueConstraint(fields=["key"], name="stored_object_key_once")]
        indexes = [
            models.Index(
                fields=["last_stored_at"],
                condition=Q(preexisting=False),
                name="stored_object_collectable",
            ),
        ]

    def __str__(self) -> str:
        return self.key


class PublicObject(models.Model):
    """An object of the public store: the ledger catalog.visibility keeps of the copies it made.

    A row exists while the object may be in the public store. `confirmed` says it is there
    for certain; `pending` names a copy or removal started and not confirmed yet (a storage
    error, or a process that died in between): the intent is written before the storage is
    touched, so the ledger never says less than the store may hold.
    """

    class Pending(models.TextChoices):
        NONE = "", "Nothing"
        PUBLISH = "publish", "Copy to the public store"
        WITHDRAW = "withdraw", "Remove from the public store"

    key = models.CharField(max_length=512)
    # The sha1 of a rendition's original ('' for an original): renditions follow the
    # visibility of the bytes they were made from.
    sha1 = models.CharField(max_length=40, blank=True, default="")
    confirmed = models.BooleanField(default=False)
    pending = models.CharField(max_length=16, choices=Pending.choices, blank=True, default="")
    failures = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True, default="")
    changed_at = models.DateTimeField()

    class Meta:
        db_table = "public_objects"
        # As stored_objects': no LIKE index beside the unique one.
        constraints = [models.UniqueConstraint(fields=["key"], name="public_object_key_once")]
        indexes = [
            models.Index(fields=["sha1"], condition=~Q(sha1=""), name="public_object_sha1"),
            models.Index(
                fields=["changed_at"], condition=~Q(pending=""), name="public_object_pending"
            ),
        ]

    def __str__(self) -> str:
        return self.key


class MediaChange(models.Model):
    """A change the public may see, written in the transaction that made it (an outbox): the
    visibility job moves the bytes of `record_id` and purges `tags` from the edge, then deletes
    the row. A job lost with Redis leaves the row, and the sweep runs it."""

    class Kind(models.TextChoices):
        RUNWAY = "runway", "Runway"
        STREET = "street", "Street snap"
        BRAND = "brand", "Brand"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The record (runway or street snap); null for a brand, which has no bytes.
    record_id = models.BigIntegerField(null=True, blank=True)
    # The edge's cache tags to purge (catalog.edge), decided when the change was made.
    tags = models.JSONField(default=list, blank=True)
    bytes_done = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # When the change may be run (again): at once when written, later after each failure
    # (a back-off), so a change that keeps failing never holds the ones behind it.
    due_at = models.DateTimeField(default=timezone.now, db_default=Now())

    class Meta:
        db_table = "media_changes"
        indexes = [models.Index(fields=["due_at", "id"], name="media_change_due")]

    def __str__(self) -> str:
        return f"{self.kind} {self.record_id or ''} ({', '.join(self.tags)})"


class MediaSweep(models.Model):
    """One run of the visibility sweep and the drift it fixed (metrics and the admin read
    these; kept for a week)."""

    full = models.BooleanField(default=False)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # What it found wrong and fixed: {"published": n, "withdrawn": n, "flags_set": n, ...}.
    fixed = models.JSONField(default=dict, blank=True)
    failed = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "media_sweeps"
        indexes = [models.Index(fields=["-started_at"], name="media_sweep_recent")]

    def __str__(self) -> str:
        return f"sweep {self.started_at:%Y-%m-%d %H:%M} {self.fixed}"
