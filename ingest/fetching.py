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
the response over a socket adapter whose every ``recv`` is bounded by the remaining deadline.
"""

from __future__ import annotations

import functools
import http.client
import io
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from catalog.text import truncate

type IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
type Resolver = Callable[..., Sequence[tuple[Any, ...]]]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CHUNK = 64 * 1024
# Client errors that say "try later" rather than "this URL is wrong".
_TRANSIENT_4XX = frozenset({408, 425, 429})

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


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    # Host names or IP literals exempt from the address checks, compared case-insensitively with
    # the URL's host as written (never with what it resolves to): local demos and tests only.
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    connect_timeout: float = 5.0
    read_timeout: float = 10.0  # per socket read
    total_deadline: float = 30.0  # all hops, headers and body together
    max_bytes: int = 25 * 1024 * 1024
    max_redirects: int = 3
    user_agent: str = "fashion-archive-fetcher/1.0"
    # PEM file of trusted CAs instead of the system store (a private CA, tests). Verification
    # itself cannot be turned off.
    ca_bundle: str | None = None


@dataclass(frozen=True, slots=True)
class Fetched:
    body: bytes
    final_url: str
    content_type: str  # the header as sent ("" if none); the fetcher does not judge content


class FetchError(Exception):
    """A download that did not succeed. ``transient`` says whether retrying later may help."""

    def __init__(self, reason: str, *, transient: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


class _Disallowed(FetchError):
    """A URL or address the policy forbids (as opposed to one that failed)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, transient=False)


@dataclass(frozen=True, slots=True)
class _Target:
    scheme: str
    host: str  # lowercased, IPv6 without brackets, as written otherwise
    ascii_host: str  # IDNA form: for DNS, SNI, certificate check and the Host header
    port: int
    request_target: str  # path and query, percent-encoded

    @property
    def host_header(self) -> str:
        host = f"[{self.ascii_host}]" if ":" in self.ascii_host else self.ascii_host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


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
        # A case the checks below did not foresee. The property test fails on this reason, so
        # every case found gets a reason of its own; production refuses the image meanwhile.
        raise FetchError(
            f"{UNEXPECTED} ({type(exc).__name__}: {_os_reason(exc)})", transient=False
        ) from exc


UNEXPECTED = "unexpected fetch error"


