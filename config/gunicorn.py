"""gunicorn settings for the container and for tests: `gunicorn -c config/gunicorn.py`.

Workers come from WEB_CONCURRENCY (gunicorn reads it itself; 2 by default here). The public
API's request counters are per process: prometheus-client's multiprocess mode keeps each
worker's in a file of PROMETHEUS_MULTIPROC_DIR and /metrics sums them, so a scrape that
reaches any worker counts every worker's requests, including those of workers since
restarted.
"""

import os
import shutil
import tempfile

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
wsgi_app = "config.wsgi:application"
# Request lines come from the app (config.logs, with the request id); gunicorn's own access
# log would be a second, id-less line per request.
accesslog = None
errorlog = "-"
# An ingest body is at most 1 MB; editors' admin pages can be slow on big albums.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
# Docker's /dev/shm: worker heartbeats on tmpfs, not on an overlay filesystem.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108

# Set before any worker imports prometheus_client (workers fork after this file is read).
# A folder of its own: it is emptied when gunicorn starts.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="archive-prometheus-")
_multiproc_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"]


def on_starting(server):
    # Files of a previous run would be counted again: start from an empty folder.
    shutil.rmtree(_multiproc_dir, ignore_errors=True)
    os.makedirs(_multiproc_dir, exist_ok=True)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
