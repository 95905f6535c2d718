"""Pure key derivations shared by ingest, review and the legacy import (no Django import)."""


def fold_title(title: str | None) -> str:
    """The street entity key's title part: whitespace folded, case kept, NULL as ''.

    Crawlers and the legacy archive send the same album with stray spaces, tabs or line breaks
    in the title; folding them here keeps one album one row. Wording differences are different
    albums on purpose: they cannot be told apart mechanically.
    """
    return " ".join((title or "").split())
