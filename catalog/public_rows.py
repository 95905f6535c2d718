"""The public rows: tables that hold exactly what the public may see, under the public views.

A record's row (and its images') is in ``public_*_rows`` while it is published, live and its
bytes are public, and nowhere else: the public views (publicapi/sql.py, V8 on) select from
these tables only, and the public database role may read the views and nothing else. So no
plan, statistic or error of the role's own SQL has a hidden row to count: the tables hold none.

The database keeps them, not the application: triggers on catalog's tables refresh the rows of
every record a statement touches (its images', its brand's), in the statement's transaction,
whoever writes (a service, the admin, the legacy import, an operator's SQL). A refresh of a
record deletes its public rows and selects them again from catalog's tables, with the rules
the views had before V8: a cover only while it is a live image of the album, a street detail's
parent only while it is a live main image of the album (else the detail shows as a main
image), a brand while it has a public runway, with its count and its names for search.

PostgreSQL: statement-level triggers with transition tables, so a bulk write refreshes each
record once; two writers of one album take turns at its refresh (its catalog row, locked), so
neither reads the other's half-written rows. SQLite (the embedded
mode, one writer): row-level triggers with the same statements.

Triggers pin catalog's tables (SQLite drops them with a table it rebuilds), so they step aside
while catalog migrates and come back, with every row refreshed, after it (catalog/apps.py).
publicapi reads these tables through its views only (the import contract keeps it off catalog).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC

from django.utils import timezone

# --- The tables ------------------------------------------------------------------------------
# Migration 0014 made them as they are here: a change is a migration of its own.

_IMAGE_COLUMNS = [
    ("id", "bigint NOT NULL PRIMARY KEY"),
    ("storage_key", "varchar(512) NOT NULL"),
    ("width", "integer NOT NULL"),
    ("height", "integer NOT NULL"),
    ("mime_type", "varchar(64) NOT NULL"),
    ("sort_order", "integer NOT NULL"),
    ("renditions", "{json} NOT NULL"),
    ("placeholder", "varchar(64) NOT NULL"),
    ("color", "varchar(7) NOT NULL"),
    # For similar images (public_image_hashes): never shown.
    ("phash", "bigint NULL"),
    ("phash_algorithm", "varchar(32) NOT NULL"),
    ("phash_band0", "integer NULL"),
    ("phash_band1", "integer NULL"),
    ("phash_band2", "integer NULL"),
    ("phash_band3", "integer NULL"),
]
_RECORD_COLUMNS = [
    ("title", "varchar(255) NOT NULL"),
    ("description", "text NOT NULL"),
    ("cover_id", "bigint NULL"),
    ("image_count", "integer NOT NULL"),
    ("published_at", "{timestamp} NULL"),
    ("updated_at", "{timestamp} NOT NULL"),
    ("search", "{search} NULL"),
    # The embargo: the views show a row only inside it (publicapi/sql.py), whatever the jobs
    # that move its bytes at those times do.
    ("go_live_at", "{timestamp} NULL"),
    ("expires_at", "{timestamp} NULL"),
]

TABLES: dict[str, list[tuple[str, str]]] = {
    "public_brand_runway_rows": [
        ("id", "bigint NOT NULL PRIMARY KEY"),
        ("brand_id", "bigint NOT NULL"),
        ("brand_slug", "varchar(128) NOT NULL"),
        ("brand_name", "varchar(128) NOT NULL"),
        ("brand_is_featured", "boolean NOT NULL"),
        ("season_code", "varchar(16) NOT NULL"),
        ("season", "varchar(64) NOT NULL"),
        ("year", "integer NOT NULL"),
        ("collection_type", "varchar(32) NOT NULL"),
        *_RECORD_COLUMNS,
    ],
    "public_brand_runway_image_rows": [
        *_IMAGE_COLUMNS[:1],
        ("runway_id", "bigint NOT NULL"),
        *_IMAGE_COLUMNS[1:6],
        ("look_index", "integer NOT NULL"),
        *_IMAGE_COLUMNS[6:],
    ],
    "public_street_snap_rows": [
        ("id", "bigint NOT NULL PRIMARY KEY"),
        ("city", "varchar(64) NOT NULL"),
        ("year", "integer NOT NULL"),
        ("month", "integer NOT NULL"),
        *_RECORD_COLUMNS,
    ],
    "public_street_snap_image_rows": [
        *_IMAGE_COLUMNS[:1],
        ("street_snap_id", "bigint NOT NULL"),
        *_IMAGE_COLUMNS[1:6],
        ("parent_id", "bigint NULL"),
        ("is_detail", "boolean NOT NULL"),
        *_IMAGE_COLUMNS[6:],
    ],
    "public_brand_rows": [
        ("id", "bigint NOT NULL PRIMARY KEY"),
        ("name", "varchar(128) NOT NULL"),
        ("slug", "varchar(128) NOT NULL"),
        ("is_featured", "boolean NOT NULL"),
        ("runway_count", "integer NOT NULL"),
        ("latest_published_at", "{timestamp} NULL"),
    ],
    # A public brand's name and aliases, for `?q=` on runways (publicapi.search).
    "public_brand_name_rows": [
        ("brand_id", "bigint NOT NULL"),
        ("name", "varchar(128) NOT NULL"),
        ("search", "{search} NULL"),
    ],
}

# The lists' order (publicapi.search.NEWEST_FIRST), a brand's runways, an album's images, the
# band probes of similar images (comparable hashes only, as catalog's own band indexes).
_COMPARABLE = "phash IS NOT NULL AND NOT (phash_algorithm IN ('legacy', ''))"
INDEXES = [
    "CREATE INDEX public_runway_row_newest ON public_brand_runway_rows "
    "(published_at DESC{nulls_last}, id DESC)",
    "CREATE INDEX public_runway_row_brand ON public_brand_runway_rows "
    "(brand_id, published_at DESC{nulls_last}, id DESC)",
    "CREATE INDEX public_street_row_newest ON public_street_snap_rows "
    "(published_at DESC{nulls_last}, id DESC)",
    "CREATE INDEX public_runway_image_row_album ON public_brand_runway_image_rows "
    "(runway_id, sort_order, id)",
    "CREATE INDEX public_street_image_row_album ON public_street_snap_image_rows "
    "(street_snap_id, sort_order, id)",
    # The facets' columns (publicapi.facets): a count reads this index alone.
    "CREATE INDEX public_runway_row_facets ON public_brand_runway_rows "
    "(season_code, year, collection_type, brand_id)",
    "CREATE INDEX public_street_row_facets ON public_street_snap_rows (city, year, month)",
    "CREATE INDEX public_brand_row_name ON public_brand_rows (name, id)",
    "CREATE INDEX public_brand_row_slug ON public_brand_rows (slug)",
    "CREATE INDEX public_brand_name_row_brand ON public_brand_name_rows (brand_id)",
    *(
        f"CREATE INDEX public_{kind}_image_row_band{n} ON {table} (phash_band{n}) "
        f"WHERE {_COMPARABLE}"
        for kind, table in (
            ("runway", "public_brand_runway_image_rows"),
            ("street", "public_street_snap_image_rows"),
        )
        for n in range(4)
    ),
]
_SEARCH_INDEXES = [
    "CREATE INDEX public_runway_row_search ON public_brand_runway_rows USING GIN (search)",
    "CREATE INDEX public_street_row_search ON public_street_snap_rows USING GIN (search)",
    "CREATE INDEX public_brand_name_row_search ON public_brand_name_rows USING GIN (search)",
]


def create_tables(vendor: str) -> list[str]:
    postgres = vendor == "postgresql"
    types = {
        "json": "jsonb" if postgres else "text",
        "timestamp": "timestamp with time zone" if postgres else "datetime",
        "search": "tsvector" if postgres else "text",
    }
    statements = []
    for table, columns in TABLES.items():
        listed = ", ".join(f"{name} {kind.format(**types)}" for name, kind in columns)
        statements.append(f"CREATE TABLE {table} ({listed})")
    nulls_last = " NULLS LAST" if postgres else ""
    statements += [index.format(nulls_last=nulls_last) for index in INDEXES]
    return statements + ([*_SEARCH_INDEXES, CLOCK] if postgres else [])


def drop_tables(vendor: str) -> list[str]:
    clock = ["DROP FUNCTION IF EXISTS archive_now()"] if vendor == "postgresql" else []
    return [f"DROP TABLE IF EXISTS {table}" for table in TABLES] + clock


# --- A refresh, as SQL over a set of ids ---------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """One kind of record: its catalog tables and its public ones."""

    name: str
    table: str
    images: str
    fk: str  # the image's column naming its record
    rows: str
    image_rows: str
    own_columns: list[str]  # the record's own columns, after id
    image_columns: list[str]  # the image's own, after the common ones
    runway: bool


RUNWAY = Kind(
    name="runway",
    table="brand_runways",
    images="brand_runway_images",
    fk="runway_id",
    rows="public_brand_runway_rows",
    image_rows="public_brand_runway_image_rows",
    own_columns=["season_code", "season", "year", "collection_type"],
    image_columns=["look_index"],
    runway=True,
)
STREET = Kind(
    name="street",
    table="street_snaps",
    images="street_snap_images",
    fk="street_snap_id",
    rows="public_street_snap_rows",
    image_rows="public_street_snap_image_rows",
    own_columns=["city", "year", "month"],
    image_columns=["parent_id", "is_detail"],
    runway=False,
)
KINDS = [RUNWAY, STREET]

# A record has public rows while published, live, not expired and its bytes are public (or, in
# the embedded mode, need no copy: catalog.visibility.flag). Its go-live the views hold.
PUBLIC_RECORD = (
    "r.status = 'published' AND r.deleted_at IS NULL AND r.bytes_public "
    "AND (r.expires_at IS NULL OR r.expires_at > archive_now())"
)

# The embargo's clock, one function the views and the triggers read: PostgreSQL's now(); on
# SQLite the application's clock, registered on each connection (catalog/apps.py), as Django
# stores a time there (ISO text in UTC). A test moves it with the application's (tests/support).
CLOCK = (
    "CREATE OR REPLACE FUNCTION archive_now() RETURNS timestamptz LANGUAGE sql STABLE "
    "AS $$ SELECT now() $$"
)


def sqlite_clock() -> str:
    return timezone.now().astimezone(UTC).replace(tzinfo=None).isoformat(" ")


def image_shown_columns(kind: Kind) -> list[str]:
    """The columns of an image a refresh reads: a change of any other one changes nothing."""
    return [
        kind.fk,
        "storage_key",
        "width",
        "height",
        "mime_type",
        "sort_order",
        *(["look_index"] if kind.runway else ["parent_id", "is_detail"]),
        "renditions",
        "placeholder",
        "color",
        "phash",
        "phash_algorithm",
        "deleted_at",
    ]


def _search(vendor: str, alias: str) -> str:
    return f"{alias}.search_vector" if vendor == "postgresql" else "NULL"


def record_refresh(kind: Kind, vendor: str, ids: str) -> list[str]:
    """The statements that make the public rows of the records whose ids ``ids`` (an SQL
    expression: a subquery, or a list of values) gives what catalog's tables say now."""
    image_names = [
        "id",
        kind.fk,
        "storage_key",
        "width",
        "height",
        "mime_type",
        "sort_order",
        *kind.image_columns,
        "renditions",
        "placeholder",
        "color",
        "phash",
        "phash_algorithm",
        "phash_band0",
        "phash_band1",
        "phash_band2",
        "phash_band3",
    ]
    if kind.runway:
        record_names = ["id", "brand_id", "brand_slug", "brand_name", "brand_is_featured"]
        record_values = ["r.id", "r.brand_id", "b.slug", "b.name", "b.is_featured"]
        joined = "JOIN brands b ON b.id = r.brand_id"
        image_values = [f"i.{name}" for name in image_names]
    else:
        record_names, record_values, joined = ["id"], ["r.id"], ""
        # A detail keeps its parent only while the parent is a live main image of the album;
        # otherwise it shows as a main image.
        image_values = [
            {
                "parent_id": "CASE WHEN p.id IS NOT NULL THEN i.parent_id END",
                "is_detail": "(p.id IS NOT NULL)",
            }.get(name, f"i.{name}")
            for name in image_names
        ]
    record_names += [*kind.own_columns, *(name for name, _ in _RECORD_COLUMNS)]
    record_values += [f"r.{name}" for name in kind.own_columns]
    record_values += [
        "r.title",
        "r.description",
        # A cover only while it is a live image of the same album.
        f"(SELECT c.id FROM {kind.images} c WHERE c.id = r.cover_id AND c.{kind.fk} = r.id "
        "AND c.deleted_at IS NULL)",
        "r.image_count",
        "r.published_at",
        "r.updated_at",
        _search(vendor, "r"),
        "r.go_live_at",
        "r.expires_at",
    ]
    parent = (
        ""
        if kind.runway
        else f"LEFT JOIN {kind.images} p ON p.id = i.parent_id AND p.{kind.fk} = i.{kind.fk} "
        "AND p.deleted_at IS NULL AND NOT p.is_detail"
    )
    return [
        f"DELETE FROM {kind.image_rows} WHERE {kind.fk} IN ({ids})",
        f"DELETE FROM {kind.rows} WHERE id IN ({ids})",
        f"INSERT INTO {kind.rows} ({', '.join(record_names)}) "
        f"SELECT {', '.join(record_values)} FROM {kind.table} r {joined} "
        f"WHERE r.id IN ({ids}) AND {PUBLIC_RECORD}",
        f"INSERT INTO {kind.image_rows} ({', '.join(image_names)}) "
        f"SELECT {', '.join(image_values)} FROM {kind.images} i "
        f"JOIN {kind.rows} r ON r.id = i.{kind.fk} {parent} "
        f"WHERE i.{kind.fk} IN ({ids}) AND i.deleted_at IS NULL",
    ]


