"""Unmanaged models over the `public_*` SQL views (created by this app's migrations), and the
API's registry of the record kinds: each view model says its kind, its cache tag's word and
its images' model, once (PUBLIC_RECORDS, PUBLIC_IMAGES below); nothing else keys by kind.

The public API reads only these. A view holds published, live rows and the live images of
those rows, and selects an explicit list of public columns, so nothing unpublished and no
review detail (reviewer, reject reason, job, checksum) can reach the API by construction.
tests/publicapi/test_views_sql.py compares every view's columns with the model below.
"""

from django.db import DEFAULT_DB_ALIAS, connections, models, router


class PublicBrand(models.Model):
    # Its cache tag: this word and its slug (publicapi.tags; catalog.edge purges by it).
    tag_word = "brand:"

    name = models.CharField(max_length=128)
    slug = models.SlugField(max_length=128)
    is_featured = models.BooleanField()
    runway_count = models.IntegerField()
    latest_published_at = models.DateTimeField(null=True)

    class Meta:
        managed = False
        db_table = "public_brands"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class PublicRecord(models.Model):
    """What both kinds' views hold of a record beside their own columns."""

    title = models.CharField(max_length=255)
    description = models.TextField()
    image_count = models.IntegerField()
    published_at = models.DateTimeField(null=True)
    updated_at = models.DateTimeField()
    # When it leaves the public (an embargo's expiry); its responses are not cached past it.
    expires_at = models.DateTimeField(null=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.title


class PublicImage(models.Model):
    """What both kinds' image views hold beside their own columns."""

    storage_key = models.CharField(max_length=512)
    width = models.IntegerField()
    height = models.IntegerField()
    mime_type = models.CharField(max_length=64)
    sort_order = models.IntegerField()
    # [{"width", "height", "key"}, ...], ascending width; only renditions that are stored.
    renditions = models.JSONField()
    placeholder = models.CharField(max_length=64)  # ThumbHash, base64; '' for none yet
    color = models.CharField(max_length=7)  # '#rrggbb'; '' for none yet

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.storage_key


class PublicRunway(PublicRecord):
    kind = "runway"
    # Its cache tag: this word and its id (publicapi.tags; catalog.edge purges by it).
    tag_word = "runway:"

    brand = models.ForeignKey(
        PublicBrand, on_delete=models.DO_NOTHING, db_constraint=False, related_name="runways"
    )
    # The brand's own columns, so a runway shows its brand without joining public_brands.
    brand_slug = models.SlugField(max_length=128)
    brand_name = models.CharField(max_length=128)
    season_code = models.CharField(max_length=16)
    season = models.CharField(max_length=64)
    year = models.IntegerField()
    collection_type = models.CharField(max_length=32)
    # Null unless the cover is a live image of this runway (the view checks both).
    cover = models.ForeignKey(
        "PublicRunwayImage",
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )

    class Meta:
        managed = False
        db_table = "public_brand_runways"


class PublicRunwayImage(PublicImage):
    kind = "runway"
    record_field = "runway"

    runway = models.ForeignKey(
        PublicRunway, on_delete=models.DO_NOTHING, db_constraint=False, related_name="images"
    )
    look_index = models.IntegerField()

    class Meta:
        managed = False
        db_table = "public_brand_runway_images"


class PublicStreetSnap(PublicRecord):
    kind = "street"
    tag_word = "street-snap:"

    city = models.CharField(max_length=64)
    year = models.IntegerField()
    month = models.IntegerField()
    cover = models.ForeignKey(
        "PublicStreetSnapImage",
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )

    class Meta:
        managed = False
        db_table = "public_street_snaps"


class PublicStreetSnapImage(PublicImage):
    kind = "street"
    record_field = "street_snap"

    street_snap = models.ForeignKey(
        PublicStreetSnap, on_delete=models.DO_NOTHING, db_constraint=False, related_name="images"
    )
    # A detail whose parent is not a live main image of the same album comes out as a main
    # image (parent null, is_detail false): the view decides, so the API cannot get it wrong.
    is_detail = models.BooleanField()
    parent = models.ForeignKey(
        "self", null=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )

    class Meta:
        managed = False
        db_table = "public_street_snap_images"


# The kinds, by the name the API gives them (a similar image's `kind`).
PUBLIC_RECORDS: dict[str, type[PublicRunway] | type[PublicStreetSnap]] = {
    model.kind: model for model in (PublicRunway, PublicStreetSnap)
}
PUBLIC_IMAGES: dict[str, type[PublicRunwayImage] | type[PublicStreetSnapImage]] = {
    model.kind: model for model in (PublicRunwayImage, PublicStreetSnapImage)
}


def public_connection():
    """The connection the view models read through: PUBLIC_DATABASE_URL's role when it is set
    (config.routers). Raw SQL on the views goes through it too, so it has no wider rights."""
    return connections[router.db_for_read(PublicRunway) or DEFAULT_DB_ALIAS]
