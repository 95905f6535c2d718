from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Archive"

    def ready(self) -> None:
        from catalog.models import Brand, BrandAlias

        # A brand's name, slug and featured flag are on public pages (runways, brands, the
        # index), and its aliases decide what a search finds: the edge forgets them on change.
        for model in (Brand, BrandAlias):
            post_save.connect(
                _brand_changed, sender=model, dispatch_uid=f"visibility-{model.__name__}"
            )
            post_delete.connect(
                _brand_changed, sender=model, dispatch_uid=f"visibility-{model.__name__}-delete"
            )


def _brand_changed(sender, instance, created: bool = False, **kwargs) -> None:
    from catalog import edge
    from catalog.models import Brand
    from catalog.visibility import media_change_note

    if created and sender is Brand:
        return  # a new brand has no public runway yet
    brand_id = instance.pk if sender is Brand else instance.brand_id
    media_change_note(kind="brand", record_id=None, tags=edge.brand_tags(brand_id))
