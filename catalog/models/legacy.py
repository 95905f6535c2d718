"""What the legacy import already imported."""

from django.db import models


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
