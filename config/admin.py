"""The archive's admin site: Django's, with the editors' words in its JavaScript catalog."""

from __future__ import annotations

from django.contrib import admin
from django.views.i18n import JavaScriptCatalog


class ArchiveAdminSite(admin.AdminSite):
    def i18n_javascript(self, request, extra_context=None):
        # The admin's own strings and the review pages' (review/static/review/review.js).
        return JavaScriptCatalog.as_view(packages=["django.contrib.admin", "review"])(request)
