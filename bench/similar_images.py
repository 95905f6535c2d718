"""Similar images when thousands of public images share one hash (a logo, a blank frame):
the candidates sorted and cut in the database (publicapi.similar) against every candidate
fetched and sorted in Python (what it did before, copied below).

bench/public_api.py's archive (BENCH_DB_NAME, as there), with BENCH_SHARED (default 40,000)
public runway images given one hash inside a transaction that is rolled back at the end. For
an image with that hash, and for the bench's usual image (a hash no other image shares), the
two are timed in alternated rounds (BENCH_ROUNDS, default 5, of BENCH_SAMPLES requests each,
default 5), in-process: similar_images() itself, without HTTP. Medians, ms.

Run: .venv/bin/python bench/similar_images.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import public_api  # noqa: E402

SHARED = int(os.environ.get("BENCH_SHARED", "40000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SAMPLES = int(os.environ.get("BENCH_SAMPLES", "5"))
LOGO = 0x0F0F_F0F0_3C3C_C3C3  # the hash they share (below 2**63: stored as it is)


def main() -> None:
    os.environ.update(
        DATABASE_URL=public_api.database_url(),
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection, transaction

    from publicapi.similar import similar_images

    public_api.ensure_database()
    distance = settings.PUBLIC_SIMILAR_MAX_DISTANCE
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM public_image_hashes WHERE kind = 'runway' ORDER BY id LIMIT 1 "
            "OFFSET 5000"
        )
        (usual,) = cursor.fetchone()
        cursor.execute(
            "UPDATE brand_runway_images SET phash = %s, phash_algorithm = 'phash' WHERE id IN "
            "(SELECT id FROM public_image_hashes WHERE kind = 'runway' AND id <> %s "
            " ORDER BY id LIMIT %s)",
            [LOGO, usual, SHARED],
        )
        cursor.execute(
            "SELECT id FROM brand_runway_images WHERE phash = %s ORDER BY id LIMIT 1", [LOGO]
        )
        (logo,) = cursor.fetchone()
        cursor.execute("ANALYZE brand_runway_images")
        cases = {f"an image {SHARED:,} others share": logo, "the usual image": usual}
        ways = {"in Python (before)": in_python, "in SQL (after)": similar_images}
        for image in cases.values():  # the same answer both ways
            assert in_python("runway", image, max_distance=distance) == similar_images(
                "runway", image, max_distance=distance
            )
        times: dict[tuple[str, str], list[float]] = {(c, w): [] for c in cases for w in ways}
        for n in range(ROUNDS):
            order = list(ways) if n % 2 == 0 else list(reversed(ways))
            for case, image in cases.items():
                for way in order:
                    for _ in range(SAMPLES):
                        started = time.perf_counter()
                        ways[way]("runway", image, max_distance=distance)
                        times[case, way].append((time.perf_counter() - started) * 1000)
        transaction.set_rollback(True)
    print(
        f"{public_api.RUNWAYS} runways; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores; {ROUNDS} alternated rounds of {SAMPLES}; p50, ms"
    )
    print(f"  {'':<36}" + "".join(f"{way:>22}" for way in ways))
    for case in cases:
        medians = [statistics.median(times[case, way]) for way in ways]
        print(f"  {case:<36}" + "".join(f"{m:22.1f}" for m in medians))


def in_python(kind: str, image_id: int, *, max_distance: int):
    """publicapi.similar.similar_images before the change: every candidate within the
    distance fetched, then sorted and cut here."""
    from publicapi.models import public_connection
    from publicapi.similar import KINDS, MAX_RESULTS, Match, band_probes, hamming

    record_column = "runway_id" if kind == "runway" else "street_snap_id"
    with public_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT i.{record_column}, h.phash, h.phash_algorithm "  # noqa: S608 - ours
            f"FROM {KINDS[kind]} i "
            "LEFT JOIN public_image_hashes h ON h.kind = %s AND h.id = i.id "
            "WHERE i.id = %s",
            [kind, image_id],
        )
        record_id, phash, algorithm = cursor.fetchone()
        probes = band_probes(phash, max_distance)
        where = " OR ".join(
            f"phash_band{n} IN ({', '.join(['%s'] * len(values))})"
            for n, values in enumerate(probes)
        )
        cursor.execute(
            "SELECT kind, id, record_id, phash FROM public_image_hashes "  # noqa: S608 - ours
            f"WHERE phash_algorithm = %s AND ({where})"
            " AND bit_count((phash # %s)::bit(64)) <= %s AND NOT (kind = %s AND record_id = %s)",
            [algorithm, *(v for values in probes for v in values), phash, max_distance, kind]
            + [record_id],
        )
        candidates = cursor.fetchall()
    matches = [
        Match(kind=other_kind, image_id=other_id, record_id=other_record, distance=distance)
        for other_kind, other_id, other_record, other_phash in candidates
        if not (other_kind == kind and other_record == record_id)
        and (distance := hamming(phash, other_phash)) <= max_distance
    ]
    matches.sort(key=lambda m: (m.distance, m.kind != "runway", m.image_id))
    return matches[:MAX_RESULTS]


if __name__ == "__main__":
    main()
