"""The archive's admin site: Django's, named after the archive, its index a dashboard of what
waits for the editors (review.dashboard, and ingest's failed jobs), and the editors' words in
its JavaScript catalog."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.views.i18n import JavaScriptCatalog

from catalog.models import RECORD_MODELS
from ingest.models import IngestJob
from review import dashboard


class ArchiveAdminSite(admin.AdminSite):
    site_header = settings.ARCHIVE_NAME
    site_title = f"{settings.ARCHIVE_NAME} admin"
    index_title = "What waits for the editors"
    # "View site": the public site when one is configured, else the public API's docs.
    site_url = settings.PUBLIC_SITE_URL
    index_template = "admin/archive_index.html"

    def index(self, request, extra_context=None):
        return super().index(request, {**self.dashboard(request), **(extra_context or {})})

    def dashboard(self, request) -> dict:
        """The figures the editor may see: each one's list needs its view permission."""
        kinds = [
            model
            for model in RECORD_MODELS.values()
            if model in self._registry
            and self._registry[model].has_view_or_change_permission(request)
        ]
        from ingest.admin import failed_jobs  # it registers with this site: imported once it is

        jobs = self._registry.get(IngestJob)
        may_see_jobs = jobs is not None and jobs.has_view_permission(request)
        return {
            "pending": dashboard.pending_albums(kinds),
            "going_live": dashboard.going_live_today(kinds),
            "failed_jobs": failed_jobs() if may_see_jobs else None,
            "renditions": dashboard.renditions_waiting() if kinds else None,
        }

    def i18n_javascript(self, request, extra_context=None):
        # The admin's own strings and the review pages' (review/static/review/review.js).
        return JavaScriptCatalog.as_view(packages=["django.contrib.admin", "review"])(request)
