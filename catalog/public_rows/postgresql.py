"""PostgreSQL: functions and statement-level triggers with transition tables, so a bulk write
refreshes each record once."""

from __future__ import annotations

from catalog.public_rows.refresh import (
    KINDS,
    brand_columns_refresh,
    brand_refresh,
    image_shown_columns,
    record_refresh,
    refresh_all,
    trigger_names,
)

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


def postgresql_drop_triggers() -> list[str]:
    truncates = [(f"{table}_public_truncate", table) for table in _TRUNCATED]
    return [
        f"DROP TRIGGER IF EXISTS {name} ON {table}"
        for name, table in [*trigger_names(), *truncates]
    ] + [f"DROP FUNCTION IF EXISTS {function}" for function in _FUNCTIONS]
