"""Who the client is: the address the public API's throttle and the admin lockout count
requests by."""

from django.conf import settings


def client_ip(request) -> str:
    """The client's address as the public API's throttle sees it (DRF's NUM_PROXIES rule), so
    the admin lockout counts clients behind the same proxies the same way."""
    num_proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if num_proxies and forwarded:
        addresses = [address.strip() for address in forwarded.split(",")]
        return addresses[-min(num_proxies, len(addresses))]
    return request.META.get("REMOTE_ADDR", "")
