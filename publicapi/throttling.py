"""The public API's anonymous throttle: DRF's AnonRateThrottle over the default cache (Redis
in production, so every web process counts a client together), behind a circuit breaker,
and the client's address it counts by (the admin lockout, django-axes, counts by it too).
"""

import ipaddress
import logging
import re

import pybreaker
from django.conf import settings
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle

logger = logging.getLogger(__name__)


class LogOnce(pybreaker.CircuitBreakerListener):
    """One warning when the breaker opens and one line when the service answers again, not a
    traceback per request."""

    def __init__(self) -> None:
        self.error: BaseException | None = None

    def failure(self, cb, exc):
        self.error = exc

    def state_change(self, cb, old_state, new_state):
        if new_state.name == pybreaker.STATE_OPEN and old_state.name == pybreaker.STATE_CLOSED:
            error = self.error
            logger.warning(
                "%s is unavailable (%s: %s): skipped for %g s at a time until it answers",
                cb.name,
                type(error).__name__,
                error,
                cb.reset_timeout,
            )
        elif new_state.name == pybreaker.STATE_CLOSED and old_state.name != pybreaker.STATE_CLOSED:
            logger.warning("%s answers again", cb.name)


# A Redis that accepts connections and never answers would cost every request its socket
# timeout: after two failures in a row the throttle skips Redis for ten seconds (requests are
# served unthrottled meanwhile), then one request tries it again. Per process.
redis_breaker = pybreaker.CircuitBreaker(
    fail_max=2, reset_timeout=10, name="Redis", listeners=[LogOnce()], throw_new_error_on_trip=False
)


class PublicAnonRateThrottle(AnonRateThrottle):
    """The `anon` rate of REST_FRAMEWORK (PUBLIC_API_THROTTLE_RATE). A cache that fails lets
    the request through: the throttle protects the archive, it must not take it down."""

    def get_rate(self) -> str | None:
        # Read per request, not once at import as DRF's class does, so override_settings works.
        # The stubs type the rates as numbers (DRF's are "100/min").
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[arg-type,return-value]

    def get_ident(self, request) -> str:
        return client_ip(request)

    def allow_request(self, request, view) -> bool:
        try:
            with redis_breaker.calling():
                return super().allow_request(request, view)
        except Exception:  # the cache failed, or the breaker is open
            return True


# A proxy may write the address with its port: 203.0.113.7:51234, [2001:db8::1]:443.
_WITH_PORT = re.compile(r"^\[(?P<v6>[^\]]+)\](:\d+)?$|^(?P<v4>[\d.]+):\d+$")


def client_ip(request) -> str:
    """The client's address: with NUM_PROXIES set, the one the outermost of our proxies wrote
    into X-Forwarded-For (DRF's rule), else (or if that entry is not an address) the peer's.
    Our own rather than django-ipware's, whose proxy count counts the proxies listed in the
    header where a load balancer appends only the client. Always a canonical address:
    django-axes stores it in an `inet` column, and anything else would let a client that
    reaches us without our proxies pick a new identity per request."""
    peer = request.META.get("REMOTE_ADDR", "")
    num_proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if num_proxies and forwarded:
        addresses = forwarded.split(",")
        if address := canonical_address(addresses[-min(num_proxies, len(addresses))]):
            return address
    return canonical_address(peer) or peer


def canonical_address(text: str) -> str | None:
    """`text` as an IP address in canonical form (an IPv4-mapped IPv6 address as IPv4, a
    port dropped), or None if it is not one."""
    text = text.strip()
    if match := _WITH_PORT.match(text):
        text = match["v6"] or match["v4"]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:  # fe80::1%eth0: a zone means nothing to us, nor to `inet`
            return None
        if address.ipv4_mapped:
            return str(address.ipv4_mapped)
    return str(address)
