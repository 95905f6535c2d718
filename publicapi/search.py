"""`?q=` on the public lists: every word of the query, in any order, case- and
accent-insensitive, the last word as a prefix ("acme cout" finds Acme couture); ranked.

A query is split into words (letters and digits; anything else separates them, as the
indexed text is split: catalog migration 0007_search). A record matches when each word is
in one of its fields (a runway's brand names and aliases count as a field). Its rank is the
sum, over the words, of the weight of the best field the word is in: 4 for a title, a brand
name or alias, or a city; 2 for season, season code, collection type or year; 1 for the
description. Equal ranks go newest published first.

PostgreSQL: the record views' `search` column (a generated tsvector with a GIN index) and
`public_brand_names.search`; one extra query finds the brands each word names. SQLite has no
tsvector: the same rule, in Python, is a SQL function the query filters and orders by
(SEARCH_RANK), which is fine for the embedded mode's small archives and gives the same
results on the test corpus.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from django.db import connection
from django.db.models import BooleanField, F, Func, IntegerField, Q, Value
from django.db.models.expressions import RawSQL

from publicapi.models import public_connection

MAX_QUERY_LENGTH = 200
# A search ranks at most this many matches, the newest: a broad query ("couture", thousands
# of shows) is ranked among its newest matches, not all of them (docs/api.md). More words or
# a filter narrow the matches and so reach older ones.
MAX_RANKED = 1000
CONFIG = "archive_search"
WEIGHTS = {"A": 4, "B": 2, "C": 1}
RANK = "search_rank"
# Newest publication first; a record without a publication date (possible only for imported
# legacy rows) goes last rather than first. The id breaks ties so pages never overlap.
NEWEST_FIRST = [F("published_at").desc(nulls_last=True), F("id").desc()]

_WORD = re.compile(r"[^\W_]+")
# Letters unaccent folds that Unicode decomposition leaves alone.
_FOLD = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th"})


@dataclass(frozen=True)
class Word:
    text: str
    prefix: bool

    def tsquery(self, weight: str = "") -> str:
        # Letters and digits only, so nothing in it is tsquery syntax.
        return (
            f"{self.text}:{'*' if self.prefix else ''}{weight}"
            if self.prefix or weight
            else self.text
        )

    def matches(self, token: str) -> bool:
        folded = fold(self.text)
        return token.startswith(folded) if self.prefix else token == folded


def parse(q: str) -> list[Word]:
    """The words of a query, the last one a prefix. No words (an empty or all-punctuation
    query) means no filter."""
    words = _WORD.findall(q)
    return [Word(text, prefix=n == len(words) - 1) for n, text in enumerate(words)]


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(_FOLD))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(*texts: str) -> set[str]:
    return {token for text in texts for token in _WORD.findall(fold(text))}


# --- PostgreSQL -----------------------------------------------------------------------------


def _matches(query: str) -> RawSQL:
    # `search` unqualified: it must name the column of whichever alias the query gives the
    # view (a subquery's is U0), and the public views are never joined to one another here.
    # Our constant; the words are a parameter.
    return RawSQL(  # noqa: S611
        f"search @@ to_tsquery('{CONFIG}', %s)", [query], output_field=BooleanField()
    )


def _brands_named(words: list[Word]) -> list[set[int]]:
    """For each word, the brands (with a public runway) one of whose names holds it."""
    found: list[set[int]] = [set() for _ in words]
    columns = ", ".join(f"search @@ to_tsquery('{CONFIG}', %s)" for _ in words)
    with public_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT brand_id, {columns} FROM public_brand_names "  # noqa: S608 - ours
            f"WHERE search @@ to_tsquery('{CONFIG}', %s)",
            [*(w.tsquery() for w in words), " | ".join(w.tsquery() for w in words)],
        )
        for brand_id, *hits in cursor.fetchall():
            for n, hit in enumerate(hits):
                if hit:
                    found[n].add(brand_id)
    return found


def _id_array(ids) -> str:
    """Ids as one array literal, a single text parameter (`%s::bigint[]`): psycopg adapts a
    list of a thousand ints element by element, and Django an `__in` one parameter each."""
    return "{" + ",".join(map(str, ids)) + "}"


def _brand_in(named: set[int]) -> RawSQL:
    # `brand_id` unqualified, as `search` in _matches.
    return RawSQL(  # noqa: S611 - the ids are a parameter
        "brand_id = ANY(%s::bigint[])", [_id_array(sorted(named))], output_field=BooleanField()
    )


def _search_postgres(queryset, words: list[Word], brands: list[set[int]] | None):
    rank_sql, rank_params = [], []
    alone = []  # words no brand name holds: one tsquery for all of them
    for n, word in enumerate(words):
        named = brands[n] if brands else set()
        if named:
            queryset = queryset.filter(Q(_matches(word.tsquery())) | Q(_brand_in(named)))
        else:
            alone.append(word)
        # The best field's weight. Every row here holds every word, so "else" is C.
        brand_case = (
            f"WHEN brand_id IN ({', '.join(map(str, sorted(named)))}) THEN 4 " if named else ""
        )
        rank_sql.append(
            f"CASE {brand_case}"
            f"WHEN search @@ to_tsquery('{CONFIG}', %s) THEN {WEIGHTS['A']} "
            f"WHEN search @@ to_tsquery('{CONFIG}', %s) THEN {WEIGHTS['B']} "
            f"ELSE {WEIGHTS['C']} END"
        )
        rank_params += [word.tsquery("A"), word.tsquery("B")]
    if alone:
        queryset = queryset.filter(_matches(" & ".join(w.tsquery() for w in alone)))
    rank = RawSQL(" + ".join(rank_sql), rank_params, output_field=IntegerField())  # noqa: S611
    return queryset.alias(**{RANK: rank})


# --- SQLite (and any database without tsvector) ---------------------------------------------
# The same rule as a SQL function, SEARCH_RANK(q, brands, brand_id, weight, text, ...,
# weight, text, ...): the rank of a row whose fields of each weight read so, NULL for no
# match; `brands` names, per word, the brands one of whose names holds it ("1 4;;7").
# Registered on every SQLite connection (publicapi/apps.py). The database filters and orders
# by it, so a search is one query whatever the number of matches (a list of matching ids
# would outgrow SQLite's limit on query parameters on a large archive). Its arguments are
# column expressions, which Django qualifies with whatever alias the query gives the view.

SEARCH_RANK = "archive_search_rank"


def rank_row(q: str, brands: str, brand_id: int | None, *texts) -> int | None:
    """SEARCH_RANK: `texts` are a weight ("A", "B", "C") followed by that weight's texts."""
    words = parse(q)
    if not words:
        return None
    fields: dict[str, set[str]] = {}
    weight = "C"
    for text in texts:
        if text in WEIGHTS:
            weight = text
            fields.setdefault(weight, set())
        elif text is not None:
            fields[weight] |= tokens(str(text))
    named = [{int(b) for b in part.split()} for part in brands.split(";")] if brands else []
    total = 0
    for n, word in enumerate(words):
        if n < len(named) and brand_id in named[n]:
            total += WEIGHTS["A"]  # a brand name or alias: the best field there is
            continue
        best = _best(word, fields)
        if best is None:
            return None
        total += best
    return total


