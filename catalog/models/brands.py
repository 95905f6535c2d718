"""Brands, and the names crawlers send for them."""

from django.db import models
from django.db.models.functions import Lower

from catalog.keys import fold_whitespace


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
