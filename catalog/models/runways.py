"""Runway shows: a brand's collection for a season, its images grouped in looks."""

from django.db import models

from catalog.models.base import (
    Record,
    RecordImage,
    embargo_indexes,
    image_indexes,
    record_constraints,
)
from catalog.models.brands import Brand


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
