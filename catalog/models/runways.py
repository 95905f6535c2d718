"""Runway shows: a brand's collection for a season, its images grouped in looks."""

from django.db import models

from catalog.models.base import (
    Record,
    RecordImage,
    image_indexes,
    record_constraints,
    record_indexes,
    record_permissions,
)
from catalog.models.brands import Brand

# The runway entity key: one live runway per brand, season and collection.
_ENTITY_KEY = ("brand", "season_code", "collection_type")


class Runway(Record):
    kind = "runway"
    entity_key = _ENTITY_KEY
    entity_key_fields = _ENTITY_KEY
    entity_key_taken = (
        "Another live runway already has this brand, season code and collection type."
    )
    editable_fields = (
        "title",
        "description",
        "brand",
        "season_code",
        "season",
        "year",
        "collection_type",
    )
    edge_tag = "runway"
    # A runway shows in its lists and detail, in both image lists' similar results, on the
    # index, and under its brand.
    public_paths = ("runways*", "runway-images*", "street-snap-images*", "index*", "brands*")

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
        constraints = record_constraints("runway", _ENTITY_KEY)
        indexes = record_indexes("runway")
        permissions = record_permissions("runway", "runways")

    def __str__(self) -> str:
        return self.title or f"{self.brand_id} {self.season_code} {self.collection_type}"

    @classmethod
    def image_model(cls) -> "type[RunwayImage]":
        return RunwayImage

    def period(self) -> str:
        return self.season_code


class RunwayImage(RecordImage):
    record_field = "runway"
    has_looks = True

    runway = models.ForeignKey(Runway, on_delete=models.CASCADE, related_name="images")
    # Detail shots share their look's index.
    look_index = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "brand_runway_images"
        indexes = image_indexes("runway_image", "runway")

    def __str__(self) -> str:
        return f"runway {self.runway_id} image {self.pk}"
