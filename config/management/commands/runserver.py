"""`runserver` with the project's development server (config.server), static files served as
django.contrib.staticfiles' runserver does."""

from django.contrib.staticfiles.management.commands.runserver import Command as StaticRunserver

from config.server import DevServer


class Command(StaticRunserver):
    server_cls = DevServer
