"""The report of one ingest job (pure: no Django import).

Every image of the album that reaches the download step ends in exactly one of three buckets,
so ``received = stored + refused + repeated`` holds by construction:

- stored: downloaded, decoded, hashed and stored (for a succeeded job, one image row each);
- refused: not downloaded or not an acceptable image (one issue each, with the reason);
- repeated: the same bytes as an earlier image of the same album (stored once).

``duplicates`` counts stored images flagged as near-duplicates, so it never exceeds ``stored``.
Issues are capped so a 500-image album of broken links cannot bloat the job row;
``issues_truncated`` says when some were left out.
"""

from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_ISSUES = 100


def sent_image_name(index: int) -> str:
    """How every ingest message names the image the crawler sent at `index`: as the album's
    JSON does, `images[5]`, counted from 0 like the report's `index`, a street image's `parent`
    and the keys of a 400's per-image errors (docs/crawlers.md, "Numbering"). Not
    review.naming.image_name, which names a stored image row for editors."""
    return f"images[{index}]"


# The report's counts, in the order docs/crawlers.md documents them and the API and admin show them.
COUNT_NAMES = ("received", "stored", "refused", "repeated", "duplicates")


@dataclass
class Report:
    max_issues: int = DEFAULT_MAX_ISSUES
    # Images in the album as sent; a job that ends before downloading (the record exists, an
    # unknown brand) has this and all counts at 0.
    album_images: int = 0
    received: int = 0
    stored: int = 0
    refused: int = 0
    repeated: int = 0
    duplicates: int = 0
    issues: list[dict[str, Any]] = field(default_factory=list)
    issues_truncated: bool = False

    def image_stored(self) -> None:
        self.received += 1
        self.stored += 1

    def image_refused(self, *, index: int, url: str, reason: str) -> None:
        self.received += 1
        self.refused += 1
        self.issue(index=index, url=url, reason=reason)

    def image_repeated(self, *, index: int, url: str, first_index: int) -> None:
        self.received += 1
        self.repeated += 1
        first = sent_image_name(first_index)
        self.issue(index=index, url=url, reason=f"same bytes as {first}; stored once")

    def image_duplicate(self, *, index: int, url: str, reason: str) -> None:
        if self.duplicates >= self.stored:
            raise ValueError("only a stored image can be a near-duplicate")
        self.duplicates += 1
        self.issue(index=index, url=url, reason=reason)

    def issue(self, *, index: int, url: str, reason: str) -> None:
        """A note about one image that does not change the counts (or comes with a count)."""
        if len(self.issues) < self.max_issues:
            self.issues.append({"index": index, "url": url, "reason": reason})
        else:
            self.issues_truncated = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "album_images": self.album_images,
            "counts": {name: getattr(self, name) for name in COUNT_NAMES},
            "issues": sorted(self.issues, key=lambda issue: issue["index"]),
            "issues_truncated": self.issues_truncated,
        }
