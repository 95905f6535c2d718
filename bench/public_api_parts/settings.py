"""The project's settings with the bench's bare views mounted beside the API."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.public_api_parts.bare"
