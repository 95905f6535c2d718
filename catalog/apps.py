from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save, pre_save


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Archive"

    def ready(self) -> None:
        from catalog.models import Brand, BrandAlias

        # A brand's name, slug and featured flag are on public pages (runways, brands, the
        # index), and its aliases decide what a search finds: the edge forgets them on change.
        pre_save.connect(_brand_before, sender=Brand, dispatch_uid="visibility-brand-before")
        for model in (Brand, BrandAlias):
            post_save.connect(
                _brand_changed, sender=model, dispatch_uid=f"visibility-{model.__name__}"
            )
            post_delete.connect(
                _brand_changed, sender=model, dispatch_uid=f"visibility-{model.__name__}-delete"
            )


def _brand_before(sender, instance, **kwargs) -> None:
    # The slug it had: its pages are cached under that one.
    if instance.pk is not None:
        instance._slug_before = (
            sender.objects.filter(pk=instance.pk).values_list("slug", flat=True).first()
        )


def _brand_changed(sender, instance, created: bool = False, **kwargs) -> None:
    from catalog import edge
    from catalog.models import Brand
    from catalog.visibility import media_change_note

    if sender is Brand:
        if created:
            return  # a new brand has no public runway yet
        slugs = [getattr(instance, "_slug_before", None) or "", instance.slug]
    else:
        slugs = [
            Brand.objects.filter(pk=instance.brand_id).values_list("slug", flat=True).first() or ""
        ]
    # A brand's public pages are its runways' pages, which carry its tag: nothing to move.
    media_change_note(kind="brand", record_id=None, tags=edge.brand_tags(*slugs))
