"""Settings, read from environment variables only (12-factor).

Every variable has a safe development default so `make run` works with no service at all
(SQLite, local media, in-process jobs). Production sets DEBUG=false, a real SECRET_KEY,
ALLOWED_HOSTS, DATABASE_URL, REDIS_URL and a bucket; `manage.py check --deploy` then reports
nothing. docs/operations.md lists every variable.
"""

from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

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

# --- Database -----------------------------------------------------------------------------
# Default: a SQLite file in the project folder (the embedded mode). Production: PostgreSQL.
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE takes the write lock when a transaction starts, so an in-process job and a
    # request writing at the same time wait for each other instead of failing with
    # "database is locked" halfway through; WAL lets readers go on meanwhile.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # Tests use a file beside it too: Django's in-memory one is shared between threads through
    # SQLite's shared cache, whose table locks fail at once where a file's wait.
    _sqlite_file = Path(DATABASES["default"]["NAME"])
    if _sqlite_file.name != ":memory:":
        _test_file = _sqlite_file.with_name(f"test_{_sqlite_file.name}")
        DATABASES["default"]["TEST"] = {"NAME": str(_test_file)}
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

# PostgreSQL's planner cost of a random page read on our connections: 1.1, as its docs suggest
# for SSDs (the default 4 assumes spinning disks: bench/README.md). Empty: the server's own.
PG_RANDOM_PAGE_COST = env.str("PG_RANDOM_PAGE_COST", default="1.1")


def _planner_options(database: dict) -> None:
    if database["ENGINE"] != "django.db.backends.postgresql" or not PG_RANDOM_PAGE_COST:
        return
    options = database.setdefault("OPTIONS", {})
    given = options.get("options", "")
    options["options"] = f"{given} -c random_page_cost={float(PG_RANDOM_PAGE_COST)}".strip()


_planner_options(DATABASES["default"])

# SQLite builds the band indexes without their INCLUDE columns (PostgreSQL's), as Django warns.
SILENCED_SYSTEM_CHECKS = ["models.W040"]

# Optional, defence in depth: the public API reads its views through a PostgreSQL role that
# may SELECT the public_* views and nothing else (`manage.py create_public_role NAME`), so a
# bug in the API cannot reach an unpublished row even by raw SQL. Unset: the default database.
PUBLIC_DATABASE_URL = env.str("PUBLIC_DATABASE_URL", default="")
if PUBLIC_DATABASE_URL:
    DATABASES["public"] = env.db_url_config(PUBLIC_DATABASE_URL)
    DATABASES["public"]["CONN_MAX_AGE"] = DATABASES["default"].get("CONN_MAX_AGE", 0)
    DATABASES["public"]["CONN_HEALTH_CHECKS"] = True
    # The same database seen through another role: tests use the default connection.
    DATABASES["public"]["TEST"] = {"MIRROR": "default"}
    _planner_options(DATABASES["public"])
