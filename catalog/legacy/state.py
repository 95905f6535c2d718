"""The catalog as the legacy import sees it: what the planner must know of it, read in the
import's transaction, and held still until the import commits."""

from __future__ import annotations

from django.db import connection, models
from psycopg import sql

from catalog.legacy.keys import catalog_entity_key, catalog_source_key
from catalog.legacy.plan import CatalogRef, CatalogState
from catalog.legacy.rows import KINDS
from catalog.models import RECORD_MODELS, Brand, LegacyIdMap, Runway, StreetSnap


def read_catalog_state() -> CatalogState:
    """What the planner must know about the catalog: brands, held keys, the legacy id map.

    Keys are read in their normal form (catalog.keys), the form the planner gives legacy rows.
    """
    state = CatalogState(brands_by_slug=dict(Brand.objects.values_list("slug", "id")))
    holders = models.Q(deleted_at__isnull=True) | ~models.Q(source_url="")
    for kind in KINDS:
        model = RECORD_MODELS[kind]
        rows = model.objects.filter(holders).values_list(
            "id", "status", "source", "source_url", "deleted_at", *model.entity_key
        )
        for pk, status, source, source_url, deleted_at, *key in rows.iterator(chunk_size=5_000):
            ref = CatalogRef(kind, pk, status, deleted=deleted_at is not None)
            if deleted_at is None:
                state.live_keys[kind][catalog_entity_key(model.entity_key, key)] = ref
            if source_url:
                state.source_keys[kind][catalog_source_key(source, source_url)] = ref
    id_map = LegacyIdMap.objects.values_list("legacy_table", "legacy_id", "new_id")
    for table, legacy_id, new_id in id_map.iterator(chunk_size=10_000):
        state.earlier.setdefault(table, {})[legacy_id] = new_id
    return state


def lock_catalog() -> None:
    """Hold off other writers of the record tables and the id map until the import commits.

    SHARE ROW EXCLUSIVE lets the admin and the public API read on, but makes an ingest job (or a
    second import) wait, so the keys the plan saw are still the keys when it is written. Must
    run inside the import's transaction.
    """
    if connection.vendor != "postgresql":
        return  # SQLite: the import's write transaction already excludes every other writer.
    tables = sql.SQL(", ").join(
        sql.Identifier(m._meta.db_table) for m in (Brand, Runway, StreetSnap, LegacyIdMap)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(tables).as_string()
        )
