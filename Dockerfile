# syntax=docker/dockerfile:1
# The one image of the stack (compose.yaml): the web app by default (gunicorn, workers from
# WEB_CONCURRENCY); the same image runs the worker, the scheduler and migrations:
#   docker run ... python manage.py rqworker visibility ingest renditions maintenance --with-scheduler
#   docker run ... python manage.py rqcron config.cron
#   docker run ... python manage.py migrate --no-input
# docs/operations.md says in which order.

# --- build: wheels of every runtime dependency, pinned by constraints.txt -------------------
FROM python:3.12-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /build
COPY requirements.txt constraints.txt ./
RUN pip wheel --wheel-dir /wheels -r requirements.txt -c constraints.txt

# --- runtime: the wheels installed, the app's packages, nothing else -----------------------
FROM python:3.12-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LOG_FORMAT=json
WORKDIR /app
COPY requirements.txt constraints.txt ./
# The wheels are mounted, not copied: they never become a layer of the image.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels -r requirements.txt -c constraints.txt

# Only what runs: no tests, bench, docs or scripts in the image.
COPY manage.py ./
COPY config ./config
COPY catalog ./catalog
COPY ingest ./ingest
COPY review ./review
COPY publicapi ./publicapi
# collectstatic needs settings but no database or secrets.
RUN DEBUG=false python manage.py collectstatic --no-input \
    && useradd --system --uid 1000 --home-dir /app archive \
    && mkdir -p /app/media && chown archive /app/media
USER archive

EXPOSE 8000
# Liveness only: the process answers. Readiness (/readyz) is for the load balancer, which
# should stop sending traffic on a database outage, not restart every container.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
CMD ["gunicorn", "-c", "config/gunicorn.py"]
