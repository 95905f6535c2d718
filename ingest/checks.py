"""System checks: a malformed secret is an error at start-up, not a 401 mystery later; a job
timeout too short for the download budget is a warning, not a job killed mid-way later; a
near-duplicate distance the indexed lookup cannot serve is an error, not every job failing; a
decode budget smaller than the pixel limit's biggest PNG is a warning, not a refusal later."""

import math

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from catalog.memory import MIB
from ingest.auth import SECRET_MIN_BYTES, load_secrets
from ingest.hashing import band_probes
from ingest.memory import pixels_cost


@register()
def check_ingest_secrets(app_configs, **kwargs):
    try:
        load_secrets(settings.INGEST_SECRETS)
    except ValueError as exc:
        hint = (
            f"Each secret is whsec_ followed by the standard base64 of at least "
            f"{SECRET_MIN_BYTES} random bytes, e.g. python -c 'import base64, os; "
            f'print("whsec_" + base64.b64encode(os.urandom(24)).decode())\''
        )
        return [Error(str(exc), hint=hint, id="ingest.E001")]
    return []


@register(Tags.security, deploy=True)
def check_ingest_open(app_configs, **kwargs):
    if settings.INGEST_SECRETS:
        return []
    return [
        Warning(
            "INGEST_SECRETS is empty: the ingest endpoint refuses every request.",
            hint="Set one or more whsec_<base64> secrets (comma-separated).",
            id="ingest.W001",
        )
    ]


# What a job needs besides its downloads: claiming and planning, the near-duplicate lookups (one
# indexed query per image), the final transaction, and the uploads of images whose download
# finished as the budget ran out.
JOB_TIMEOUT_MARGIN_SECONDS = 120


@register()
def check_job_timeout_covers_downloads(app_configs, **kwargs):
    needed = settings.INGEST_DOWNLOAD_BUDGET + JOB_TIMEOUT_MARGIN_SECONDS
    if settings.INGEST_JOB_TIMEOUT >= needed:
        return []
    return [
        Warning(
            f"INGEST_JOB_TIMEOUT ({settings.INGEST_JOB_TIMEOUT}s) does not cover the download "
            f"budget INGEST_DOWNLOAD_BUDGET ({settings.INGEST_DOWNLOAD_BUDGET:g}s) plus "
            f"{JOB_TIMEOUT_MARGIN_SECONDS}s for the rest of a job: rq may kill slow jobs before "
            "they decide, and retry them from the start.",
            hint=f"Raise INGEST_JOB_TIMEOUT to at least {needed:g} or lower "
            "INGEST_DOWNLOAD_BUDGET.",
            id="ingest.W002",
        )
    ]


@register()
def check_duplicate_distance(app_configs, **kwargs):
    distance = settings.INGEST_DUPLICATE_MAX_DISTANCE
    try:
        band_probes(0, distance)
    except ValueError as exc:
        return [
            Error(
                f"INGEST_DUPLICATE_MAX_DISTANCE ({distance}) is unusable: {exc}.",
                hint="Use 0 to 15 bits; the measured default is 7 (docs/hashing.md).",
                id="ingest.E002",
            )
        ]
    return []


@register()
def check_decode_memory_holds_the_pixel_limit(app_configs, **kwargs):
    side = math.isqrt(settings.INGEST_MAX_IMAGE_PIXELS)
    needed = pixels_cost(side, side, "RGBA")
    if settings.INGEST_DECODE_MEMORY_BYTES >= needed:
        return []
    return [
        Warning(
            f"INGEST_DECODE_MEMORY_BYTES ({settings.INGEST_DECODE_MEMORY_BYTES / MIB:.0f} MiB) "
            f"cannot hold the decode of an RGBA PNG of INGEST_MAX_IMAGE_PIXELS "
            f"({settings.INGEST_MAX_IMAGE_PIXELS}): such images are refused for memory, not for "
            "their pixel count.",
            hint=f"Raise INGEST_DECODE_MEMORY_BYTES to at least {needed} or lower "
            "INGEST_MAX_IMAGE_PIXELS.",
            id="ingest.W003",
        )
    ]