def brand_refresh(vendor: str, ids: str) -> list[str]:
    """The statements that make the public rows of the brands ``ids`` gives: a brand with a
    public runway, its count and newest publication, its name and aliases."""
    public = "EXISTS (SELECT 1 FROM public_brand_rows p WHERE p.id = {column})"
    return [
        f"DELETE FROM public_brand_rows WHERE id IN ({ids})",
        "INSERT INTO public_brand_rows "
        "(id, name, slug, is_featured, runway_count, latest_published_at) "
        "SELECT brand_id, brand_name, brand_slug, brand_is_featured, COUNT(*), "
        "MAX(published_at) FROM public_brand_runway_rows "
        f"WHERE brand_id IN ({ids}) "
        "GROUP BY brand_id, brand_name, brand_slug, brand_is_featured",
        f"DELETE FROM public_brand_name_rows WHERE brand_id IN ({ids})",
        "INSERT INTO public_brand_name_rows (brand_id, name, search) "
        f"SELECT b.id, b.name, {_search(vendor, 'b')} FROM brands b "
        f"WHERE b.id IN ({ids}) AND {public.format(column='b.id')} "
        f"UNION ALL SELECT a.brand_id, a.alias, {_search(vendor, 'a')} FROM brand_aliases a "
        f"WHERE a.brand_id IN ({ids}) AND {public.format(column='a.brand_id')}",
    ]


