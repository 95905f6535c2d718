"""SSRF-safe download of one image URL (pure: no Django, no settings; the caller passes a policy).

Crawlers send us arbitrary URLs, and a worker that fetches them sits inside our network. So:

- only http and https, no credentials in the URL;
- the host is resolved once, through an injectable resolver, and EVERY address it resolves to
  must be public (no private, loopback, link-local, multicast, reserved, shared or cloud
  metadata address, IPv4 hidden in IPv6 included), unless the URL's host as written is listed
  in ``FetchPolicy.allowed_hosts`` (local demos and tests; the refusal names the setting that
  fills it, ``INGEST_FETCH_ALLOWED_HOSTS``);
- we then connect to exactly that checked address ourselves. Handing the URL to an HTTP
  library would make it resolve the name a second time, and a DNS answer that changes between
  check and connect (DNS rebinding) would walk straight past the check;
- redirects are followed by hand, each hop checked like the first;
- a connect timeout (which bounds the DNS lookup too), a per-read timeout, and one deadline
  over all hops and the whole body;
- the body is streamed under a byte cap and never decompressed (we ask for identity).

How the connection is made, and why not urllib3: urllib3 can be pointed at an IP with
``server_hostname``/``assert_hostname``, but its timeouts are per socket operation, so a server
trickling one byte per second survives any deadline, and its buffered reads cannot be cut short.
Instead we open the TCP socket to the checked address, wrap it with ``ssl`` (SNI and certificate
verification against the URL's host name), and let ``http.client`` write the request and parse

One module per step (the caller imports from here): `policy` (what the caller passes and gets
back), `target` (the URL, parsed and checked), `addresses` (the lookup and the address checks),
`exchange` (one request on one connection, under the deadline).
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urljoin

from ingest.fetching.addresses import ALLOWED_HOSTS_SETTING, Resolver, resolve_checked
from ingest.fetching.exchange import Exchange, read_body
from ingest.fetching.policy import (
    Disallowed,
    Fetched,
    FetchError,
    FetchPolicy,
    check_deadline,
    os_reason,
)
from ingest.fetching.target import parse_target

__all__ = [
    "ALLOWED_HOSTS_SETTING",
    "UNEXPECTED",
    "FetchError",
    "FetchPolicy",
    "Fetched",
    "Resolver",
    "fetch",
]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Client errors that say "try later" rather than "this URL is wrong".
_TRANSIENT_4XX = frozenset({408, 425, 429})


def fetch(url: str, *, policy: FetchPolicy, resolver: Resolver = socket.getaddrinfo) -> Fetched:
    """GET ``url`` under ``policy``; raise :class:`FetchError` with a short reason otherwise.

    Nothing else escapes: URLs and servers are hostile, and whatever they provoke is that one
    image refused, never the caller's job failed.
    """
    try:
        return _fetch(url, policy, resolver)
    except FetchError:
        raise
    except Exception as exc:
        # A case the checks of this package did not foresee. The property test fails on this
        # reason, so every case found gets a reason of its own; production refuses the image
        # meanwhile.
        raise FetchError(
            f"{UNEXPECTED} ({type(exc).__name__}: {os_reason(exc)})", transient=False
        ) from exc


UNEXPECTED = "unexpected fetch error"


def _fetch(url: str, policy: FetchPolicy, resolver: Resolver) -> Fetched:
    deadline = time.monotonic() + policy.total_deadline
    allowed = frozenset(h.lower().strip("[]") for h in policy.allowed_hosts)
    current = url
    for hop in range(policy.max_redirects + 1):
        try:
            target = parse_target(current)
            lookup_timeout = min(policy.connect_timeout, deadline - time.monotonic())
            addresses = resolve_checked(target, allowed, resolver, lookup_timeout)
        except Disallowed as refused:
            if hop == 0:
                raise
            what = "address" if refused.reason.startswith("address ") else "URL"
            raise Disallowed(f"redirect to a disallowed {what} ({refused.reason})") from None
        check_deadline(deadline, policy)
        with Exchange(target, addresses, policy, deadline) as response:
            if response.status in _REDIRECTS:
                location = response.getheader("Location")
                if not location:
                    raise FetchError(f"HTTP {response.status} without Location", transient=False)
                if hop == policy.max_redirects:
                    raise FetchError("too many redirects", transient=False)
                try:
                    current = urljoin(current, location.strip())
                except ValueError as exc:  # e.g. an unclosed IPv6 bracket
                    raise FetchError(
                        f"redirect to an invalid URL ({exc})", transient=False
                    ) from None
                continue
            if not 200 <= response.status < 300:
                raise FetchError(
                    f"HTTP {response.status}",
                    transient=response.status >= 500 or response.status in _TRANSIENT_4XX,
                )
            body = read_body(response, policy)
            return Fetched(
                body=body,
                final_url=current,
                content_type=(response.getheader("Content-Type") or "").strip(),
            )
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
