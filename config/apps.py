"""The admin app with the archive's own site (config.admin) as its default site."""

from django.contrib.admin.apps import AdminConfig


class ArchiveAdminConfig(AdminConfig):
    default_site = "config.admin.ArchiveAdminSite"
