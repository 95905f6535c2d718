"""Logs, metrics and error reports."""

from config.settings.core import env

# --- Logs -----------------------------------------------------------------------------------
# LOG_FORMAT=json (the container's default): one JSON object per line, with the request id,
# ingest job id and rq job id as fields (config.logs, ingest.joblog). plain: for a terminal
# (`make run`).
LOG_FORMAT = env.str("LOG_FORMAT", default="plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request": {"()": "config.logs.RequestIdFilter"},
        "job": {"()": "ingest.joblog.JobFilter"},
    },
    "formatters": {
        "plain": {
            "()": "config.logs.PlainFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(message)s",
        },
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            "timestamp": False,
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
            "filters": ["request", "job"],
        },
        "null": {"class": "logging.NullHandler"},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # rq and django-rq install their own handlers unless told otherwise; one format for all.
    "loggers": {
        "rq": {"handlers": ["console"], "propagate": False},
        "rq.worker": {"handlers": ["console"], "propagate": False},
        # One line per request, config.requests': not runserver's access line too, nor
        # django.request's for a 4xx (its 5xx, with the traceback, stay).
        "django.server": {"handlers": ["null"], "propagate": False},
        "django.request": {"level": "ERROR"},
        # Django's own console handler (with DEBUG) would write every django.* line twice.
        "django": {"handlers": [], "propagate": True},
        # django-axes announces its configuration at every start; lockouts stay WARNING.
        "axes.apps": {"level": "WARNING"},
        # libvips logs every step of every resize at INFO.
        "pyvips": {"level": "WARNING"},
    },
}

# --- Operations ------------------------------------------------------------------------------
# /metrics answers only with `Authorization: Bearer <METRICS_TOKEN>`; unset = 404.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

# Errors to Sentry when SENTRY_DSN is set; unset, sentry_sdk is never imported.
SENTRY_DSN = env.str("SENTRY_DSN", default="")
if SENTRY_DSN:
    import sentry_sdk
    from sentry_sdk.integrations.django import DjangoIntegration
    from sentry_sdk.integrations.rq import RqIntegration

    sentry_sdk.init(
        dsn=SENTRY_DSN,
        integrations=[DjangoIntegration(), RqIntegration()],
        environment=env.str("SENTRY_ENVIRONMENT", default="production"),
        traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0),
        # Editors' names and crawler payload ids stay out of Sentry.
        send_default_pii=False,
    )
