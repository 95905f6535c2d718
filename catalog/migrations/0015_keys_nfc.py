"""Key columns in NFC (docs/architecture.md, "Keys are stored in one normal form").

catalog.keys now puts every key in Unicode NFC, so "São Paulo" sent with a precomposed "ã" and
with an "a" and a combining tilde is one key. This migration puts the key columns stored
before that in NFC too: brand slugs and aliases (brand resolution), runways' season_code,
collection_type, source and source_url, street snaps' city, title_key, source and source_url.
Display text (titles, names) keeps its spelling. Rows already in NFC, which is every row a
crawler sent in plain ASCII, are not touched.

Two rows that spelt one key two ways before hold the same key once normalised, and a unique
constraint forbids that (two live albums with one entity key, two rows with one source
article, two brands with one slug). Nothing is deleted, hidden or unpublished for it: a row
already in NFC keeps its key, and otherwise the row with the lower id takes it; the other
row keeps the columns of that key as stored (the rest of it is normalised) and the migration
prints both. No writer produces the stored spelling any more, so no crawl reaches that row
again: it is a duplicate for an editor to decide on (reject or take down one of the two; an
edit of its key fields is refused while the other holds the key). docs/operations.md,
Upgrades.

Not reversed: NFC text reads the same, and the code before this release reads it as it reads
anything a crawler sent composed.
"""

import sys
import unicodedata

from django.db import migrations
from django.db.models import Value
from django.db.models.functions import Lower

NAME = "catalog.0015_keys_nfc"


def _nfc(value):
    return unicodedata.normalize("NFC", value)


def _normal(value):
    # Plain ASCII is always NFC: most rows are, and skip the call.
    return value if value.isascii() else _nfc(value)


class Run:
    def __init__(self):
        self.changed = {}  # "table.column": rows changed
        self.kept = []  # lines naming the rows that kept a key as stored

    def lines(self):
        if self.changed:
            counts = ", ".join(f"{name} {n}" for name, n in sorted(self.changed.items()))
            yield f"{NAME}: put key values in NFC: {counts}."
        for line in self.kept:
            yield f"{NAME}: {line}"
        if self.kept:
            yield (
                f"{NAME}: {len(self.kept)} row(s) kept a key as stored, because another row "
                "holds it in NFC: two spellings of one album, article or brand, for an editor "
                "to decide on (docs/operations.md, Upgrades)."
            )


def _normalise(run, model, table, groups, extra=()):
    """Put each group of key columns of every row of `model` in NFC.

    `groups` maps a tuple of columns to a function of (row, its new values) that returns the
    rows holding the key those values would give it (a queryset), or None where no unique
    constraint covers the row. A group whose key is held elsewhere keeps its stored values.
    """
    columns = [column for group in groups for column in group]
    candidates = [
        row
        for row in model.objects.order_by("pk").values("pk", *columns, *extra).iterator()
        if any(_normal(row[column]) != row[column] for column in columns)
    ]
    for row in candidates:
        for group, holders in groups.items():
            new = {column: _nfc(row[column]) for column in group}
            if all(new[column] == row[column] for column in group):
                continue
            held = holders(row, new)
            holder = (
                None
                if held is None
                else held.exclude(pk=row["pk"]).values_list("pk", flat=True).first()
            )
            if holder is not None:
                stored = ", ".join(f"{column} {ascii(row[column])}" for column in group)
                run.kept.append(
                    f"{table} #{row['pk']} keeps {stored} as stored: {table} #{holder} holds "
                    "that key in NFC."
                )
                continue
            model.objects.filter(pk=row["pk"]).update(**new)
            for column in group:
                if new[column] != row[column]:
                    name = f"{table}.{column}"
                    run.changed[name] = run.changed.get(name, 0) + 1


def _source_holders(model):
    # The source key covers every row, deleted ones too, whose source_url is not ''.
    def holders(row, new):
        if not new["source_url"]:
            return None
        return model.objects.filter(source=new["source"], source_url=new["source_url"])

    return holders


def normalise_keys(apps, schema_editor):
    Brand = apps.get_model("catalog", "Brand")
    BrandAlias = apps.get_model("catalog", "BrandAlias")
    Runway = apps.get_model("catalog", "Runway")
    StreetSnap = apps.get_model("catalog", "StreetSnap")
    run = Run()

    _normalise(run, Brand, "brands", {("slug",): lambda row, new: Brand.objects.filter(**new)})
    _normalise(
        run,
        BrandAlias,
        "brand_aliases",
        {
            # The alias's constraint is on Lower(alias): compared the way the database does.
            ("alias",): lambda row, new: BrandAlias.objects.annotate(
                alias_lower=Lower("alias")
            ).filter(alias_lower=Lower(Value(new["alias"])))
        },
    )
    _normalise(
        run,
        Runway,
        "brand_runways",
        {
            # The entity key covers live rows only.
            ("season_code", "collection_type"): lambda row, new: (
                None
                if row["deleted_at"] is not None
                else Runway.objects.filter(
                    deleted_at__isnull=True, brand_id=row["brand_id"], **new
                )
            ),
            ("source", "source_url"): _source_holders(Runway),
        },
        extra=("deleted_at", "brand_id"),
    )
    _normalise(
        run,
        StreetSnap,
        "street_snaps",
        {
            ("city", "title_key"): lambda row, new: (
                None
                if row["deleted_at"] is not None
                else StreetSnap.objects.filter(
                    deleted_at__isnull=True, year=row["year"], month=row["month"], **new
                )
            ),
            ("source", "source_url"): _source_holders(StreetSnap),
        },
        extra=("deleted_at", "year", "month"),
    )
    lines = list(run.lines())
    if lines:  # on lines of their own, after migrate's "Applying ..."
        sys.stdout.write("\n" + "\n".join(lines) + "\n")


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0014_public_rows"),
    ]

    operations = [
        migrations.RunPython(normalise_keys, migrations.RunPython.noop),
    ]
