"""Who the client is: the address the public API's throttle and the admin lockout count
requests by."""

import functools
import ipaddress
import re

from django.conf import settings

# A proxy may write the address with its port: 203.0.113.7:51234, [2001:db8::1]:443.
_WITH_PORT = re.compile(r"^\[(?P<v6>[^\]]+)\](:\d+)?$|^(?P<v4>[\d.]+):\d+$")


def client_ip(request) -> str:
    """The client's address: with NUM_PROXIES set, the one the outermost of our proxies wrote
    into X-Forwarded-For (DRF's rule, which the throttle uses too); otherwise, or when that
    entry is not an address, the peer's.

    Always an address in its canonical form: django-axes stores it in an `inet` column (a
    value such as "evil" was a 500 on the login page), and anything else would let a client
    that reaches us without our proxies pick a new throttle and lockout identity per request.
    """
    peer = request.META.get("REMOTE_ADDR", "")
    num_proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if num_proxies and forwarded:
        addresses = forwarded.split(",")
        if address := canonical_address(addresses[-min(num_proxies, len(addresses))]):
            return address
    return canonical_address(peer) or peer


# Kept per text: a client's address comes back with each of its requests, and parsing it was
# a tenth of the throttle's time per public request. Any text maps to one answer, forever.
@functools.lru_cache(maxsize=4096)
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