def brand_columns_refresh(ids: str) -> list[str]:
    """A brand's own columns on its public runways (its name, slug, featured flag)."""
    return [
        "UPDATE public_brand_runway_rows SET brand_slug = b.slug, brand_name = b.name, "
        "brand_is_featured = b.is_featured FROM brands b "
        f"WHERE b.id = public_brand_runway_rows.brand_id AND b.id IN ({ids})"
    ]


# --- PostgreSQL: functions and statement-level triggers ------------------------------------------

# Two writers of one record (or brand) take turns at its refresh, holding its catalog row (FOR
# NO KEY UPDATE: a foreign key's check still passes): the second reads the first's rows once it
# committed. Brands first, then records, each in id order; the services lock a record's row
# before its images' (catalog.services.records), so a refresh never waits for an image row of
# a writer that waits for it. Row locks, not advisory ones: a bulk write of thousands of
# records would take as many entries of the shared lock table.


def _locks(table: str, ids: str) -> str:
    return f"PERFORM 1 FROM {table} WHERE id = ANY({ids}) ORDER BY id FOR NO KEY UPDATE"


def _plpgsql(name: str, declare: str, body: list[str]) -> str:
    statements = "\n".join(f"    {statement};" for statement in body)
    return (
        f"CREATE OR REPLACE FUNCTION {name} RETURNS void LANGUAGE plpgsql AS $body$\n"
        f"{declare}BEGIN\n{statements}\nEND\n$body$"
    )


