"""The legacy import's audit: the checks that stop a run or roll it back.

The checks on the plan (`plan_checks`, pure) run before anything is written: every legacy row
is accounted for, and nothing the plan holds would break the catalog. The database checks
(`database_checks`) run inside the import's transaction before it commits. They read the
database, not the plan: what the writer really inserted is joined through the legacy id map to
the catalog rows, so a lost row, a wrong status, a dangling reference or a bad cover fails the
run (and rolls it back) instead of surfacing later. Foreign keys alone would not do: on
PostgreSQL Django makes them DEFERRABLE INITIALLY DEFERRED, so a dangling id would only fail
the commit, with no account of what went wrong.

`floor` is the highest legacy_id_map id before this run: the rows above it are this run's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import batched
from typing import Any

from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from catalog.legacy.keys import catalog_entity_key
from catalog.legacy.plan import (
    CREATED,
    EARLIER,
    IMPORTED,
    INSERTED,
    MATCHED,
    SKIPPED,
    SUPERSEDED,
    Check,
    Entry,
    ImportPlan,
)
from catalog.legacy.rows import (
    BRANDS,
    KINDS,
    RUNWAY,
    TABLE_BY_IMAGE_TABLE,
    TABLE_BY_NAME,
    TABLES,
    tables_of,
)
from catalog.models import (
    IMAGE_MODELS,
    RECORD_MODELS,
    Brand,
    LegacyIdMap,
    Record,
    Runway,
    RunwayImage,
    StreetSnap,
    StreetSnapImage,
)

# --- Checks on the plan ------------------------------------------------------------------


def plan_checks(plan: ImportPlan) -> list[Check]:
    def unbalanced(tables: Iterable[str]) -> list[str]:
        wanted = set(tables)
        return [
            f"{table} {status}: {t.legacy} legacy rows, {t.accounted} accounted for"
            for (table, status), t in sorted(plan.tallies.items())
            if table in wanted and not t.balanced
        ]

    brands = plan.brand_tally
    brand_sum = brands[EARLIER] + brands[CREATED] + brands[MATCHED]
    records = unbalanced(TABLE_BY_NAME)
    images = unbalanced(TABLE_BY_IMAGE_TABLE)
    return [
        Check(
            "brands: legacy rows = earlier runs + created + matched",
            brands["legacy"] == brand_sum,
            "" if brands["legacy"] == brand_sum else f"{brands['legacy']} != {brand_sum}",
        ),
        Check(
            "records: legacy rows = earlier runs + imported + superseded + skipped, "
            "per kind and status",
            not records,
            "; ".join(records),
        ),
        Check(
            "images: legacy rows = earlier runs + imported + superseded + skipped, "
            "per kind and status",
            not images,
            "; ".join(images),
        ),
        Check(
            "every approved draft has a published counterpart",
            not plan.unmatched_approved,
            _first(plan.unmatched_approved),
        ),
        Check(
            "every row fits the catalog's columns",
            not plan.invalid,
            _first(plan.invalid),
        ),
        Check(
            "brand slugs fit the catalog once lower-cased",
            not plan.brand_conflicts,
            _first(plan.brand_conflicts),
        ),
        Check(
            "no legacy published row is held back by an unpublished catalog record",
            not plan.held_by_unpublished,
            _first(plan.held_by_unpublished),
        ),
        Check(
            "no dangling parent or dup_of, no detail of a detail (in the plan)",
            not plan.problems,
            "; ".join(plan.problems[:5]),
        ),
    ]


def _first(entries: list[Entry]) -> str:
    if not entries:
        return ""
    shown = ", ".join(f"{e.table} #{e.id}" for e in entries[:5])
    more = f" and {len(entries) - 5} more" if len(entries) > 5 else ""
    return f"{len(entries)}: {shown}{more}"


# --- Checks on the written rows -----------------------------------------------------------

# The checks' names, in the order they run. A dry run writes nothing, so it cannot make these:
# its report names them as not run.
BRANDS_CHECK = "brands: every legacy brand of this run maps to a catalog brand (database)"
CONSERVATION_CHECK = (
    "{what}: legacy rows = earlier runs + imported + superseded + skipped, per kind and status"
    " (database)"
)
REFERENCES_CHECK = "no dangling parent or dup_of, no detail of a detail (database)"
COVERS_CHECK = "covers are live images of their album; image_count = live images (database)"
APPROVED_CHECK = "every approved draft maps to a published record of its entity key (database)"
WRITER_CHECK = "the writer mapped every reference the plan resolved"
DATABASE_CHECKS = (
    BRANDS_CHECK,
    CONSERVATION_CHECK.format(what="records"),
    CONSERVATION_CHECK.format(what="images"),
    REFERENCES_CHECK,
    COVERS_CHECK,
    APPROVED_CHECK,
    WRITER_CHECK,
)


def database_checks(
    plan: ImportPlan, floor: int, writer_problems: Iterable[str] = ()
) -> list[Check]:
    problems = list(writer_problems)
    _analyze()
    return [
        _brands_check(plan, floor),
        _conservation_check(plan, floor, images=False),
        _conservation_check(plan, floor, images=True),
        _references_check(floor),
        _covers_check(floor),
        _approved_check(plan, floor),
        Check(
            WRITER_CHECK,
            not problems,
            "; ".join(problems[:5]),
        ),
    ]


def _analyze() -> None:
    # The import has just bulk-loaded these tables in its own transaction: without fresh
    # statistics PostgreSQL plans the checks' joins as if the tables were still small (nested
    # loops over hundreds of thousands of rows). ANALYZE sees the transaction's own rows.
    if connection.vendor != "postgresql":
        return
    models = (Brand, Runway, StreetSnap, RunwayImage, StreetSnapImage, LegacyIdMap)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {', '.join(m._meta.db_table for m in models)}")


def _this_run(tables: Iterable[str], floor: int, outcomes: Iterable[str] = INSERTED) -> QuerySet:
    return LegacyIdMap.objects.filter(
        legacy_table__in=list(tables), id__gt=floor, outcome__in=list(outcomes)
    )


def _brands_check(plan: ImportPlan, floor: int) -> Check:
    expected = plan.brand_tally[CREATED] + plan.brand_tally[MATCHED]
    found = (
        _this_run([BRANDS], floor, outcomes=[CREATED, MATCHED])
        .filter(Exists(Brand.objects.filter(pk=OuterRef("new_id"))))
        .count()
    )
    return Check(
        BRANDS_CHECK,
        found == expected,
        "" if found == expected else f"{found} mapped, {expected} expected",
    )


def _inserted_by_status(table: str, floor: int, images: bool) -> Counter:
    """(outcome, catalog status, deleted) -> catalog rows this run inserted from `table`."""
    kind = (TABLE_BY_IMAGE_TABLE if images else TABLE_BY_NAME)[table].kind
    model = IMAGE_MODELS[kind] if images else RECORD_MODELS[kind]
    status = f"{IMAGE_MODELS[kind].record_field}__status" if images else "status"
    found: Counter = Counter()
    for outcome in INSERTED:
        rows = (
            model.objects.filter(pk__in=_this_run([table], floor, [outcome]).values("new_id"))
            .annotate(
                row_status=F(status),
                deleted=ExpressionWrapper(Q(deleted_at__isnull=False), BooleanField()),
            )
            .values("row_status", "deleted")
            .annotate(n=Count("id"))
        )
        for row in rows:
            found[(outcome, row["row_status"], bool(row["deleted"]))] += row["n"]
    return found


def _conservation_check(plan: ImportPlan, floor: int, images: bool) -> Check:
    failures = []
    for table in (t.image_table if images else t.name for t in TABLES):
        found = _inserted_by_status(table, floor, images)
        expected = Counter(
            {(o, s, d): n for (t, o, s, d), n in plan.expected.items() if t == table}
        )
        if found != expected:
            failures.append(f"{table}: inserted {dict(found)}, planned {dict(expected)}")
        outcomes = Counter(
            dict(
                LegacyIdMap.objects.filter(legacy_table=table, id__gt=floor)
                .values_list("outcome")
                .annotate(n=Count("id"))
            )
        )
        mapped = outcomes[IMPORTED] + outcomes[SUPERSEDED]
        if mapped != found.total():
            failures.append(f"{table}: {mapped} inserted in the id map, {found.total()} in catalog")
        tallies = {s: t for (name, s), t in plan.tallies.items() if name == table}
        skipped = sum(t.skipped for t in tallies.values())
        if outcomes[SKIPPED] != skipped:
            failures.append(
                f"{table}: {outcomes[SKIPPED]} skipped in the id map, {skipped} planned"
            )
        for status, tally in sorted(tallies.items()):
            imported = sum(n for (o, s, _), n in found.items() if o == IMPORTED and s == status)
            superseded = sum(n for (o, s, _), n in found.items() if o == SUPERSEDED and s == status)
            if tally.earlier + imported + superseded + tally.skipped != tally.legacy:
                failures.append(
                    f"{table} {status}: {tally.legacy} legacy rows != {tally.earlier} earlier"
                    f" + {imported} imported + {superseded} superseded + {tally.skipped} skipped"
                )
    return Check(
        CONSERVATION_CHECK.format(what="images" if images else "records"),
        not failures,
        "; ".join(failures[:5]),
    )


def _examples(queryset: QuerySet) -> str:
    ids = list(queryset.order_by("pk").values_list("pk", flat=True)[:5])
    return ", ".join(f"#{pk}" for pk in ids)


def _references_check(floor: int) -> Check:
    failures = []
    for kind in KINDS:
        # Either image model: Any, as the stubs check a lookup against both kinds' model.
        model: Any = IMAGE_MODELS[kind]
        table = model._meta.db_table
        this_run = _this_run((t.image_table for t in TABLES if t.kind == kind), floor)
        images = model.objects.filter(pk__in=this_run.values("new_id"))
        dangling = images.filter(dup_of_id__isnull=False).exclude(
            Exists(model.objects.filter(pk=OuterRef("dup_of_id")))
        )
        if dangling.exists():
            failures.append(f"{table} with a dangling dup_of: {_examples(dangling)}")
        if not model.has_details:
            continue
        # A parent must be a main image of the same album, and live while its detail is.
        album = f"{model.record_field}_id"
        usable_parent = model.objects.filter(
            pk=OuterRef("parent_id"), **{album: OuterRef(album)}, is_detail=False
        )
        bad = images.filter(parent_id__isnull=False).exclude(Exists(usable_parent))
        bad = bad | images.filter(deleted_at__isnull=True, parent__deleted_at__isnull=False)
        if bad.exists():
            failures.append(
                f"{table} details whose parent is missing, in another album, a detail itself"
                f" or deleted: {_examples(bad)}"
            )
    return Check(
        REFERENCES_CHECK,
        not failures,
        "; ".join(failures),
    )


def _covers_check(floor: int) -> Check:
    failures = []
    for kind in KINDS:
        model = RECORD_MODELS[kind]
        image_model = model.image_model()
        fk = image_model.record_field
        this_run = _this_run((t.name for t in TABLES if t.kind == kind), floor)
        records = model.objects.filter(pk__in=this_run.values("new_id"))
        live_cover = image_model.objects.filter(
            pk=OuterRef("cover_id"), **{fk: OuterRef("pk")}, deleted_at__isnull=True
        )
        bad_cover = records.filter(cover_id__isnull=False).exclude(Exists(live_cover))
        if bad_cover.exists():
            failures.append(
                f"{model._meta.db_table} whose cover is not a live image of theirs:"
                f" {_examples(bad_cover)}"
            )
        live_images = (
            image_model.objects.filter(**{fk: OuterRef("pk")}, deleted_at__isnull=True)
            .order_by()
            .values(fk)
            .annotate(n=Count("pk"))
            .values("n")
        )
        miscounted = records.annotate(
            live=Coalesce(Subquery(live_images, output_field=IntegerField()), Value(0))
        ).exclude(image_count=F("live"))
        if miscounted.exists():
            failures.append(
                f"{model._meta.db_table} whose image_count is not its live images:"
                f" {_examples(miscounted)}"
            )
    return Check(
        COVERS_CHECK,
        not failures,
        "; ".join(failures),
    )


def _approved_check(plan: ImportPlan, floor: int) -> Check:
    """Each approved draft maps to a published record of its own entity key (live, or
    soft-deleted: the show, taken down since).

    The draft's key is the plan's (key values in normal form), with its brand as the id map
    says this run or an earlier one mapped it; the record's key is read back in the same form.
    """
    failures = []
    brand_ids: dict[int, int | None] = {}
    for kind in KINDS:
        table = tables_of(kind)[1].name
        drafts = {
            legacy_id: rp
            for (name, legacy_id), rp in plan.records.items()
            if name == table and rp.approved and rp.outcome == SKIPPED
        }
        if not drafts:
            continue
        if kind == RUNWAY:
            brand_ids = dict(
                LegacyIdMap.objects.filter(legacy_table=BRANDS).values_list("legacy_id", "new_id")
            )
        model = RECORD_MODELS[kind]
        wrong = []
        for chunk in batched(sorted(drafts), 500):
            mapped = dict(
                _this_run([table], floor, outcomes=[SKIPPED])
                .filter(legacy_id__in=chunk)
                .values_list("legacy_id", "new_id")
            )
            published = (
                model.objects.filter(pk__in=[pk for pk in mapped.values() if pk is not None])
                .filter(status=Record.Status.PUBLISHED)
                .values_list("pk", *model.entity_key)
            )
            keys = {pk: catalog_entity_key(model.entity_key, key) for pk, *key in published}
            for legacy_id in chunk:
                row = drafts[legacy_id].row
                wanted: tuple | None
                if kind == RUNWAY:
                    wanted = (brand_ids.get(row.brand_id), row.season_code, row.collection_type)
                else:
                    wanted = drafts[legacy_id].key
                new_id = mapped.get(legacy_id)
                if new_id is None or keys.get(new_id) != wanted:
                    wrong.append(legacy_id)
        if wrong:
            shown = ", ".join(f"#{legacy_id}" for legacy_id in wrong[:5])
            failures.append(
                f"{table}: {len(wrong)} approved drafts not mapped to a published record"
                f" of their entity key ({shown})"
            )
    return Check(
        APPROVED_CHECK,
        not failures,
        "; ".join(failures),
    )
