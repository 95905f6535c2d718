"""The URL to fetch, parsed and checked before any lookup: scheme, credentials, host name, port."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from catalog.text import truncate
from ingest.fetching.policy import Disallowed, FetchError

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Target:
    scheme: str
    host: str  # lowercased, IPv6 without brackets, as written otherwise
    ascii_host: str  # IDNA form: for DNS, SNI, certificate check and the Host header
    port: int
    request_target: str  # path and query, percent-encoded

    @property
    def host_header(self) -> str:
        host = f"[{self.ascii_host}]" if ":" in self.ascii_host else self.ascii_host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def parse_target(url: str) -> Target:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a bad port, or brackets that are not an IPv6 address
        raise FetchError(f"invalid URL ({exc})", transient=False) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise Disallowed(f"scheme {scheme or '(none)'} is not allowed")
    if "@" in parts.netloc:
        # userinfo is never legitimate for an image and is the classic way to make a URL's
        # host look like something it is not (http://cdn.example@10.0.0.1/)
        raise Disallowed("credentials in the URL are not allowed")
    host = parts.hostname
    if not host:
        raise FetchError("URL has no host", transient=False)
    if port == 0:
        raise FetchError("invalid URL (port 0)", transient=False)
    try:
        ascii_host = host if host.isascii() else host.encode("idna").decode("ascii")
    except UnicodeError:
        raise FetchError(f"invalid host name {host!r}", transient=False) from None
    if not _is_ip_literal(host) and not _HOST_NAME.fullmatch(ascii_host):
        # Checked here, not left to getaddrinfo: its IDNA step raises UnicodeError on an empty
        # or over-long label, and other bytes (NUL, spaces) have no business in DNS either.
        raise FetchError(f"invalid host name {truncate(repr(host), 80)}", transient=False)
    # Crawled URLs carry spaces and non-ASCII in paths; http.client would refuse them. Existing
    # %-escapes are kept (safe includes "%"), everything else unsafe is encoded.
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    query = quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    return Target(
        scheme=scheme,
        host=host,
        ascii_host=ascii_host,
        port=port or DEFAULT_PORTS[scheme],
        request_target=f"{path}?{query}" if query else path,
    )


# DNS names as resolvers take them: labels of 1-63 letters, digits, hyphens (and the
# underscores some CDNs use), at most 253 characters, an optional final dot.
_HOST_NAME = re.compile(
    r"(?=.{1,253}\.?\Z)[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*\.?", re.ASCII
)


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
