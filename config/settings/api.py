"""The public API: DRF, its schema, CORS and its caching."""

from config.settings.core import env
from config.settings.jobs import INGEST_DUPLICATE_MAX_DISTANCE

# --- REST framework and the public API ------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "config.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_THROTTLE_RATES": {"anon": env.str("PUBLIC_API_THROTTLE_RATE", default="120/min")},
    # How many proxies (load balancer, CDN) append to X-Forwarded-For in front of the app, so
    # the throttle counts the client rather than the proxy. Default 0: the peer address only.
    # Trusting the header without proxies would let any client pick a fresh identity per
    # request (and fill the cache with counters).
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Fashion archive API",
    "DESCRIPTION": (
        "Read-only API over the published archive, and the signed crawler ingest.\n\n"
        "**Public API** (`/api/v1/`): JSON, no authentication; only published albums exist "
        "here, anything else is a 404. Lists take `page` (from 1) and `page_size` (default "
        "20, at most 100). Successful responses carry an `ETag` and `Cache-Control: public, "
        "max-age=<seconds>` (60 by default); send the ETag back in `If-None-Match` for a "
        '`304`. Errors are `{"status", "code", "detail", "errors"}` and never cached. '
        "Clients are throttled (120 requests a minute by default): `429` with `Retry-After`. "
        "Image `url`s are absolute.\n\n"
        "The schema itself: [as JSON](/api/schema.json) (to read in a browser) or "
        "[as YAML](/api/schema/) (to download)."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from drf-spectacular-sidecar's static files, not from a public CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
PUBLIC_API_CACHE_SECONDS = env.int("PUBLIC_API_CACHE_SECONDS", default=60)
# Any origin may read the public API from a browser, its scripts the ETag and Retry-After;
# a preflight allows If-None-Match, which is not a CORS-safelisted request header.
CORS_URLS_REGEX = r"^/api/v1/"
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_METHODS = ["GET", "HEAD", "OPTIONS"]
CORS_ALLOW_HEADERS = ["Accept", "If-None-Match"]
CORS_EXPOSE_HEADERS = ["ETag", "Retry-After"]
# "Similar images": at most this many differing hash bits (0-15; the band scheme's limit).
PUBLIC_SIMILAR_MAX_DISTANCE = env.int(
    "PUBLIC_SIMILAR_MAX_DISTANCE", default=INGEST_DUPLICATE_MAX_DISTANCE
)
