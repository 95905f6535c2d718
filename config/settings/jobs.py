"""The work done beside requests: rq's queues and schedules, the cache they share Redis with,
the ingest pipeline's limits, renditions and the review's claims."""

from config.settings.core import env

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
