"""Importing the legacy archive (`manage.py migrate_legacy_drafts`).

The old archive kept review state in draft tables beside its published tables (its schema is
tests/catalog/legacy/schema.sql). The import runs in two passes over one consistent, read-only
snapshot of it:

1. `planner.build_plan` reads every legacy row (records in memory, images streamed one album at a
   time) together with what the catalog already holds, and decides the fate of each row:
   imported, superseded, skipped, or already accounted for by an earlier run, and checks the
   plan (`audit.plan_checks`). It reads no database, so the dry run, the real run and the
   property tests share it.
2. `writer.apply_plan` streams the images again and writes what the plan says, inside the
   caller's transaction; `audit.database_checks` then verifies the written state before commit.

`services.legacy_archive_migrate` ties the two together; the management command only parses
arguments and prints `report.render_report`.
"""
