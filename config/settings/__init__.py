"""Settings, read from environment variables only (12-factor), by concern: what the project
is (core), where things are kept (data), the work beside requests (jobs), the public API (api),
and what it says about itself (logs).

Every variable has a safe development default so `make run` works with no service at all
(SQLite, local media, in-process jobs). Production sets DEBUG=false, a real SECRET_KEY,
ALLOWED_HOSTS, DATABASE_URL, REDIS_URL and a bucket; `manage.py check --deploy` then reports
nothing. docs/operations.md lists every variable.
"""

from config.settings.api import *  # noqa: F403
from config.settings.core import *  # noqa: F403
from config.settings.data import *  # noqa: F403
from config.settings.jobs import *  # noqa: F403
from config.settings.logs import *  # noqa: F403
