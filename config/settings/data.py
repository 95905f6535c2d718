"""Where things are kept: the database, the two stores of image bytes, the caches in front."""

from pathlib import Path

from config.settings.core import BASE_DIR, DEBUG, env

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
