# The operations tests use ingest's throwaway rq queue and local image server.
from tests.ingest.conftest import image_server, rq_queue  # noqa: F401