DATABASE_ROUTERS = ["config.routers.PublicApiRouter"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Jobs (rq through django-rq) ------------------------------------------------------------
# Unset REDIS_URL = the embedded mode: jobs run in-process after the request's commit. Set =
# jobs go to rq's queues, which workers serve (docs/operations.md, "Workers").
REDIS_URL = env.str("REDIS_URL", default="")
_rq_url = REDIS_URL or "redis://127.0.0.1:6379/0"
# An enqueue (after the job row's commit; reconcile enqueues what failed) must not hold the
# crawler's 202 for the OS's connect timeout when Redis drops packets...
if "socket_connect_timeout=" not in _rq_url:
    _rq_url += ("&" if "?" in _rq_url else "?") + "socket_connect_timeout=2"
# ...nor one that never answers hold it for ever (rq's workers raise it for their long reads).
if "socket_timeout=" not in _rq_url:
    _rq_url += "&socket_timeout=5"
INGEST_JOB_TIMEOUT = env.int("INGEST_JOB_TIMEOUT", default=900)
# The queue ingest jobs go to; tests point it at a queue of their own.
INGEST_QUEUE = env.str("INGEST_QUEUE", default="ingest")
RQ_QUEUES = {
    "ingest": {"URL": _rq_url, "DEFAULT_TIMEOUT": INGEST_JOB_TIMEOUT},
    "maintenance": {"URL": _rq_url, "DEFAULT_TIMEOUT": 3600},
}
RQ_QUEUES.setdefault(INGEST_QUEUE, {"URL": _rq_url, "DEFAULT_TIMEOUT": INGEST_JOB_TIMEOUT})
# The renditions jobs' queue, served after `ingest`: a new album never waits behind the
# renditions of those before it (docs/operations.md, "Queues").
RENDITIONS_QUEUE = env.str("RENDITIONS_QUEUE", default="renditions")
RQ_QUEUES.setdefault(RENDITIONS_QUEUE, {"URL": _rq_url, "DEFAULT_TIMEOUT": INGEST_JOB_TIMEOUT})
# Seconds between the heartbeats a worker sends while it runs a job (rq's job monitoring
# interval); reconcile takes a started job whose heartbeats stopped for 3 of them as lost.
INGEST_WORKER_HEARTBEAT_SECONDS = env.int("INGEST_WORKER_HEARTBEAT_SECONDS", default=30)
# The worker rides out a Redis outage instead of exiting (ingest.worker).
RQ = {"COMMIT_MODE": "on_db_commit", "WORKER_CLASS": "ingest.worker.IngestWorker"}
# Scheduled maintenance (`make scheduler` = `manage.py rqcron config.cron`): each a cron
# string (UTC in the container) or a number of seconds between runs. See docs/operations.md.
MAINTENANCE_QUEUE = env.str("MAINTENANCE_QUEUE", default="maintenance")
RQ_QUEUES.setdefault(MAINTENANCE_QUEUE, {"URL": _rq_url, "DEFAULT_TIMEOUT": 3600})
MAINTENANCE_RECONCILE_SCHEDULE = env.str("MAINTENANCE_RECONCILE_SCHEDULE", default="* * * * *")
MAINTENANCE_PURGE_WEBHOOK_IDS_SCHEDULE = env.str(
    "MAINTENANCE_PURGE_WEBHOOK_IDS_SCHEDULE", default="17 * * * *"
)
MAINTENANCE_GC_MEDIA_SCHEDULE = env.str("MAINTENANCE_GC_MEDIA_SCHEDULE", default="42 3 * * *")
# Enqueues the renditions of albums whose follow-up job was lost (ingest.tasks.renditions_catch_up).
MAINTENANCE_RENDITIONS_SCHEDULE = env.str("MAINTENANCE_RENDITIONS_SCHEDULE", default="*/10 * * * *")
# The queue the visibility jobs (moving bytes, purging the edge) go to: short jobs a takedown
# waits for, so never behind an album's ingest. Workers serve it first.
VISIBILITY_QUEUE = env.str("VISIBILITY_QUEUE", default="visibility")
RQ_QUEUES.setdefault(VISIBILITY_QUEUE, {"URL": _rq_url, "DEFAULT_TIMEOUT": 600})
# Seconds a visibility change waits after each failure (the last one again for every later
# failure): short, as a takedown waits for it; the other changes go on meanwhile.
VISIBILITY_RETRY_INTERVALS = [
    int(s) for s in env.list("VISIBILITY_RETRY_INTERVALS", default=["2", "10", "60", "300"])
]
# The scheduler runs the visibility job this often (config/cron.py): the longest a change past
# its back-off, or one whose worker was killed mid-run, waits.
VISIBILITY_CATCH_UP_SECONDS = env.int("VISIBILITY_CATCH_UP_SECONDS", default=15)
# The visibility sweep (catalog.visibility.media_sweep): what no job moved - an operator's SQL,
# a job lost with Redis, a storage error - converges at the next run; the full run also compares
# every public object with the database.
MAINTENANCE_MEDIA_SWEEP_SCHEDULE = env.str(
    "MAINTENANCE_MEDIA_SWEEP_SCHEDULE", default="*/5 * * * *"
)
MAINTENANCE_MEDIA_AUDIT_SCHEDULE = env.str("MAINTENANCE_MEDIA_AUDIT_SCHEDULE", default="27 4 * * *")
RQ_SHOW_ADMIN_LINK = bool(REDIS_URL)

# --- Cache ----------------------------------------------------------------------------------
# The public API's throttle counts each client in the cache, shared by the web processes:
# Redis whenever REDIS_URL is set, else local memory (the embedded mode's one process). Short
# timeouts: a Redis that hangs must not hang requests (publicapi.throttling lets them through).
# django-redis keeps its client and one pool per process (Django's builds a client per call).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Storage ------------------------------------------------------------------------------
# Two stores (catalog.visibility): a private one with every object, and a public one with a copy
# of exactly what published albums show. Default: the local media folder and no copy (Django
# serves /media/ from the database's answer). AWS_STORAGE_BUCKET_NAME: the private store in S3
# (AWS_S3_ENDPOINT_URL), the copies in AWS_PUBLIC_BUCKET_NAME (default: the same, a prefix).
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "media")
MEDIA_URL = env.str("MEDIA_URL", default="/media/")
# Where the admin reads private local media (an editor's session is required): pending and
# rejected images have no public URL.
PRIVATE_MEDIA_URL = env.str("PRIVATE_MEDIA_URL", default="/admin/media/")
# A folder for the public copies of local media, for a server (nginx) that serves it as it is;
# unset = no copies, /media/ answers from the database.
PUBLIC_MEDIA_ROOT = env.str("PUBLIC_MEDIA_ROOT", default="")
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STATIC_URL = "static/"

