"""Send the public API's reads through the `public` connection when PUBLIC_DATABASE_URL is set.

The role behind it may SELECT the public_* views and nothing else (see
publicapi/management/commands/create_public_role.py). Only publicapi's unmanaged view models
go there; every other model, and every write, stays on `default`.
"""

from django.db import connections


class PublicApiRouter:
    def db_for_read(self, model, **hints):
        if model._meta.app_label == "publicapi" and "public" in connections.settings:
            return "public"
        return None

    def db_for_write(self, model, **hints):
        return None

    def allow_migrate(self, db, app_label, **hints):
        # The role cannot create anything: migrations run on `default` only.
        return db != "public"
