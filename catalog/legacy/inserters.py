"""Inserting rows for the legacy import, two ways, the same rows: on PostgreSQL, COPY with ids
taken from the table's sequence beforehand (the faster by far at production size); elsewhere,
Django's bulk_create. Tests run both."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import batched
from typing import Protocol, cast

from django.db import connection, models
from psycopg import sql

Row = dict[str, object]  # field attname -> value, ready for the database

# Rows per UPDATE of a column: bulk_update's CASE grows with each; COPY's unnest does not.
_ORM_UPDATE_BATCH = 1_000
_COPY_UPDATE_BATCH = 10_000


class Inserter(Protocol):
    def insert(self, model: type[models.Model], rows: list[Row], *, ids: bool = True) -> list[int]:
        """Insert `rows` (attname -> value); return their new ids in order (if `ids`)."""
        ...

    def set_column(self, model: type[models.Model], attname: str, pairs: list[tuple]) -> None:
        """Set `attname` to value for each (id, value) in `pairs`."""
        ...


class OrmInserter:
    """Django's bulk_create: portable (SQLite), the model's own defaults and conversions."""

    def insert(self, model: type[models.Model], rows: list[Row], *, ids: bool = True) -> list[int]:
        objects = [model(**row) for row in rows]
        with _legacy_timestamps(model):
            model._default_manager.bulk_create(objects)
        return [obj.pk for obj in objects] if ids else []

    def set_column(self, model: type[models.Model], attname: str, pairs: list[tuple]) -> None:
        objects = [model(pk=pk, **{attname: value}) for pk, value in pairs]
        model._default_manager.bulk_update(objects, [attname], batch_size=_ORM_UPDATE_BATCH)


class CopyInserter:
    """PostgreSQL COPY. The ids are drawn from the table's own sequence first, so they are
    known without relying on the order of RETURNING, and columns a row leaves out get the
    model field's default, as bulk_create would give them."""

    def __init__(self) -> None:
        self._columns: dict[type[models.Model], list[tuple[str, str, object]]] = {}

    def columns(self, model: type[models.Model]) -> list[tuple[str, str, object]]:
        """(attname, column, prepared default) of every column COPY writes, id excluded."""
        if model not in self._columns:
            self._columns[model] = [
                (f.attname, cast(str, f.column), f.get_db_prep_save(f.get_default(), connection))
                for f in model._meta.concrete_fields
                if not f.primary_key and not getattr(f, "generated", False)
            ]
        return self._columns[model]

    def insert(self, model: type[models.Model], rows: list[Row], *, ids: bool = True) -> list[int]:
        if not rows:
            return []
        table = model._meta.db_table
        columns = self.columns(model)
        # bulk_create would refuse a misspelt field; COPY would silently write the default.
        if unknown := set(rows[0]) - {attname for attname, _, _ in columns}:
            raise ValueError(f"{model.__name__} has no column for {sorted(unknown)}")
        names = [c for _, c, _ in columns]
        # `cursor.cursor` is psycopg's own cursor, outside Django's error translation: without
        # wrap_database_errors a unique violation would surface as a psycopg error, which the
        # command takes for a failure to read the legacy database (exit 2, no report), where
        # bulk_create raises Django's IntegrityError (the import refused, exit 1).
        with connection.cursor() as cursor, connection.wrap_database_errors:
            new_ids: list[int] = []
            if ids:
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                    [table, len(rows)],
                )
                new_ids = [pk for (pk,) in cursor.fetchall()]
                names = ["id", *names]
            copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
                sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, names))
            )
            with cursor.cursor.copy(copy) as stream:
                for i, row in enumerate(rows):
                    values = tuple(row.get(attname, default) for attname, _, default in columns)
                    stream.write_row((new_ids[i], *values) if ids else values)
        return new_ids

    def set_column(self, model: type[models.Model], attname: str, pairs: list[tuple]) -> None:
        # One statement per batch over two arrays, instead of bulk_update's CASE per row.
        # A column of the model's own (get_field could also name a reverse relation).
        field = cast(models.Field, model._meta.get_field(attname.removesuffix("_id")))
        column = cast(str, field.column)
        query = sql.SQL(
            "UPDATE {table} SET {column} = v.value FROM unnest(%s::bigint[], %s::bigint[])"
            " AS v(id, value) WHERE {table}.id = v.id"
        ).format(table=sql.Identifier(model._meta.db_table), column=sql.Identifier(column))
        with connection.cursor() as cursor, connection.wrap_database_errors:
            for chunk in batched(pairs, _COPY_UPDATE_BATCH):
                cursor.cursor.execute(query, [[pk for pk, _ in chunk], [v for _, v in chunk]])


def default_inserter() -> Inserter:
    return CopyInserter() if connection.vendor == "postgresql" else OrmInserter()


@contextmanager
def _legacy_timestamps(*model_classes: type[models.Model]) -> Iterator[None]:
    # bulk_create runs each field's pre_save, which stamps auto_now / auto_now_add fields with
    # the import time. The archive's own dates are the truth here (editors sort the review
    # queue by age), so those flags are off while the import writes. A management command is
    # single-threaded; the finally restores them whatever happens.
    fields = [
        cast(models.DateField, f)  # DateTimeField is one too
        for model in model_classes
        for f in model._meta.concrete_fields
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    ]
    saved = [(f, f.auto_now, f.auto_now_add) for f in fields]
    for f in fields:
        f.auto_now = f.auto_now_add = False
    try:
        yield
    finally:
        for f, auto_now, auto_now_add in saved:
            f.auto_now, f.auto_now_add = auto_now, auto_now_add
