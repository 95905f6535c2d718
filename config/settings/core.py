"""What the project is: its apps, middleware, templates, security, logins and time zones."""

from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

# DEBUG is off unless asked for: a forgotten variable must not expose tracebacks.
DEBUG = env.bool("DEBUG", default=False)

# The development key is deliberately recognisable; `check --deploy` flags it (security.W009)
# and the production checklist in docs/operations.md says to set a real one.
SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-dev-only-set-SECRET_KEY-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "config.apps.ArchiveAdminConfig",  # django.contrib.admin, with the archive's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "config.apps.ProjectConfig",  # before staticfiles: its runserver (config.server) wins
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    # Swagger UI's files, served from our static files: /api/docs/ works offline.
    "drf_spectacular_sidecar",
    "django_rq",
    "axes",
    "catalog",
    "ingest",
    "review",
    "publicapi",
]

MIDDLEWARE = [
    # Request id and request line first, so every line of a request carries the id; then the
    # probes and /metrics, answered before the host check and the HTTPS redirect (config.ops).
    "config.logs.RequestIdMiddleware",
    "config.ops.OpsEndpointsMiddleware",
    "config.metrics.ApiMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before CommonMiddleware, as django-cors-headers asks: its headers go on every response.
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "review.middleware.EditorsTimeZoneMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into the lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

# What the admin calls the archive (its header and page titles), and where its "View site"
# goes: the public site, or by default the public API's documentation.
ARCHIVE_NAME = env.str("ARCHIVE_NAME", default="Fashion archive")
PUBLIC_SITE_URL = env.str("PUBLIC_SITE_URL", default="/api/docs/")
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The admin site's own pages (config.admin); the apps' templates come with the apps.
        "DIRS": [BASE_DIR / "config" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Security -----------------------------------------------------------------------------
# Secure by default whenever DEBUG is off; each can be turned off explicitly (for example
# SECURE_SSL_REDIRECT=false behind a proxy that already redirects).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
if env.bool("TRUST_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"

# --- Admin login lockout (django-axes) ------------------------------------------------------
# After AXES_FAILURE_LIMIT failed logins for one username from one address, that pair is
# refused for AXES_COOLOFF_MINUTES; a successful login resets its count. The address is the
# one the API throttle uses (NUM_PROXIES), so behind a proxy each client counts for itself.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_MINUTES = env.int("AXES_COOLOFF_MINUTES", default=15)
AXES_COOLOFF_TIME = timedelta(minutes=AXES_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "publicapi.throttling.client_ip"
AXES_COOLOFF_MESSAGE = (
    f"Too many failed logins for this username from your address: logging in is locked for "
    f"{AXES_COOLOFF_MINUTES} minutes. Try again later, or ask an administrator to unlock it."
)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# The admin's: the times editors type (an embargo's go-live) and read, e.g. "Europe/Paris".
# Stored and served (the API) in UTC whatever it is.
EDITORS_TIME_ZONE = env.str("EDITORS_TIME_ZONE", default="UTC")
ZoneInfo(EDITORS_TIME_ZONE)  # a name that is no time zone stops the start, not a request
USE_I18N = True
USE_TZ = True
