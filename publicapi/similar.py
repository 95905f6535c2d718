""" "This look elsewhere": public images of other albums whose perceptual hash is near an image's.

Reads public_image_hashes (publicapi/sql.py), which holds only public, live images with a
hash the catalog compares, so a pending, rejected or deleted album's image or a legacy hash
(of an unknown algorithm) can never come up. The candidates come from the four 16-bit band
indexes (the scheme of ingest.hashing, restated here because publicapi imports no other app;
tests/publicapi/test_similar.py checks that the two agree): two hashes within d bits agree to
within d // 4 bits on at least one band, so probing each band with every value that close
misses none. The exact distance is then counted here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations

from publicapi.models import PUBLIC_IMAGES, public_connection

MAX_RESULTS = 24
# SQLite's name for hamming() (register_sqlite_functions); PostgreSQL has bit_count.
HAMMING = "public_hamming"
_MASK64 = (1 << 64) - 1
_BAND_BITS = 16
_BAND_MASK = (1 << _BAND_BITS) - 1
_MAX_ID = (1 << 63) - 1


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & _MASK64).bit_count()


def bands(phash: int) -> tuple[int, int, int, int]:
    """The 16-bit slices, most significant first: the views' phash_band0..3 (signed or not)."""
    u = phash & _MASK64
    return tuple((u >> shift) & _BAND_MASK for shift in (48, 32, 16, 0))  # type: ignore[return-value]


@cache
def _flip_masks(radius: int) -> tuple[int, ...]:
    masks = [0]
    for r in range(1, radius + 1):
        masks += [sum(1 << p for p in bits) for bits in combinations(range(_BAND_BITS), r)]
    return tuple(masks)


def band_probes(phash: int, max_distance: int) -> list[list[int]]:
    radius = max_distance // 4
    if not 0 <= radius <= 3:
        raise ValueError(f"max_distance {max_distance}: from 0 to 15 bits")
    masks = _flip_masks(radius)
    return [[band ^ m for m in masks] for band in bands(phash)]


@dataclass(frozen=True)
class Match:
    kind: str
    image_id: int
    record_id: int
    distance: int


def similar_images(kind: str, image_id: int, *, max_distance: int) -> list[Match] | None:
    """The nearest MAX_RESULTS matches of a public image (nearest first, then runways before
    street snaps, then by id), or None if the image is not public."""
    if not 0 < image_id <= _MAX_ID:
        return None
    images = PUBLIC_IMAGES[kind]
    record_column = f"{images.record_field}_id"  # the foreign key's column, as Django names it
    with public_connection().cursor() as cursor:
        # The image must be public; its hash may be missing or not comparable (no matches).
        cursor.execute(
            f"SELECT i.{record_column}, h.phash, h.phash_algorithm "  # noqa: S608 - ours
            f"FROM {images._meta.db_table} i "
            "LEFT JOIN public_image_hashes h ON h.kind = %s AND h.id = i.id "
            "WHERE i.id = %s",
            [kind, image_id],
        )
        row = cursor.fetchone()
        if row is None:
            return None
        record_id, phash, algorithm = row
        if phash is None:
            return []
        probes = band_probes(phash, max_distance)
        bands = " OR ".join(
            f"phash_band{n} IN ({', '.join(['%s'] * len(values))})"
            for n, values in enumerate(probes)
        )
        distance = (
            "bit_count((phash # %s)::bit(64))"
            if cursor.db.vendor == "postgresql"
            else f"{HAMMING}(phash, %s)"
        )
        # Nearest first and cut in the database: a hash that thousands of public images share
        # (a logo, a blank frame) would otherwise bring every one of them here to be sorted.
        # The album's own images are left out before the candidates are joined to their
        # records: with a million images the band probes find about a thousand candidates,
        # nearly all of them far.
        cursor.execute(
            "SELECT kind, id, record_id, distance FROM ("  # noqa: S608 - ours
            f"  SELECT kind, id, record_id, {distance} AS distance FROM public_image_hashes"
            f"  WHERE phash_algorithm = %s AND ({bands})"
            "     AND NOT (kind = %s AND record_id = %s)"
            ") near WHERE distance <= %s ORDER BY distance, kind <> 'runway', id LIMIT %s",
            [
                phash,
                algorithm,
                *(value for values in probes for value in values),
                kind,
                record_id,
                max_distance,
                MAX_RESULTS,
            ],
        )
        return [
            Match(kind=other_kind, image_id=other_id, record_id=other_record, distance=distance)
            for other_kind, other_id, other_record, distance in cursor.fetchall()
        ]


def register_sqlite_functions(sender, connection, **kwargs) -> None:
    """connection_created receiver: the Hamming distance on each new SQLite connection."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(HAMMING, 2, hamming, deterministic=True)
