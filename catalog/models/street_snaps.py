"""Street-style albums: a city, a month and a title; their images, details under main images."""

from collections.abc import Mapping
from typing import Any

from django.db import models
from django.db.models import Q

from catalog.keys import fold_title
from catalog.models.base import (
    Record,
    RecordImage,
    image_indexes,
    record_constraints,
    record_indexes,
    record_permissions,
)

# The street entity key: one live album per city, month and title (title_key: folded).
_ENTITY_KEY = ("city", "year", "month", "title_key")


class StreetSnap(Record):
    kind = "street"
    entity_key = _ENTITY_KEY
    entity_key_fields = ("city", "year", "month", "title")
    entity_key_taken = "Another live street album already has this city, year, month and title."
    editable_fields = ("title", "description", "city", "year", "month")
    edge_tag = "street-snap"
    # A street album shows in its lists and detail, in both image lists' similar results, and
    # on the index.
    public_paths = ("street-snaps*", "street-snap-images*", "runway-images*", "index*")

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
            *record_constraints("street", _ENTITY_KEY),
            models.CheckConstraint(
                condition=Q(month__lte=12),
                name="street_month_range",
                violation_error_message=(
                    "The month is a number from 1 to 12 (0: unknown, for albums from the old "
                    "archive only)."
                ),
            ),
        ]
        indexes = record_indexes("street")
        permissions = record_permissions("streetsnap", "street snaps")

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

    @classmethod
    def entity_key_filter(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "city": values["city"],
            "year": values["year"],
            "month": values["month"],
            "title_key": fold_title(values["title"]),
        }

    def period(self) -> str:
        # The year alone when the month is unknown (0: albums from the old archive).
        return f"{self.year}-{self.month:02d}" if self.month else str(self.year)


class StreetSnapImage(RecordImage):
    record_field = "street_snap"
    has_details = True

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
