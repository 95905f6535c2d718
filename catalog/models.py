"""The archive: brands, runway and street-style records, and their images.

One table per kind for records and one for their images; review state is a column, so there
are no draft tables. The public side never reads these tables: it reads the `public_*` views
that `publicapi` creates over them.
"""

from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from django.core.files.storage import default_storage
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower, Now
from django.utils import timezone

from catalog.keys import fold_title, fold_whitespace

if TYPE_CHECKING:
    pass

# The rendition width the admin shows as a thumbnail (catalog.imaging.WIDTHS has them all).
THUMBNAIL_WIDTH = 400

# The years an album can be from, for every writer that checks one (the ingest serializer,
# the editors' record form). Legacy rows may hold 0 (unknown); the database does not check.
YEAR_MIN, YEAR_MAX = 1850, 2100


class Brand(models.Model):
    name = models.CharField(max_length=128)
    slug = models.SlugField(max_length=128, unique=True)
    is_featured = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "brands"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class BrandAlias(models.Model):
    """A name crawlers send for a brand ("Acne", "ACNE STUDIOS"); matched case-insensitively.

    Stored with its whitespace folded: brand resolution (catalog.selectors.brand_resolve)
    folds the name a crawler sends the same way, so an alias typed with a double space would
    otherwise never match, and "Acne  Studios" would slip past the unique constraint as a
    second spelling of "Acne Studios".
    """

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=128)

    class Meta:
        db_table = "brand_aliases"
        verbose_name_plural = "brand aliases"
        constraints = [
            # One alias names one brand, whatever its case.
            models.UniqueConstraint(
                Lower("alias"),
                name="brand_alias_unique_ci",
                violation_error_message="Another brand already has this alias.",
            ),
        ]

    def __str__(self) -> str:
        return self.alias

    def save(self, *args, **kwargs):
        self.alias = fold_whitespace(self.alias)
        super().save(*args, **kwargs)


def in_window(now: datetime | None = None, prefix: str = "") -> Q:
    """Past its go-live (none: at once) and before its expiry (none: never), at ``now``."""
    now = now or timezone.now()
    return (Q(**{f"{prefix}go_live_at__isnull": True}) | Q(**{f"{prefix}go_live_at__lte": now})) & (
        Q(**{f"{prefix}expires_at__isnull": True}) | Q(**{f"{prefix}expires_at__gt": now})
    )


def public_q(now: datetime | None = None, prefix: str = "") -> Q:
    """A record the public may see at ``now``: published, live and inside its embargo."""
    status = {f"{prefix}status": "published", f"{prefix}deleted_at__isnull": True}
    return Q(**status) & in_window(now, prefix)


class RecordQuerySet(models.QuerySet):
    def live(self):
        return self.filter(deleted_at__isnull=True)

    def public(self, now: datetime | None = None):
        """Published, live, and inside its go-live and expiry: what the public may see."""
        return self.filter(public_q(now))

    def scheduled(self, now: datetime | None = None):
        """Published, live, and waiting for its go-live."""
        now = now or timezone.now()
        return self.filter(
            status=Record.Status.PUBLISHED, deleted_at__isnull=True, go_live_at__gt=now
        )

    def deleted(self):
        return self.filter(deleted_at__isnull=False)

    def pending(self):
        return self.filter(status=Record.Status.PENDING)

    def published(self):
        return self.filter(status=Record.Status.PUBLISHED)

    def rejected(self):
        return self.filter(status=Record.Status.REJECTED)


