import os

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

# gunicorn runs no system checks (runserver, migrate and rqworker do): refuse to serve with a
# configuration error, such as a malformed INGEST_SECRETS entry, instead of failing per request.
_serious = [m for m in checks.run_checks() if m.is_serious() and not m.is_silenced()]
if _serious:
    raise ImproperlyConfigured("System check errors:\n" + "\n".join(map(str, _serious)))
