"""publicapi's system checks. config/wsgi.py runs them before gunicorn serves, as runserver
and migrate do, so a setting the API cannot serve stops the start with this message rather
than failing requests later."""

from django.conf import settings
from django.core.checks import Error, register

from publicapi.similar import band_probes


@register()
def check_similar_max_distance(app_configs, **kwargs):
    # The band lookup finds every match within 15 bits and no further (publicapi.similar);
    # beyond, "similar images" would raise on every request: a 500.
    distance = settings.PUBLIC_SIMILAR_MAX_DISTANCE
    try:
        band_probes(0, distance)
    except (ValueError, TypeError) as exc:
        return [
            Error(
                f"PUBLIC_SIMILAR_MAX_DISTANCE ({distance!r}) is unusable: {exc}.",
                hint="Use 0 to 15 bits; the default is INGEST_DUPLICATE_MAX_DISTANCE (7).",
                id="publicapi.E001",
            )
        ]
    return []
