from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self) -> None:
        from catalog.visibility import media_changed
        from ingest import checks, schema  # noqa: F401 - registers the checks and the extension
        from ingest.queueing import visibility_enqueue

        # Catalog announces the changes the public may see; the job that runs them is ours.
        media_changed.connect(visibility_enqueue, dispatch_uid="ingest.visibility_enqueue")