def _trigger_function(name: str, ids_of: dict[str, str], call: str) -> str:
    """A trigger function: the ids each event's transition tables name, then ``call``."""
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
        "BEGIN\n"
        f"    IF TG_OP = 'INSERT' THEN PERFORM {call.format(ids=ids_of['INSERT'])};\n"
        f"    ELSIF TG_OP = 'DELETE' THEN PERFORM {call.format(ids=ids_of['DELETE'])};\n"
        f"    ELSE PERFORM {call.format(ids=ids_of['UPDATE'])};\n"
        "    END IF;\n"
        "    RETURN NULL;\n"
        "END\n$body$"
    )


def _ids(column: str, tables: list[str]) -> str:
    return "ARRAY(" + " UNION ".join(f"SELECT {column} FROM {t}" for t in tables) + ")"


_EVENTS = {"INSERT": ["new_rows"], "DELETE": ["old_rows"], "UPDATE": ["new_rows", "old_rows"]}


def _statement_triggers(table: str, function: str, events: list[str]) -> list[str]:
    triggers = []
    for event in events:
        referencing = {
            "INSERT": "NEW TABLE AS new_rows",
            "DELETE": "OLD TABLE AS old_rows",
            "UPDATE": "NEW TABLE AS new_rows OLD TABLE AS old_rows",
        }[event]
        triggers.append(
            f"CREATE TRIGGER {table}_public_{event.lower()} AFTER {event} ON {table} "
            f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
        )
    return triggers