def _fetch(url: str, policy: FetchPolicy, resolver: Resolver) -> Fetched:
    deadline = time.monotonic() + policy.total_deadline
    allowed = frozenset(h.lower().strip("[]") for h in policy.allowed_hosts)
    current = url
    for hop in range(policy.max_redirects + 1):
        try:
            target = _parse(current)
            lookup_timeout = min(policy.connect_timeout, deadline - time.monotonic())
            addresses = _resolve_checked(target, allowed, resolver, lookup_timeout)
        except _Disallowed as refused:
            if hop == 0:
                raise
            what = "address" if refused.reason.startswith("address ") else "URL"
            raise _Disallowed(f"redirect to a disallowed {what} ({refused.reason})") from None
        _check_deadline(deadline, policy)
        with _Exchange(target, addresses, policy, deadline) as response:
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
            body = _read_body(response, policy)
            return Fetched(
                body=body,
                final_url=current,
                content_type=(response.getheader("Content-Type") or "").strip(),
            )
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def _parse(url: str) -> _Target:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a bad port, or brackets that are not an IPv6 address
        raise FetchError(f"invalid URL ({exc})", transient=False) from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise _Disallowed(f"scheme {scheme or '(none)'} is not allowed")
    if "@" in parts.netloc:
        # userinfo is never legitimate for an image and is the classic way to make a URL's
        # host look like something it is not (http://cdn.example@10.0.0.1/)
        raise _Disallowed("credentials in the URL are not allowed")
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
    return _Target(
        scheme=scheme,
        host=host,
        ascii_host=ascii_host,
        port=port or _DEFAULT_PORTS[scheme],
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


def _lookup(resolver: Resolver, target: _Target, timeout: float) -> Sequence[tuple[Any, ...]]:
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


def _resolve_checked(
    target: _Target, allowed: frozenset[str], resolver: Resolver, timeout: float
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
                f"host {target.host} could not be resolved ({_os_reason(exc)})", transient=True
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
                raise _Disallowed(f"address {ip} is {refusal}{_exemption_hint(target, refusal)}")
    return candidates


# The setting that fills FetchPolicy.allowed_hosts (config.settings): a refusal of a local
# address names it, so whoever runs a demo against their own machine learns the way out.
ALLOWED_HOSTS_SETTING = "INGEST_FETCH_ALLOWED_HOSTS"


def _exemption_hint(target: _Target, refusal: str) -> str:
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


class _Exchange:
    """One request on one fresh connection to an already checked address.

    Entering it connects, sends the GET and reads the status line and headers; leaving it
    closes the socket whatever happened (we never reuse connections, so nothing is drained).
    """

    def __init__(
        self,
        target: _Target,
        addresses: list[tuple[int, tuple[Any, ...]]],
        policy: FetchPolicy,
        deadline: float,
    ) -> None:
        self._target = target
        self._addresses = addresses
        self._policy = policy
        self._deadline = deadline
        self._sock: socket.socket | None = None

    def __enter__(self) -> http.client.HTTPResponse:
        try:
            self._sock = self._connect()
            if self._target.scheme == "https":
                self._sock = self._tls(self._sock)
            return self._request(self._sock)
        except BaseException:
            self._close()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self._close()

    def _close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _connect(self) -> socket.socket:
        # Tried in resolver order, like socket.create_connection (which we cannot use: it
        # would resolve the name again). _resolve_checked never returns an empty list.
        last_error = FetchError("no address to connect to", transient=True)
        for family, sockaddr in self._addresses:
            remaining = _check_deadline(self._deadline, self._policy)
            try:
                sock = socket.socket(family, socket.SOCK_STREAM)
            except OSError as exc:
                # A machine without IPv6 (or IPv4) sockets: this address is unreachable from
                # here, whatever the retries; the next address may still do.
                last_error = FetchError(
                    f"cannot connect to {sockaddr[0]} ({_os_reason(exc)})", transient=False
                )
                continue
            sock.settimeout(min(self._policy.connect_timeout, remaining))
            try:
                sock.connect(sockaddr)
            except TimeoutError:
                sock.close()
                _check_deadline(self._deadline, self._policy)
                last_error = FetchError("connect timeout", transient=True)
            except ConnectionRefusedError:
                sock.close()
                last_error = FetchError("connection refused", transient=True)
            except OSError as exc:
                sock.close()
                last_error = FetchError(f"cannot connect ({_os_reason(exc)})", transient=True)
            else:
                return sock
        raise last_error

    def _tls(self, sock: socket.socket) -> ssl.SSLSocket:
        remaining = _check_deadline(self._deadline, self._policy)
        # The handshake honours the socket timeout as one budget for the whole handshake
        # (CPython keeps a deadline across its internal retries), so this bounds it.
        sock.settimeout(min(self._policy.connect_timeout, remaining))
        try:
            return _tls_context(self._policy.ca_bundle).wrap_socket(
                sock, server_hostname=self._target.ascii_host
            )
        except ssl.SSLCertVerificationError as exc:
            reason = exc.verify_message or "certificate verification failed"
            raise FetchError(f"TLS: {reason}", transient=False) from None
        except TimeoutError:
            _check_deadline(self._deadline, self._policy)
            raise FetchError("TLS handshake timeout", transient=True) from None
        except (ssl.SSLError, OSError) as exc:
            raise FetchError(f"TLS handshake failed ({_os_reason(exc)})", transient=True) from None
        except ValueError as exc:  # a server name ssl will not send (its own IDNA checks)
            raise FetchError(f"TLS: {exc}", transient=False) from None

    def _request(self, sock: socket.socket) -> http.client.HTTPResponse:
        target, policy = self._target, self._policy
        # HTTPConnection only formats the request and parses the response here: its sock is
        # set before any send, so it never connects (nor resolves) anything itself.
        conn = http.client.HTTPConnection(target.ascii_host, target.port)
        conn.sock = _DeadlineSocket(sock, policy, self._deadline)
        try:
            conn.putrequest("GET", target.request_target, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", target.host_header)
            conn.putheader("User-Agent", policy.user_agent)
            conn.putheader("Accept", "image/*, */*;q=0.5")
            # Never decompress: a 25 MB cap on gzip bytes says nothing about what they inflate to.
            conn.putheader("Accept-Encoding", "identity")
            conn.putheader("Connection", "close")
            conn.endheaders()
            response = conn.getresponse()
        except FetchError:
            raise
        except TimeoutError:
            raise FetchError("read timeout", transient=True) from None
        except http.client.RemoteDisconnected:  # also a ConnectionError: keep it first
            raise FetchError("server closed the connection", transient=True) from None
        except ConnectionError as exc:
            raise FetchError(f"connection lost ({_os_reason(exc)})", transient=True) from None
        except (http.client.HTTPException, ValueError) as exc:
            raise FetchError(f"malformed HTTP response ({exc})", transient=False) from None
        except OSError as exc:
            raise FetchError(f"network error ({_os_reason(exc)})", transient=True) from None
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise FetchError(f"content-encoding {encoding} not accepted", transient=False)
        return response


def _read_body(response: http.client.HTTPResponse, policy: FetchPolicy) -> bytes:
    if response.length is not None and response.length > policy.max_bytes:
        # Refuse before reading a byte; without Content-Length the cap below still holds.
        raise FetchError(f"body larger than {policy.max_bytes} bytes", transient=False)
    parts: list[bytes] = []
    size = 0
    try:
        # read1: at most one recv per call, so every recv meets the deadline check in
        # _DeadlineSocket; read(n) would loop inside http.client until n bytes arrived.
        while chunk := response.read1(_CHUNK):
            size += len(chunk)
            if size > policy.max_bytes:
                raise FetchError(f"body larger than {policy.max_bytes} bytes", transient=False)
            parts.append(chunk)
    except TimeoutError:
        raise FetchError("read timeout", transient=True) from None
    except http.client.IncompleteRead:
        raise FetchError("connection closed before the body was complete", transient=True) from None
    except ConnectionError as exc:
        raise FetchError(f"connection lost ({_os_reason(exc)})", transient=True) from None
    except (http.client.HTTPException, ValueError) as exc:
        raise FetchError(f"malformed HTTP response ({exc})", transient=False) from None
    except OSError as exc:  # TLS errors mid-body among them
        raise FetchError(f"network error ({_os_reason(exc)})", transient=True) from None
    if response.length:  # Content-Length promised more than arrived before EOF
        raise FetchError("connection closed before the body was complete", transient=True)
    return b"".join(parts)


class _DeadlineSocket:
    """The socket as http.client sees it: every recv is bounded by the remaining deadline.

    http.client only calls ``sendall``, ``makefile`` and ``close`` on it. ``close`` is left to
    :class:`_Exchange`, because http.client closes its side as soon as the headers say
    "Connection: close", while we still read the body through the file.
    """

    def __init__(self, sock: socket.socket, policy: FetchPolicy, deadline: float) -> None:
        self._sock = sock
        self._policy = policy
        self._deadline = deadline

    def sendall(self, data: bytes) -> None:
        remaining = _check_deadline(self._deadline, self._policy)
        self._sock.settimeout(min(self._policy.read_timeout, remaining))
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb") -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._policy, self._deadline))

    def close(self) -> None:
        pass


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: socket.socket, policy: FetchPolicy, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._policy = policy
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        # A per-read timeout alone lets a server that sends one byte every few seconds keep us
        # forever; shrinking each recv's timeout to what is left of the deadline does not.
        remaining = _check_deadline(self._deadline, self._policy)
        self._sock.settimeout(min(self._policy.read_timeout, remaining))
        try:
            return self._sock.recv_into(buffer)
        except TimeoutError:
            _check_deadline(self._deadline, self._policy)
            raise FetchError("read timeout", transient=True) from None


def _check_deadline(deadline: float, policy: FetchPolicy) -> float:
    """Seconds left before ``deadline``; raise the deadline error if there are none."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        # Transient like the other timeouts: a slow CDN often recovers; the caller decides
        # how many retries a slow server deserves.
        raise FetchError(f"deadline of {policy.total_deadline:g}s exceeded", transient=True)
    return remaining


@functools.lru_cache(maxsize=8)
def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    # create_default_context: CERT_REQUIRED + check_hostname, TLS >= 1.2. Built once per bundle
    # (loading the system store costs milliseconds); an SSLContext is safe to share between
    # threads for wrapping sockets.
    return ssl.create_default_context(cafile=ca_bundle)


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