class Record(models.Model):
    """What runways and street snaps share: content, review state, source, soft delete."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending review"
        PUBLISHED = "published", "Published"
        REJECTED = "rejected", "Rejected"

    title = models.CharField(max_length=255, blank=True, default="")
    description = models.TextField(blank=True, default="")
    image_count = models.PositiveIntegerField(default=0)

    # Review. Pending is the default in Python *and* in the database: a row written by any
    # path that forgets the status stays invisible (fail closed).
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_default=Status.PENDING
    )
    reviewer = models.CharField(max_length=150, blank=True, default="")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reject_reason = models.TextField(blank=True, default="")
    published_at = models.DateTimeField(null=True, blank=True, help_text="First publication.")
    # The ingest job that last wrote this record. A plain id, not a foreign key: ingest builds
    # on catalog, and catalog must not depend on it (the job links back to its record).
    ingest_job_id = models.BigIntegerField(null=True, blank=True)
    content_checksum = models.CharField(max_length=64, blank=True, default="")
    # Bumped by every write service; forms carry it so a stale edit is refused, not applied.
    version = models.PositiveIntegerField(default=1)

    # Source: the crawled article. '' for legacy rows, which never had one.
    source = models.CharField(max_length=32, blank=True, default="", db_default="")
    source_url = models.CharField(max_length=1024, blank=True, default="", db_default="")

    # An embargo: the record is public only from its go-live (a house releases a show's looks
    # at a set minute) until its expiry (a licence ends), in UTC; none: at once, and for good.
    # A published record before its go-live is "scheduled". Each time runs the visibility job
    # at that moment (catalog.visibility), which moves the bytes and purges the edge.
    go_live_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    # Every live image's bytes are in the public store (catalog.visibility): the public views
    # show a published record only once this is set, so no URL they show fails to answer.
    # False by default in Python and in the database: a record written by any path that does
    # not move its bytes stays invisible until they are moved (fail closed).
    bytes_public = models.BooleanField(default=False, db_default=False)

    deleted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RecordQuerySet.as_manager()

    # The kind, in the ingest payload's word ("runway", "street"): each kind says it once
    # here, with its image model; every other module asks the model (RECORD_MODELS, below).
    kind: ClassVar[str]

    if TYPE_CHECKING:
        # Each kind declares these with its own image model (Runway, StreetSnap); named here
        # so that code written for any record type-checks.
        images: "ImageQuerySet"  # a related manager, with ImageQuerySet's methods
        cover: "RecordImage | None"
        cover_id: int | None

    class Meta:
        abstract = True

    @classmethod
    def image_model(cls) -> "type[RunwayImage] | type[StreetSnapImage]":
        raise NotImplementedError

    def is_public(self, now: datetime | None = None) -> bool:
        """Whether the visibility rule counts this record's images: published, live and inside
        its go-live and expiry."""
        now = now or timezone.now()
        return (
            self.status == Record.Status.PUBLISHED
            and self.deleted_at is None
            and (self.go_live_at is None or self.go_live_at <= now)
            and (self.expires_at is None or self.expires_at > now)
        )

    def is_scheduled(self, now: datetime | None = None) -> bool:
        """Published and waiting for its go-live."""
        now = now or timezone.now()
        return (
            self.status == Record.Status.PUBLISHED
            and self.deleted_at is None
            and self.go_live_at is not None
            and self.go_live_at > now
        )


def record_constraints(prefix: str, entity_key: list[str]) -> list[models.BaseConstraint]:
    return [
        # The entity key names one album among live rows; deleting a row frees its key so a
        # fresh crawl of the same show can come back.
        models.UniqueConstraint(
            *entity_key,
            condition=Q(deleted_at__isnull=True),
            name=f"{prefix}_entity_key_live",
            violation_error_message="A live record with this entity key already exists.",
        ),
        # Partial: legacy rows all have source_url ''. Deleted rows still count, so deleting
        # an album never re-opens its crawled article to a second ingest.
        models.UniqueConstraint(
            "source",
            "source_url",
            condition=~Q(source_url=""),
            name=f"{prefix}_source_key",
            violation_error_message="A record from this source article already exists.",
        ),
        models.CheckConstraint(
            condition=Q(status__in=Record.Status.values),
            name=f"{prefix}_status_valid",
            violation_error_message="The status is one of pending, published or rejected.",
        ),
        models.CheckConstraint(
            condition=Q(go_live_at__isnull=True)
            | Q(expires_at__isnull=True)
            | Q(expires_at__gt=F("go_live_at")),
            name=f"{prefix}_expiry_after_go_live",
            violation_error_message="The expiry is after the go-live time.",
        ),
    ]


def embargo_indexes(prefix: str) -> list[models.Index]:
    # The few records with a go-live or an expiry: the queue's Scheduled tab, the sweep's
    # look for a time that passed.
    return [
        models.Index(
            fields=[name], condition=Q(**{f"{name}__isnull": False}), name=f"{prefix}_{name}"
        )
        for name in ("go_live_at", "expires_at")
    ]


class Runway(Record):
    kind = "runway"

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="runways")
    season_code = models.CharField(max_length=16, help_text="Normalized, e.g. FW24.")
    season = models.CharField(max_length=64, blank=True, default="")
    year = models.PositiveSmallIntegerField(default=0)
    collection_type = models.CharField(max_length=32)
    cover = models.ForeignKey(
        "RunwayImage", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "brand_runways"
        constraints = record_constraints("runway", ["brand", "season_code", "collection_type"])
        indexes = [
            models.Index(fields=["status", "-published_at"], name="runway_status_published"),
            models.Index(fields=["status", "-created_at"], name="runway_status_created"),
            *embargo_indexes("runway"),
        ]
        permissions = [
            ("publish_runway", "Can approve and unpublish runways"),
            ("reject_runway", "Can reject runways"),
            ("takedown_runway", "Can take runways down"),
        ]

    def __str__(self) -> str:
        return self.title or f"{self.brand_id} {self.season_code} {self.collection_type}"

    @classmethod
    def image_model(cls) -> "type[RunwayImage]":
        return RunwayImage


class StreetSnap(Record):
    kind = "street"

    city = models.CharField(max_length=64)
    year = models.PositiveSmallIntegerField(default=0, help_text="0 = unknown (legacy only).")
    month = models.PositiveSmallIntegerField(default=0, help_text="1-12; 0 = unknown.")
    # fold_title(title), kept in step by save(); part of the entity key.
    title_key = models.CharField(max_length=255, blank=True, default="", editable=False)
    cover = models.ForeignKey(
        "StreetSnapImage", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "street_snaps"
        constraints = [
            *record_constraints("street", ["city", "year", "month", "title_key"]),
            models.CheckConstraint(
                condition=Q(month__lte=12),
                name="street_month_range",
                violation_error_message=(
                    "The month is a number from 1 to 12 (0: unknown, for albums from the old "
                    "archive only)."
                ),
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-published_at"], name="street_status_published"),
            models.Index(fields=["status", "-created_at"], name="street_status_created"),
            *embargo_indexes("street"),
        ]
        permissions = [
            ("publish_streetsnap", "Can approve and unpublish street snaps"),
            ("reject_streetsnap", "Can reject street snaps"),
            ("takedown_streetsnap", "Can take street snaps down"),
        ]

    def __str__(self) -> str:
        return self.title or f"{self.city} {self.year}-{self.month:02d}"

    def save(self, *args, **kwargs):
        self.title_key = fold_title(self.title)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "title" in update_fields:
            kwargs["update_fields"] = {*update_fields, "title_key"}
        super().save(*args, **kwargs)

    @classmethod
    def image_model(cls) -> "type[StreetSnapImage]":
        return StreetSnapImage


# The legacy archive's hashes come from an algorithm nobody can name any more, so they are not
# comparable bit for bit with ours; the legacy import stores them under this name ('' = no
# hash). The band indexes leave such rows out, and the near-duplicate lookup repeats this very
# condition, so both PostgreSQL and SQLite see that the partial indexes answer it.
LEGACY_PHASH_ALGORITHM = "legacy"
COMPARABLE_PHASH = ~Q(phash_algorithm__in=[LEGACY_PHASH_ALGORITHM, ""])


class ImageQuerySet(models.QuerySet):
    def live(self):
        return self.filter(deleted_at__isnull=True)

    def comparable_hashes(self):
        """Images whose perceptual hash ingest may compare its own with (see COMPARABLE_PHASH)."""
        return self.filter(COMPARABLE_PHASH)


def _phash_band(shift: int) -> models.GeneratedField:
    # The 64-bit hash is stored signed (bigint); an arithmetic shift then a 16-bit mask gives
    # the same slice as on the unsigned value. Indexed bands make the near-duplicate lookup a
    # handful of index probes instead of a scan (see ingest.hashing.band_probes).
    return models.GeneratedField(
        expression=F("phash").bitrightshift(shift).bitand(0xFFFF),
        output_field=models.IntegerField(null=True),
        db_persist=True,
    )


class RecordImage(models.Model):
    class RenditionStatus(models.TextChoices):
        PENDING = "pending", "Not made yet"
        DONE = "done", "Made"
        FAILED = "failed", "Failed"

    storage_key = models.CharField(max_length=512)
    sha1 = models.CharField(max_length=40, blank=True, default="")
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    byte_size = models.PositiveBigIntegerField(default=0)
    mime_type = models.CharField(max_length=64, blank=True, default="")
    original_url = models.CharField(max_length=2048, blank=True, default="")
    sort_order = models.IntegerField(default=0)
    phash = models.BigIntegerField(null=True, blank=True, help_text="64-bit, stored signed.")
    phash_algorithm = models.CharField(max_length=32, blank=True, default="")
    phash_band0 = _phash_band(48)
    phash_band1 = _phash_band(32)
    phash_band2 = _phash_band(16)
    phash_band3 = _phash_band(0)
    is_duplicate = models.BooleanField(default=False)
    dup_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Web sizes of the original (catalog.imaging): [{"width", "height", "key"}, ...] in
    # ascending width, only those that exist in storage. Written only after every object in it
    # was stored, so a row never points at a rendition that is not there.
    renditions = models.JSONField(default=list, blank=True, db_default=[])
    rendition_status = models.CharField(
        max_length=16,
        choices=RenditionStatus.choices,
        default=RenditionStatus.PENDING,
        db_default=RenditionStatus.PENDING,
    )
    rendition_error = models.CharField(max_length=300, blank=True, default="", db_default="")
    placeholder = models.CharField(
        max_length=64, blank=True, default="", db_default="", help_text="ThumbHash, base64."
    )
    color = models.CharField(
        max_length=7, blank=True, default="", db_default="", help_text="Average, #rrggbb."
    )
    deleted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ImageQuerySet.as_manager()

    # The foreign key to the image's record ("runway", "street_snap"), and that record's model.
    record_field: ClassVar[str]

    class Meta:
        abstract = True

    @classmethod
    def record_model(cls) -> "type[Runway] | type[StreetSnap]":
        field = cls._meta.get_field(cls.record_field)
        return field.related_model  # type: ignore[return-value]  # Runway or StreetSnap

    @property
    def record_id(self) -> int:
        return getattr(self, f"{self.record_field}_id")

    def rendition(self, width: int) -> dict | None:
        """The stored rendition of exactly this width ({"width", "height", "key"}), or None."""
        return next((r for r in self.renditions if r.get("width") == width), None)

    def rendition_url(self, width: int = THUMBNAIL_WIDTH) -> str | None:
        """The storage URL of the rendition of this width, or None when there is none (the
        image is narrower, or its renditions are not made yet or failed)."""
        found = self.rendition(width)
        return default_storage.url(found["key"]) if found is not None else None


def image_indexes(prefix: str, record: str) -> list[models.Index]:
    # Live images with a comparable hash: at millions of legacy images, leaving theirs out
    # keeps the indexes small and the lookup from visiting heap pages only to discard them.
    live = Q(deleted_at__isnull=True) & COMPARABLE_PHASH
    return [
        models.Index(fields=[record, "sort_order"], name=f"{prefix}_record_order"),
        models.Index(fields=["sha1"], name=f"{prefix}_sha1"),
        models.Index(fields=["storage_key"], name=f"{prefix}_storage_key"),
        # The images still waiting for renditions: the backfill walks them by id.
        models.Index(
            fields=["id"],
            condition=Q(rendition_status=RecordImage.RenditionStatus.PENDING),
            name=f"{prefix}_renditions_todo",
        ),
        # What the near-duplicate lookup reads of a candidate is in the index itself: it reads
        # the index alone (catalog.selectors), not a heap page per candidate.
        *(
            models.Index(
                fields=[f"phash_band{n}"],
                condition=live,
                include=["id", "phash"],
                name=f"{prefix}_band{n}_live",
            )
            for n in range(4)
        ),
    ]


class RunwayImage(RecordImage):
    record_field = "runway"

    runway = models.ForeignKey(Runway, on_delete=models.CASCADE, related_name="images")
    # Detail shots share their look's index.
    look_index = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "brand_runway_images"
        indexes = image_indexes("runway_image", "runway")

    def __str__(self) -> str:
        return f"runway {self.runway_id} image {self.pk}"


class StreetSnapImage(RecordImage):
    record_field = "street_snap"

    street_snap = models.ForeignKey(StreetSnap, on_delete=models.CASCADE, related_name="images")
    is_detail = models.BooleanField(default=False)
    # A main image of the same album; never a detail itself. The database holds the
    # "detail <=> has a parent" half; catalog.services holds the rest under a row lock.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="details"
    )

    class Meta:
        db_table = "street_snap_images"
        indexes = image_indexes("street_image", "street_snap")
        constraints = [
            models.CheckConstraint(
                condition=Q(is_detail=True, parent__isnull=False)
                | Q(is_detail=False, parent__isnull=True),
                name="street_image_detail_has_parent",
                violation_error_message="A detail image needs a parent; a main image has none.",
            ),
        ]

    def __str__(self) -> str:
        return f"street snap {self.street_snap_id} image {self.pk}"


# The kinds by the ingest payload's words (`manage.py renditions --record KIND:ID`, the jobs'
# arguments, the outbox's rows): the one map from a kind to its models.
RECORD_MODELS: dict[str, type[Runway] | type[StreetSnap]] = {
    model.kind: model for model in (Runway, StreetSnap)
}
IMAGE_MODELS: dict[str, type[RunwayImage] | type[StreetSnapImage]] = {
    kind: model.image_model() for kind, model in RECORD_MODELS.items()
}
IMAGE_PARENT_FIELD = {kind: f"{model.record_field}_id" for kind, model in IMAGE_MODELS.items()}


class NotDuplicate(models.Model):
    """Two images an editor said are not near-duplicates of each other, by content (sha1): a
    re-crawl of either album stores the same bytes under new rows, and ingest must not flag
    the pair again (catalog.selectors.image_near_duplicate_candidates leaves it out).

    Stored once per pair, the smaller sha1 first (not_duplicate_ordered), so one unique
    constraint covers both orders."""

    sha1_low = models.CharField(max_length=40)
    sha1_high = models.CharField(max_length=40)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "not_duplicates"
        constraints = [
            models.UniqueConstraint(fields=["sha1_low", "sha1_high"], name="not_duplicate_once"),
            models.CheckConstraint(
                condition=Q(sha1_low__lt=F("sha1_high")), name="not_duplicate_ordered"
            ),
        ]
        indexes = [models.Index(fields=["sha1_high"], name="not_duplicate_high")]

    def __str__(self) -> str:
        return f"{self.sha1_low} is not {self.sha1_high}"


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


class LegacyIdMap(models.Model):
    """Legacy archive ids already imported by `migrate_legacy_drafts`, so a rerun is a no-op."""

    legacy_table = models.CharField(max_length=64)
    legacy_id = models.BigIntegerField()
    new_id = models.BigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16)
    legacy_job_id = models.BigIntegerField(null=True, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "legacy_id_map"
        constraints = [
            models.UniqueConstraint(fields=["legacy_table", "legacy_id"], name="legacy_id_once"),
        ]

    def __str__(self) -> str:
        return f"{self.legacy_table}#{self.legacy_id} -> {self.new_id} ({self.outcome})"
