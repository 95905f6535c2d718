"""The admin app with the archive's own site (config.admin) as its default site, and the
project's own app (its management commands: runserver)."""

from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig


class ArchiveAdminConfig(AdminConfig):
    default_site = "config.admin.ArchiveAdminSite"


class ProjectConfig(AppConfig):
    """config as an app, for its management commands: listed before django.contrib.staticfiles
    so that its runserver (config.server) is the one manage.py runs."""

    name = "config"
    label = "project"
