"""Where a URL may lead: its host resolved once, with a timeout, and every address it resolves to
checked (no private, loopback, link-local, metadata... address, unless the host is allowed)."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any

from catalog.text import truncate
from ingest.fetching.policy import Disallowed, FetchError, os_reason
from ingest.fetching.target import Target

type IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
type Resolver = Callable[..., Sequence[tuple[Any, ...]]]

# Addresses that hand out credentials or control a cloud host. Most also fail the generic
# checks below (link-local, private, shared); they are named here so the reason says what they
# are, and because Azure's wireserver is a PUBLIC address that only means something from inside.
_METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task credentials
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("168.63.129.16"),  # Azure wireserver
    }
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, RFC 6598
# NAT64 prefixes: an IPv6 address here is an IPv4 address on a NAT64 network, so the IPv4 it
# embeds is what actually gets reached.
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


def _lookup(resolver: Resolver, target: Target, timeout: float) -> Sequence[tuple[Any, ...]]:
    """``resolver(host, port)``, waited for at most ``timeout`` seconds.

    getaddrinfo has no timeout of its own: a slow (or hostile) DNS server would hold the
    download thread for as long as the system resolver retries, past every deadline. The
    lookup runs on a daemon thread of its own, and one that outlives the timeout is left to
    finish in the background (it holds no socket of ours).
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["infos"] = resolver(target.ascii_host, target.port, type=socket.SOCK_STREAM)
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome["error"] = exc

    thread = threading.Thread(target=run, name=f"resolve {target.ascii_host}", daemon=True)
    thread.start()
    thread.join(max(timeout, 0.0))
    if thread.is_alive():
        raise FetchError(f"host {target.host} lookup timed out", transient=True)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["infos"]


def resolve_checked(
    target: Target, allowed: frozenset[str], resolver: Resolver, timeout: float
) -> list[tuple[int, tuple[Any, ...]]]:
    """Resolve once and check every address; return (family, sockaddr) pairs to connect to."""
    candidates: list[tuple[int, tuple[Any, ...]]] = []
    try:
        literal: IPAddress | None = ipaddress.ip_address(target.host)
    except ValueError:
        literal = None
    if literal is not None:
        # An IP literal needs no lookup, and the resolver is not asked.
        family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
        sockaddr: tuple[Any, ...] = (str(literal), target.port)
        if literal.version == 6:
            sockaddr = (str(literal), target.port, 0, 0)
        candidates.append((family, sockaddr))
    else:
        try:
            infos = _lookup(resolver, target, timeout)
        except socket.gaierror as exc:
            permanent = exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", None))
            reason = "not found" if permanent else "could not be resolved"
            raise FetchError(f"host {target.host} {reason}", transient=not permanent) from None
        except OSError as exc:
            raise FetchError(
                f"host {target.host} could not be resolved ({os_reason(exc)})", transient=True
            ) from None
        except (UnicodeError, ValueError) as exc:
            raise FetchError(
                f"invalid host name {truncate(repr(target.host), 80)} ({exc})", transient=False
            ) from None
        for family, _type, _proto, _canonname, sockaddr in infos:
            known = (family, sockaddr) in candidates
            if family in (socket.AF_INET, socket.AF_INET6) and not known:
                candidates.append((family, sockaddr))
        if not candidates:
            raise FetchError(f"host {target.host} has no address", transient=True)

    if target.host not in allowed:
        # Every address, not just the first: the connect loop may fall through to any of them,
        # and an attacker controls the order of a DNS answer.
        for _family, sockaddr in candidates:
            ip = ipaddress.ip_address(sockaddr[0])
            refusal = _address_refusal(ip)
            if refusal:
                raise Disallowed(f"address {ip} is {refusal}{_exemption_hint(target, refusal)}")
    return candidates


# The setting that fills FetchPolicy.allowed_hosts (config.settings): a refusal of a local
# address names it, so whoever runs a demo against their own machine learns the way out.
ALLOWED_HOSTS_SETTING = "INGEST_FETCH_ALLOWED_HOSTS"


def _exemption_hint(target: Target, refusal: str) -> str:
    # Never for a cloud metadata address: no demo needs it, and the hint would read as advice.
    if refusal.startswith("a cloud metadata address"):
        return ""
    return f"; {target.host} is not in {ALLOWED_HOSTS_SETTING}"


def _address_refusal(ip: IPAddress) -> str | None:
    """Why we must not connect to ``ip`` (``None`` if it is an ordinary public address)."""
    if isinstance(ip, ipaddress.IPv6Address):
        # IPv4 reached through IPv6: judge the IPv4 address that is really reached.
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and any(ip in net for net in _NAT64):
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
        if embedded is not None:
            inner = _address_refusal(embedded)
            return f"{inner} (as {embedded})" if inner else None
    if ip in _METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip in _SHARED:
        return "shared (carrier-grade NAT)"
    if ip.is_reserved:  # before is_private, which also lists 240.0.0.0/4
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "not globally routable"
    return None
