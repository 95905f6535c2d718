from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        from catalog.visibility import embargo_reached

        # An embargo's go-live or expiry came: the album's history says so.
        embargo_reached.connect(_embargo_reached, dispatch_uid="review.record_embargo_reached")


def _embargo_reached(sender, **kwargs) -> None:
    from review.services import record_embargo_reached

    record_embargo_reached(**kwargs)