# Browsers keep a public image this long (Cache-Control max-age of the public copies and of
# /media/): after a takedown, a browser that showed it may show it from its own cache this long.
MEDIA_CACHE_SECONDS = env.int("MEDIA_CACHE_SECONDS", default=600)

AWS_STORAGE_BUCKET_NAME = env.str("AWS_STORAGE_BUCKET_NAME", default="")
if AWS_STORAGE_BUCKET_NAME:
    _s3 = {
        "endpoint_url": env.str("AWS_S3_ENDPOINT_URL", default="") or None,
        "region_name": env.str("AWS_S3_REGION_NAME", default="") or None,
        "file_overwrite": True,
    }
    _public_bucket = env.str("AWS_PUBLIC_BUCKET_NAME", default="") or AWS_STORAGE_BUCKET_NAME
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            **_s3,
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            # The bucket is private: the admin's URLs are signed and expire.
            "querystring_auth": True,
            "querystring_expire": env.int("AWS_QUERYSTRING_EXPIRE", default=900),
            "object_parameters": {"CacheControl": "private, max-age=3600"},
        },
    }
    _public_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            **_s3,
            "bucket_name": _public_bucket,
            # Anonymous reads are allowed on this prefix (or bucket) only: docs/operations.md.
            "location": env.str(
                "AWS_PUBLIC_LOCATION",
                default="public" if _public_bucket == AWS_STORAGE_BUCKET_NAME else "",
            ),
            "custom_domain": env.str("AWS_S3_CUSTOM_DOMAIN", default="") or None,
            # The scheme of custom-domain URLs: "http:" for a local store (compose.yaml).
            "url_protocol": env.str("AWS_S3_URL_PROTOCOL", default="https:"),
            # Plain URLs: the copies are public, and a plain URL caches well.
            "querystring_auth": False,
        },
    }
else:
    _default_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": MEDIA_ROOT, "base_url": PRIVATE_MEDIA_URL},
    }
    _public_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        # Without a folder of copies, the public URLs are /media/ over the private folder,
        # and the media route decides per request.
        "OPTIONS": {"location": PUBLIC_MEDIA_ROOT or MEDIA_ROOT, "base_url": MEDIA_URL},
    }