def register_sqlite_functions(sender, connection, **kwargs) -> None:
    """connection_created receiver: SEARCH_RANK on each new SQLite connection."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(SEARCH_RANK, -1, rank_row, deterministic=True)


def _best(word: Word, fields: dict[str, set[str]]) -> int | None:
    return max(
        (WEIGHTS[weight] for weight, held in fields.items() if any(map(word.matches, held))),
        default=None,
    )


def _brands_by_name(words: list[Word]) -> str:
    """For each word, the brands (with a public runway) one of whose names holds it."""
    found: list[set[int]] = [set() for _ in words]
    with public_connection().cursor() as cursor:
        cursor.execute("SELECT brand_id, name FROM public_brand_names")
        for brand_id, name in cursor.fetchall():
            held = tokens(name)
            for n, word in enumerate(words):
                if any(map(word.matches, held)):
                    found[n].add(brand_id)
    return ";".join(" ".join(map(str, sorted(ids))) for ids in found)


def _ranked_in_sql(queryset, q: str, brands: str, brand_id, **weighted: list[str]):
    arguments: list = [Value(q), Value(brands), brand_id]
    for weight, columns in weighted.items():
        arguments += [Value(weight), *(F(column) for column in columns)]
    rank = Func(*arguments, function=SEARCH_RANK, output_field=IntegerField())
    return queryset.alias(**{RANK: rank}).filter(**{f"{RANK}__isnull": False})


# --- The two lists --------------------------------------------------------------------------


def runways(queryset, q: str):
    """Runways matching `q`, with their rank as the alias `search_rank` (unordered)."""
    words = parse(q)
    if not words:
        return queryset
    if connection.vendor == "postgresql":
        return _search_postgres(queryset, words, _brands_named(words))
    return _ranked_in_sql(
        queryset,
        q,
        _brands_by_name(words),
        F("brand_id"),
        A=["title"],
        B=["season_code", "season", "collection_type", "year"],
        C=["description"],
    )


def street_snaps(queryset, q: str):
    """Street-style albums matching `q`, with their rank as the alias `search_rank`."""
    words = parse(q)
    if not words:
        return queryset
    if connection.vendor == "postgresql":
        return _search_postgres(queryset, words, None)
    return _ranked_in_sql(queryset, q, "", Value(None), A=["city", "title"], C=["description"])


def by_relevance(queryset, matched):
    """`queryset`'s rows among the MAX_RANKED newest of `matched` (a search of it), by
    relevance, then newest first. The rank is computed for those rows only.

    On PostgreSQL the candidates' ids are read first, in one query, and given to the page and
    the count as one array: as a subquery, each of them would find the matches again."""
    candidates = matched.order_by(*NEWEST_FIRST).values_list("pk", flat=True)[:MAX_RANKED]
    if connection.vendor == "postgresql":
        ids = _id_array(candidates)
        # The ids are a parameter.
        queryset = queryset.filter(
            RawSQL("id = ANY(%s::bigint[])", [ids], output_field=BooleanField())  # noqa: S611
        )
    else:
        queryset = queryset.filter(pk__in=candidates)
    rank = matched.query.annotations[RANK]
    return queryset.alias(**{RANK: rank}).order_by(F(RANK).desc(), *NEWEST_FIRST)
