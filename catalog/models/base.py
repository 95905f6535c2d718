"""What every record and every image is, whatever its kind: review state, source, embargo and
soft delete; the stored original, its hashes and renditions. Each kind (catalog.models.runways,
catalog.models.street_snaps) builds on these and says what differs (its kind, its image model,
its entity key)."""

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.files.storage import default_storage
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

if TYPE_CHECKING:
    from django.utils.functional import _StrOrPromise

    from catalog.models.runways import Runway, RunwayImage
    from catalog.models.street_snaps import StreetSnap, StreetSnapImage

# The rendition width the admin shows as a thumbnail (catalog.imaging.WIDTHS has them all).
THUMBNAIL_WIDTH = 400

# The years an album can be from, for every writer that checks one (the ingest serializer,
# the editors' record form). Legacy rows may hold 0 (unknown); the database does not check.
YEAR_MIN, YEAR_MAX = 1850, 2100


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


def scheduled_q(now: datetime | None = None) -> Q:
    """A record waiting for its go-live at ``now``: published, live, its go-live ahead."""
    now = now or timezone.now()
    return Q(status="published", deleted_at__isnull=True, go_live_at__gt=now)


class RecordQuerySet(models.QuerySet):
    def live(self):
        return self.filter(deleted_at__isnull=True)

    def public(self, now: datetime | None = None):
        """Published, live, and inside its go-live and expiry: what the public may see."""
        return self.filter(public_q(now))

    def scheduled(self, now: datetime | None = None):
        """Published, live, and waiting for its go-live."""
        return self.filter(scheduled_q(now))

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
    go_live_at = models.DateTimeField("go live at", null=True, blank=True)
    expires_at = models.DateTimeField("expire at", null=True, blank=True)

    # Every live image's bytes are in the public store (catalog.visibility): the public views
    # show a published record only once this is set, so no URL they show fails to answer.
    # False by default in Python and in the database: a record written by any path that does
    # not move its bytes stays invisible until they are moved (fail closed).
    bytes_public = models.BooleanField(default=False, db_default=False)

    deleted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RecordQuerySet.as_manager()

    # What differs by kind, said once by each kind's model (Runway, StreetSnap): every other
    # module asks the model, or catalog.models.RECORD_MODELS, and keeps no table of kinds.
    # The kind, in the ingest payload's word ("runway", "street"): the jobs' arguments, the
    # outbox's rows, `manage.py renditions --record KIND:ID`.
    kind: ClassVar[str]
    # The columns of the entity key: one live record per value (record_constraints).
    entity_key: ClassVar[tuple[str, ...]]
    # The editable fields the entity key is made from, which an editor's form reads to refuse
    # a taken key before it saves (entity_key_filter turns them into the key's columns).
    entity_key_fields: ClassVar[tuple[str, ...]]
    # Why an edit that would give the record another live record's entity key is refused.
    entity_key_taken: ClassVar[str]
    # What an editor may edit. Everything else (status, review fields, source, counts, cover)
    # changes only through a service.
    editable_fields: ClassVar[tuple[str, ...]]
    # The word of a record's cache tag at the edge, `<edge_tag>:<id>` (catalog.edge; publicapi
    # tags its responses with the same words).
    edge_tag: ClassVar[str]
    # The public API's endpoints (under /api/v1/) whose responses may show a record of this
    # kind: what a CDN without cache tags invalidates when one changes (catalog.edge).
    public_paths: ClassVar[tuple[str, ...]]

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

    @classmethod
    def entity_key_filter(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The entity key's columns for these values of `entity_key_fields`, as a filter."""
        return {name: values[name] for name in cls.entity_key}

    def period(self) -> str:
        """When the album is from, in its entity key's words: what tells apart two albums
        of one title (the same show crawled twice) on an editor's page."""
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


def record_constraints(prefix: str, entity_key: tuple[str, ...]) -> list[models.BaseConstraint]:
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


def record_indexes(prefix: str) -> list[models.Index]:
    return [
        # The lists by status, newest first (the review queue, the public lists' source).
        models.Index(fields=["status", "-published_at"], name=f"{prefix}_status_published"),
        models.Index(fields=["status", "-created_at"], name=f"{prefix}_status_created"),
        *embargo_indexes(prefix),
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


def record_permissions(model_name: str, plural: str) -> "list[tuple[str, _StrOrPromise]]":
    """The review's permissions on a kind, beside Django's own four (review.services)."""
    return [
        (f"publish_{model_name}", f"Can approve and unpublish {plural}"),
        (f"reject_{model_name}", f"Can reject {plural}"),
        (f"takedown_{model_name}", f"Can take {plural} down"),
    ]


# The legacy archive's hashes come from an algorithm nobody can name any more, so they are not
# comparable bit for bit with ours; the legacy import stores them under this name ('' = no
# hash). The band indexes leave such rows out, and the near-duplicate lookup repeats this very
# condition, so both PostgreSQL and SQLite see that the partial indexes answer it.
LEGACY_PHASH_ALGORITHM = "legacy"
COMPARABLE_PHASH = ~Q(phash_algorithm__in=[LEGACY_PHASH_ALGORITHM, ""])


class ImageQuerySet(models.QuerySet["RecordImage"]):
    def live(self):
        return self.filter(deleted_at__isnull=True)

    def comparable_hashes(self):
        """Images whose perceptual hash ingest may compare its own with (see COMPARABLE_PHASH)."""
        return self.filter(COMPARABLE_PHASH)

    def main(self):
        """The main images: all of a kind without details, else those that are no detail."""
        return self.filter(is_detail=False) if self.model.has_details else self.all()


def _phash_band(shift: int) -> models.GeneratedField:
    # The 64-bit hash is stored signed (bigint); an arithmetic shift then a 16-bit mask gives
    # the same slice as on the unsigned value. Indexed bands make the near-duplicate lookup a
    # handful of index lookups instead of a scan (see ingest.hashing.band_probes).
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
    # How the kind's images are grouped: in looks (look_index: a runway's), or as details under
    # a main image (is_detail and parent: a street album's).
    has_looks: ClassVar[bool] = False
    has_details: ClassVar[bool] = False
    # The stored original, as ingest downloaded, stored and hashed it: what a copy of an image
    # into another album shares with it, beside its renditions (RENDITION_FIELDS).
    ORIGINAL_FIELDS: ClassVar[tuple[str, ...]] = (
        "storage_key",
        "sha1",
        "width",
        "height",
        "byte_size",
        "mime_type",
        "original_url",
        "phash",
        "phash_algorithm",
    )
    RENDITION_FIELDS: ClassVar[tuple[str, ...]] = (
        "renditions",
        "rendition_status",
        "rendition_error",
        "placeholder",
        "color",
    )

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