def postgresql_triggers() -> list[str]:
    vendor = "postgresql"
    statements = [
        _plpgsql(
            "public_brands_refresh(ids bigint[])",
            "",
            [_locks("brands", "ids"), *brand_refresh(vendor, "SELECT unnest(ids)")],
        )
    ]
    for kind in KINDS:
        body = []
        declare = ""
        if kind.runway:
            # The brands of these runways, before and after: their counts change.
            declare = "DECLARE brand_ids bigint[];\n"
            body += [
                "brand_ids := ARRAY(SELECT brand_id FROM public_brand_runway_rows "
                "WHERE id = ANY(ids) UNION SELECT brand_id FROM brand_runways WHERE id = ANY(ids))",
                _locks("brands", "brand_ids"),
            ]
        body.append(_locks(kind.table, "ids"))
        body += record_refresh(kind, vendor, "SELECT unnest(ids)")
        if kind.runway:
            body.append("PERFORM public_brands_refresh(brand_ids)")
        statements.append(_plpgsql(f"public_{kind.name}s_refresh(ids bigint[])", declare, body))
        call = f"public_{kind.name}s_refresh({{ids}})"
        record_ids = {event: _ids("id", tables) for event, tables in _EVENTS.items()}
        image_ids = {event: _ids(kind.fk, tables) for event, tables in _EVENTS.items()}
        # An update of what no public row shows (a rendition's status, a duplicate's flag)
        # refreshes nothing.
        shown = ", ".join(f"{{row}}.{column}" for column in image_shown_columns(kind))
        changed = (
            f"FROM new_rows n JOIN old_rows o ON o.id = n.id "
            f"WHERE ({shown.format(row='n')}) IS DISTINCT FROM ({shown.format(row='o')})"
        )
        image_ids["UPDATE"] = (
            f"ARRAY(SELECT n.{kind.fk} {changed} UNION SELECT o.{kind.fk} {changed})"
        )
        statements.append(_trigger_function(f"public_{kind.table}_changed", record_ids, call))
        statements.append(_trigger_function(f"public_{kind.images}_changed", image_ids, call))
        events = ["INSERT", "UPDATE", "DELETE"]
        statements += _statement_triggers(kind.table, f"public_{kind.table}_changed", events)
        statements += _statement_triggers(kind.images, f"public_{kind.images}_changed", events)
    # A brand's own columns on its runways' rows, then its row and names; an alias, its names.
    brand_ids = {event: _ids("id", tables) for event, tables in _EVENTS.items()}
    alias_ids = {event: _ids("brand_id", tables) for event, tables in _EVENTS.items()}
    statements.append(
        _plpgsql(
            "public_brand_columns_refresh(ids bigint[])",
            "",
            [*brand_columns_refresh("SELECT unnest(ids)"), "PERFORM public_brands_refresh(ids)"],
        )
    )
    statements.append(
        _trigger_function("public_brands_changed", brand_ids, "public_brand_columns_refresh({ids})")
    )
    statements.append(
        _trigger_function("public_brand_aliases_changed", alias_ids, "public_brands_refresh({ids})")
    )
    statements += _statement_triggers("brands", "public_brands_changed", ["UPDATE"])
    statements += _statement_triggers(
        "brand_aliases", "public_brand_aliases_changed", ["INSERT", "UPDATE", "DELETE"]
    )
    # A TRUNCATE fires no row's trigger: every public row is made again (tests' flushes; an
    # operator emptying a table).
    statements.append(
        "CREATE OR REPLACE FUNCTION public_rows_truncated() RETURNS trigger LANGUAGE plpgsql "
        "AS $body$\nBEGIN\n"
        + "".join(f"    {statement};\n" for statement in refresh_all(vendor))
        + "    RETURN NULL;\nEND\n$body$"
    )
    statements += [
        f"CREATE TRIGGER {table}_public_truncate AFTER TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION public_rows_truncated()"
        for table in _TRUNCATED
    ]
    return statements


