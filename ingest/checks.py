"""System checks: a malformed secret is an error at start-up, not a 401 mystery later."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from ingest.auth import load_secrets


@register()
def check_ingest_secrets(app_configs, **kwargs):
    try:
        load_secrets(settings.INGEST_SECRETS)
    except ValueError as exc:
        return [Error(str(exc), hint="Each secret is whsec_ followed by base64.", id="ingest.E001")]
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
