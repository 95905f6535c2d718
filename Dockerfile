# The web app (gunicorn) by default; the same image runs a worker:
#   docker run ... python manage.py rqworker ingest maintenance --with-scheduler
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.txt constraints.txt ./
RUN pip install -r requirements.txt -c constraints.txt

COPY . .
# collectstatic needs settings but no database or secrets.
RUN DEBUG=false python manage.py collectstatic --no-input \
    && useradd --system --uid 1000 archive \
    && mkdir -p /app/media && chown archive /app/media
USER archive

EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
