"""SQLite (the embedded mode, one writer): row-level triggers with the same statements."""

from __future__ import annotations

from catalog.public_rows.refresh import (
    KINDS,
    brand_columns_refresh,
    brand_refresh,
    image_shown_columns,
    record_refresh,
    trigger_names,
)

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
    return [f"DROP TRIGGER IF EXISTS {name}" for name, _ in trigger_names()]
