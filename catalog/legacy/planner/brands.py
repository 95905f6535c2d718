"""Planning the legacy brands: each matched to a catalog brand by its slug in ingest's form, or
created; two legacy spellings of one slug stop the run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from catalog.keys import normalize_brand_slug
from catalog.legacy.keys import MAX_LENGTH
from catalog.legacy.plan import (
    CREATED,
    EARLIER,
    MATCHED,
    BrandKey,
    BrandPlan,
    CatalogState,
    Entry,
    ImportPlan,
)
from catalog.legacy.rows import (
    BRANDS,
    LegacyBrand,
)


def plan_brands(
    plan: ImportPlan, brands: Iterable[LegacyBrand], catalog: CatalogState
) -> tuple[dict[int, BrandKey], dict[BrandKey, str]]:
    earlier = catalog.earlier_in(BRANDS)
    # Slugs compare in the form ingest looks brands up in (lower case), on both sides. Among
    # catalog brands of one folded slug (the catalog's unique index is case-sensitive), the one
    # stored in that form is the brand ingest finds; otherwise the oldest.
    in_catalog: dict[str, int] = {}
    for slug, pk in sorted(
        catalog.brands_by_slug.items(),
        key=lambda item: (normalize_brand_slug(item[0]) != item[0], item[1]),
    ):
        in_catalog.setdefault(normalize_brand_slug(slug), pk)
    rows = list(brands)
    # Folded slug -> its legacy spellings and their brands. One spelling twice is one brand
    # (a live row and its deleted copy); two spellings the old archive told apart would be
    # merged into one catalog brand, which only the operator can decide.
    spellings: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        spellings[normalize_brand_slug(row.slug)][row.slug].append(row.id)
    keys: dict[int, BrandKey] = {}
    slugs: dict[BrandKey, str] = {}
    created: set[str] = set()
    # Live brands first, so a deleted duplicate slug never names the brand this run creates.
    key: BrandKey
    for row in sorted(rows, key=lambda b: (b.deleted, b.id)):
        given, slug = row.slug, normalize_brand_slug(row.slug)
        remembered = earlier.get(row.id)
        if row.id in earlier and remembered is not None:
            outcome, key = EARLIER, remembered
        elif row.id in earlier:
            outcome, key = EARLIER, in_catalog.get(slug, ("new", slug))
        elif slug in in_catalog:
            outcome, key = MATCHED, in_catalog[slug]
        elif slug in created:
            outcome, key = MATCHED, ("new", slug)
        else:
            outcome, key = CREATED, ("new", slug)
            created.add(slug)
        if outcome != EARLIER and (reasons := _brand_conflicts(given, slug, spellings[slug])):
            # Planned as usual so the tallies add up; the run stops on it.
            plan.brand_conflicts.append(Entry(BRANDS, row.id, "", f"brand {given!r}", reasons))
        if outcome == CREATED and slug != given:
            plan.normalised["slug"] += 1
        plan.brands.append(BrandPlan(replace(row, slug=slug), outcome, key))
        plan.brand_tally[outcome] += 1
        keys[row.id] = key
        slugs.setdefault(key, slug)
    plan.brand_conflicts.sort(key=lambda e: e.id)
    return keys, slugs


def _brand_conflicts(given: str, slug: str, spellings: Mapping[str, list[int]]) -> str:
    reasons = []
    if len(spellings) > 1:
        shown = ", ".join(
            f"#{brand_id} {spelling!r}"
            for brand_id, spelling in sorted(
                (brand_id, spelling) for spelling, ids in spellings.items() for brand_id in ids
            )
        )
        reasons.append(
            f"the slugs of brands {shown} are one slug once lower-cased ({slug!r}): rename"
            " all but one in the legacy copy, or merge them there"
        )
    if len(slug) > MAX_LENGTH["slug"]:
        reasons.append(f"slug is longer than {MAX_LENGTH['slug']} characters once lower-cased")
    return "; ".join(reasons)