# Whether bytes are copied to the public store as albums are published (a bucket, or a
# folder of public copies); without, the media route is the gate.
MEDIA_PUBLIC_COPIES = bool(AWS_STORAGE_BUCKET_NAME or PUBLIC_MEDIA_ROOT)
STORAGES = {
    "default": _default_storage,
    "public": _public_storage,
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Local media is served by Django itself in the embedded mode (there is no other server);
# with a bucket, URLs point at the bucket or its CDN.
SERVE_MEDIA = env.bool("SERVE_MEDIA", default=not AWS_STORAGE_BUCKET_NAME)
WHITENOISE_USE_FINDERS = DEBUG

# --- The edge: caches in front of the API and the public images ------------------------------
# Purge after every change of what the public sees (catalog.edge): "" (off: shared caches keep
# responses for max-age, as browsers do), "http" (PURGE requests to each of EDGE_PURGE_URLS:
# Varnish with config/varnish.vcl) or "cloudfront" (invalidations of CLOUDFRONT_DISTRIBUTION_ID).
EDGE_PURGE_BACKEND = env.str("EDGE_PURGE_BACKEND", default="")
EDGE_PURGE_URLS = env.list("EDGE_PURGE_URLS", default=[])
EDGE_PURGE_TIMEOUT = env.float("EDGE_PURGE_TIMEOUT", default=5.0)
CLOUDFRONT_DISTRIBUTION_ID = env.str("CLOUDFRONT_DISTRIBUTION_ID", default="")
CLOUDFRONT_ENDPOINT_URL = env.str("CLOUDFRONT_ENDPOINT_URL", default="") or None
# With a purge backend, shared caches may keep details and images this long (s-maxage), pages
# that list records EDGE_LIST_SECONDS, each one EDGE_GRACE_SECONDS more while it is fetched.
EDGE_CACHE_SECONDS = env.int("EDGE_CACHE_SECONDS", default=86400)
EDGE_LIST_SECONDS = env.int("EDGE_LIST_SECONDS", default=60)
EDGE_GRACE_SECONDS = env.int("EDGE_GRACE_SECONDS", default=86400)
# --- Renditions ---------------------------------------------------------------------------
# A follow-up job per ingested album makes its WebP renditions, placeholder and colour
# (catalog.services.renditions). Off: only `manage.py renditions`.
RENDITIONS_AT_INGEST = env.bool("RENDITIONS_AT_INGEST", default=True)
# Images of one album rendered at once (threads; libvips releases the GIL; docs/renditions.md).
RENDITION_THREADS = env.int("RENDITION_THREADS", default=2)

# --- Ingest -------------------------------------------------------------------------------
# Secrets in the Standard Webhooks format (whsec_<base64>), comma-separated; several may be
# active at once so crawlers can rotate.
INGEST_SECRETS = env.list("INGEST_SECRETS", default=[])
INGEST_SIGNATURE_TOLERANCE_SECONDS = env.int("INGEST_SIGNATURE_TOLERANCE_SECONDS", default=300)
# Hosts exempt from the private-address guard (tests and local demos only).
INGEST_FETCH_ALLOWED_HOSTS = env.list("INGEST_FETCH_ALLOWED_HOSTS", default=[])
INGEST_MAX_IMAGES = env.int("INGEST_MAX_IMAGES", default=500)
INGEST_MAX_BODY_BYTES = env.int("INGEST_MAX_BODY_BYTES", default=1024 * 1024)
INGEST_MAX_IMAGE_BYTES = env.int("INGEST_MAX_IMAGE_BYTES", default=25 * 1024 * 1024)
INGEST_MAX_IMAGE_PIXELS = env.int("INGEST_MAX_IMAGE_PIXELS", default=64_000_000)
# Decoded pixels all of a worker's parallel downloads may hold at once (catalog/memory.py); an
# image whose decode alone needs more is refused. With the bodies (INGEST_DOWNLOAD_WORKERS x
# INGEST_MAX_IMAGE_BYTES) it bounds a worker's memory: measured in docs/hashing.md.
INGEST_DECODE_MEMORY_BYTES = env.int("INGEST_DECODE_MEMORY_BYTES", default=256 * 1024 * 1024)
INGEST_CONNECT_TIMEOUT = env.float("INGEST_CONNECT_TIMEOUT", default=5.0)
INGEST_READ_TIMEOUT = env.float("INGEST_READ_TIMEOUT", default=10.0)
INGEST_IMAGE_DEADLINE = env.float("INGEST_IMAGE_DEADLINE", default=30.0)
INGEST_MAX_REDIRECTS = env.int("INGEST_MAX_REDIRECTS", default=3)
INGEST_DOWNLOAD_WORKERS = env.int("INGEST_DOWNLOAD_WORKERS", default=8)
# A transient failure of one image (timeout, 5xx, 429) is tried again inside the job: this many
# tries in all, the first pause this long and doubled after it, within the download budget.
# Then that image is an issue and the job goes on with the others.
INGEST_IMAGE_TRIES = env.int("INGEST_IMAGE_TRIES", default=3)
INGEST_IMAGE_RETRY_BACKOFF = env.float("INGEST_IMAGE_RETRY_BACKOFF", default=1.0)
# Seconds one job may spend downloading, well inside INGEST_JOB_TIMEOUT (ingest.W002 checks):
# images not downloaded in time are refused (issues of the job, which keeps the others).
INGEST_DOWNLOAD_BUDGET = env.float("INGEST_DOWNLOAD_BUDGET", default=600.0)
# Near-duplicate radius in bits, the one place its default lives (docs/hashing.md, "The
# threshold": re-encodes of one photo within it, different photos well outside).
INGEST_DUPLICATE_MAX_DISTANCE = env.int("INGEST_DUPLICATE_MAX_DISTANCE", default=7)

# An editor's soft claim on the album they have open (review.models.ReviewClaim) lapses
# after this long without a sign of life from their page (the page pings once a minute
# while the editor is active).
REVIEW_CLAIM_SECONDS = env.int("REVIEW_CLAIM_SECONDS", default=300)
# Seconds between rq's retries of a job that hit a transient error (timeouts, 5xx, storage,
# database connection); one attempt more than there are intervals. Needs the worker's
# scheduler (`rqworker --with-scheduler`).
INGEST_RETRY_INTERVALS = [
    int(s) for s in env.list("INGEST_RETRY_INTERVALS", default=["30", "120", "600"])
]
# Executions of one job that may die with their worker (SIGKILL, OOM, a native crash) before
# the job fails as worker_died instead of being queued again forever.
INGEST_MAX_LOST_EXECUTIONS = env.int("INGEST_MAX_LOST_EXECUTIONS", default=3)
# `reconcile`: a job running longer than this is stale (far beyond INGEST_JOB_TIMEOUT); a queued
# job that has not reached the queue this long after it was accepted is enqueued again.
INGEST_STALE_AFTER_SECONDS = env.int("INGEST_STALE_AFTER_SECONDS", default=3600)
INGEST_RECONCILE_GRACE_SECONDS = env.int("INGEST_RECONCILE_GRACE_SECONDS", default=120)
INGEST_REPORT_MAX_ISSUES = env.int("INGEST_REPORT_MAX_ISSUES", default=100)
# `gc_media` deletes unreferenced objects only when older than this: an in-flight job may have
# uploaded its images but not yet committed the rows that reference them.
INGEST_MEDIA_GC_GRACE_SECONDS = env.int("INGEST_MEDIA_GC_GRACE_SECONDS", default=86400)
# Django refuses request bodies above this before any view runs; one album is at most 1 MB.
DATA_UPLOAD_MAX_MEMORY_SIZE = INGEST_MAX_BODY_BYTES

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
