"""Reading the legacy database: read-only, one snapshot for the whole run, album by album."""

import psycopg
import pytest

from catalog.legacy.rows import ORPHAN, PUBLISHED, STREET_DRAFTS, STREETS
from catalog.legacy.source import PostgresLegacySource, required_columns
from tests.catalog.legacy.archive import ALL_TABLES, at

pytestmark = pytest.mark.postgres


def test_the_connection_cannot_write(legacy):
    with PostgresLegacySource(legacy.conninfo) as source:
        source.check_schema()

        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            source.conn.execute("INSERT INTO brands (name, slug) VALUES ('x', 'x')")


def test_every_read_sees_the_snapshot_of_the_first(legacy):
    snap = legacy.street("Paris", 2024, 8, "A")
    legacy.image(STREETS, snap)
    with PostgresLegacySource(legacy.conninfo) as source:
        before = source.counts()

        # The old system keeps writing while the import runs.
        legacy.image(STREETS, snap)
        legacy.street("Oslo", 2024, 8, "B")

        assert source.counts() == before
        assert [len(images) for _, images in source.image_groups(STREETS)] == [1]
        assert len(list(source.records(STREETS))) == 1


def test_images_come_album_by_album_in_id_order_with_orphans_counted(legacy):
    first = legacy.street_draft("Paris", 2024, 8, "A", "pending", created_at=at(2))
    second = legacy.street_draft("Paris", 2024, 9, "B", "rejected", created_at=at(1))
    ids = [legacy.image(STREET_DRAFTS, record) for record in (second, first, second, 404)]

    with PostgresLegacySource(legacy.conninfo, itersize=2) as source:
        groups = [
            (record, [i.id for i in images])
            for record, images in source.image_groups(STREET_DRAFTS)
        ]
        counts = source.counts()

    assert groups == [(first, [ids[1]]), (second, [ids[0], ids[2]]), (404, [ids[3]])]
    assert counts[(STREET_DRAFTS.image_table, "pending")] == 1
    assert counts[(STREET_DRAFTS.image_table, "rejected")] == 2
    assert counts[(STREET_DRAFTS.image_table, ORPHAN)] == 1
    assert (STREETS.name, PUBLISHED) not in counts  # no rows, no count


def test_the_schema_copy_in_the_tests_has_every_column_the_import_reads(legacy):
    assert set(required_columns()) == set(ALL_TABLES)
    with PostgresLegacySource(legacy.conninfo) as source:
        source.check_schema()  # raises if the copy lost a column
