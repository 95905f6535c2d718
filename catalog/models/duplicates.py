"""What editors said of near-duplicates, by content."""

from django.db import models
from django.db.models import F, Q


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