_TRUNCATED = [
    "brand_runways",
    "brand_runway_images",
    "street_snaps",
    "street_snap_images",
    "brands",
    "brand_aliases",
]


_FUNCTIONS = [
    "public_brands_refresh(bigint[])",
    "public_runways_refresh(bigint[])",
    "public_streets_refresh(bigint[])",
    "public_brand_columns_refresh(bigint[])",
    "public_brand_runways_changed()",
    "public_brand_runway_images_changed()",
    "public_street_snaps_changed()",
    "public_street_snap_images_changed()",
    "public_brands_changed()",
    "public_brand_aliases_changed()",
    "public_rows_truncated()",
]


def _trigger_names() -> list[tuple[str, str]]:
    names = []
    for kind in KINDS:
        for table in (kind.table, kind.images):
            names += [
                (f"{table}_public_{event}", table) for event in ("insert", "update", "delete")
            ]
    names.append(("brands_public_update", "brands"))
    names += [
        (f"brand_aliases_public_{e}", "brand_aliases") for e in ("insert", "update", "delete")
    ]
    return names


def postgresql_drop_triggers() -> list[str]:
    truncates = [(f"{table}_public_truncate", table) for table in _TRUNCATED]
    return [
        f"DROP TRIGGER IF EXISTS {name} ON {table}"
        for name, table in [*_trigger_names(), *truncates]
    ] + [f"DROP FUNCTION IF EXISTS {function}" for function in _FUNCTIONS]


# --- SQLite: row-level triggers ----------------------------------------------------------------


def _sqlite_trigger(name: str, event: str, table: str, statements: list[str]) -> str:
    body = "\n".join(f"    {statement};" for statement in statements)
    return f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW BEGIN\n{body}\nEND"


def sqlite_triggers() -> list[str]:
    vendor = "sqlite"
    statements = []
    refs = {"insert": ["NEW"], "delete": ["OLD"], "update": ["OLD", "NEW"]}
    for kind in KINDS:
        for event, rows in refs.items():
            ids = ", ".join(f"{row}.id" for row in rows)
            body = record_refresh(kind, vendor, ids)
            if kind.runway:
                body += brand_refresh(vendor, ", ".join(f"{row}.brand_id" for row in rows))
            statements.append(
                _sqlite_trigger(f"{kind.table}_public_{event}", event.upper(), kind.table, body)
            )
            ids = ", ".join(f"{row}.{kind.fk}" for row in rows)
            body = record_refresh(kind, vendor, ids)
            if kind.runway:
                body += brand_refresh(
                    vendor, f"SELECT brand_id FROM brand_runways WHERE id IN ({ids})"
                )
            when = event.upper()
            if event == "update":  # not for what no public row shows
                when = f"UPDATE OF {', '.join(image_shown_columns(kind))}"
            statements.append(
                _sqlite_trigger(f"{kind.images}_public_{event}", when, kind.images, body)
            )
    statements.append(
        _sqlite_trigger(
            "brands_public_update",
            "UPDATE",
            "brands",
            [*brand_columns_refresh("NEW.id"), *brand_refresh(vendor, "NEW.id")],
        )
    )
    for event, rows in refs.items():
        ids = ", ".join(f"{row}.brand_id" for row in rows)
        statements.append(
            _sqlite_trigger(
                f"brand_aliases_public_{event}",
                event.upper(),
                "brand_aliases",
                brand_refresh(vendor, ids),
            )
        )
    return statements


def sqlite_drop_triggers() -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {name}" for name, _ in _trigger_names()]


# --- What a migration and publicapi.apps run ---------------------------------------------------


def create_triggers(vendor: str) -> list[str]:
    return postgresql_triggers() if vendor == "postgresql" else sqlite_triggers()


def drop_triggers(vendor: str) -> list[str]:
    return postgresql_drop_triggers() if vendor == "postgresql" else sqlite_drop_triggers()


def refresh_all(vendor: str) -> list[str]:
    """Every public row made again from catalog's tables (after a migrate that ran without the
    triggers, and when the tables are first made)."""
    statements = [f"DELETE FROM {table}" for table in TABLES]
    for kind in KINDS:
        statements += record_refresh(kind, vendor, f"SELECT id FROM {kind.table}")
    return statements + brand_refresh(vendor, "SELECT id FROM brands")
