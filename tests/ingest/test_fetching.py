"""ingest.fetching against real HTTP(S) servers on 127.0.0.1 (no network needed)."""

from __future__ import annotations

import datetime as dt
import errno
import io
import ipaddress
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from PIL import Image

from ingest.fetching import UNEXPECTED, Fetched, FetchError, FetchPolicy, fetch
from ingest.hashing import ImageRefused, analyse_image

LOCAL = frozenset({"127.0.0.1"})
HTML = b"<!doctype html><html><body>Please enable JavaScript</body></html>"


def jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 90)).save(buffer, "JPEG")
    return buffer.getvalue()


JPEG = jpeg_bytes()


# --- a real local server -------------------------------------------------------------------

type Route = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class LocalServer:
    base: str
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    *,
    content_type: str = "application/octet-stream",
    headers: dict[str, str] | None = None,
    length: int | None = -1,
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    if length is not None:
        handler.send_header("Content-Length", str(len(body) if length == -1 else length))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def redirect(location: str, status: int = 302) -> Route:
    return lambda h: send(h, status, headers={"Location": location})


def trickle_body(handler: BaseHTTPRequestHandler) -> None:
    send(handler, 200, content_type="image/jpeg", length=1000)
    _trickle(handler, b"x" * 100)


def trickle_headers(handler: BaseHTTPRequestHandler) -> None:
    _trickle(handler, b"HTTP/1.0 200 OK\r\nContent-Type: image/jpeg\r\n" + b"X-Pad: 1\r\n" * 30)


def _trickle(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    for byte in data:  # bounded: the thread ends even if the client never hangs up
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.1)


def chunked(body: bytes) -> Route:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\n")
        handler.wfile.write(b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        for start in range(0, len(body), 1000):
            piece = body[start : start + 1000]
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        handler.wfile.write(b"0\r\n\r\n")

    return route


def unsized(body: bytes) -> Route:
    # HTTP/1.0 without Content-Length: the body ends when the server closes the connection
    return lambda h: send(h, 200, body, content_type="image/jpeg", length=None)


def cut_short(h: BaseHTTPRequestHandler) -> None:
    send(h, 200, JPEG[:100], content_type="image/jpeg", length=len(JPEG))


def slow_answer(h: BaseHTTPRequestHandler) -> None:
    time.sleep(1.0)
    send(h, 200, JPEG, content_type="image/jpeg")


def serve_routes(server: LocalServer, tls: ssl.SSLContext | None = None) -> Iterator[LocalServer]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's naming
            server.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            route = server.routes.get(self.path.split("?", 1)[0])
            if route is None:
                send(self, 404, b"no such route")
                return
            try:
                route(self)
            except OSError:  # the client hung up on a trickle or a slow answer: expected
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    scheme = "https" if tls else "http"
    server.base = f"{scheme}://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def http_server() -> Iterator[LocalServer]:
    server = LocalServer(base="")
    server.routes.update(
        {
            "/image.jpg": lambda h: send(h, 200, JPEG, content_type="image/jpeg"),
            "/missing": lambda h: send(h, 404, b"not found"),
            "/busy": lambda h: send(h, 503, b"try later"),
            "/throttled": lambda h: send(h, 429, b"slow down"),
            "/r/0": lambda h: send(h, 200, JPEG, content_type="image/jpeg"),
            "/r/1": redirect("/r/0", 301),
            "/r/2": redirect("1", 307),  # relative to /r/2 -> /r/1
            "/r/3": redirect("/r/2", 308),
            "/r/4": redirect("/r/3", 303),
            "/to-metadata": redirect("http://169.254.169.254/latest/meta-data/"),
            "/to-private": redirect("http://10.0.0.1/"),
            "/to-ftp": redirect("ftp://127.0.0.1/image.jpg"),
            "/no-location": lambda h: send(h, 302),
            "/huge-declared": lambda h: send(h, 200, b"", content_type="image/jpeg", length=10**10),
            "/big": lambda h: send(h, 200, b"x" * 5000, content_type="image/jpeg"),
            "/big-unsized": unsized(b"x" * 5000),
            "/unsized": unsized(JPEG),
            "/chunked": chunked(JPEG),
            "/big-chunked": chunked(b"x" * 5000),
            "/gzip": lambda h: send(h, 200, b"\x1f\x8b...", headers={"Content-Encoding": "gzip"}),
            "/cut-short": cut_short,
            "/hang-up": lambda h: setattr(h, "close_connection", True),  # no response at all
            "/trickle": trickle_body,
            "/trickle-headers": trickle_headers,
            "/slow": slow_answer,
            "/html-as-jpeg": lambda h: send(h, 200, HTML, content_type="image/jpeg"),
        }
    )
    yield from serve_routes(server)


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every address a socket connects to during the test (the servers only accept)."""
    calls: list[Any] = []
    original = socket.socket.connect

    def recording_connect(self: socket.socket, address: Any) -> None:
        calls.append(address)
        original(self, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    return calls


def no_resolver(*args: object, **kwargs: object) -> list[Any]:
    raise AssertionError(f"the resolver must not be called: {args}")


def resolver_for(*addresses: str) -> Callable[..., list[Any]]:
    def resolve(host: str, port: int, *args: object, **kwargs: object) -> list[Any]:
        result = []
        for address in addresses:
            if ipaddress.ip_address(address).version == 6:
                result.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                result.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return result

    return resolve


def refused(url: str, policy: FetchPolicy, **kwargs: Any) -> FetchError:
    with pytest.raises(FetchError) as error:
        fetch(url, policy=policy, **kwargs)
    return error.value


# --- success ---------------------------------------------------------------------------------


def test_fetches_an_image(http_server: LocalServer) -> None:
    result = fetch(http_server.url("/image.jpg"), policy=FetchPolicy(allowed_hosts=LOCAL))

    assert result == Fetched(
        body=JPEG, final_url=http_server.url("/image.jpg"), content_type="image/jpeg"
    )


def test_sends_host_identity_encoding_and_user_agent(http_server: LocalServer) -> None:
    http_server.requests.clear()
    policy = FetchPolicy(allowed_hosts=LOCAL, user_agent="archive-test/1")

    fetch(http_server.url("/image.jpg?size=large&x=a b"), policy=policy)

    path, headers = http_server.requests[-1]
    assert path == "/image.jpg?size=large&x=a%20b"
    assert headers["host"] == f"127.0.0.1:{http_server.port}"
    assert headers["accept-encoding"] == "identity"
    assert headers["user-agent"] == "archive-test/1"


def test_allowed_hosts_match_the_host_as_written_case_insensitively(
    http_server: LocalServer,
) -> None:
    # given an allowed name that the injected resolver maps to the local server
    policy = FetchPolicy(allowed_hosts=frozenset({"Archive.Test"}))
    calls: list[str] = []

    def resolve(host: str, port: int, *args: object, **kwargs: object) -> list[Any]:
        calls.append(host)
        return resolver_for("127.0.0.1")(host, port)

    http_server.requests.clear()
    url = f"http://ARCHIVE.test:{http_server.port}/image.jpg"

    # when fetched, the resolver is asked once and its checked answer is what we connect to
    # (the system resolver could not even resolve this name): no second lookup
    result = fetch(url, policy=policy, resolver=resolve)

    assert result.body == JPEG
    assert calls == ["archive.test"]
    assert http_server.requests[-1][1]["host"] == f"archive.test:{http_server.port}"


def test_follows_redirects_within_the_limit(http_server: LocalServer) -> None:
    result = fetch(http_server.url("/r/3"), policy=FetchPolicy(allowed_hosts=LOCAL))

    assert result.body == JPEG
    assert result.final_url == http_server.url("/r/0")


@pytest.mark.parametrize("path", ["/chunked", "/unsized"])
def test_reads_chunked_and_unsized_bodies(http_server: LocalServer, path: str) -> None:
    result = fetch(http_server.url(path), policy=FetchPolicy(allowed_hosts=LOCAL))

    assert result.body == JPEG


def test_html_served_as_jpeg_is_fetched_and_then_refused_by_the_image_check(
    http_server: LocalServer,
) -> None:
    # the fetcher does not judge content...
    result = fetch(http_server.url("/html-as-jpeg"), policy=FetchPolicy(allowed_hosts=LOCAL))
    assert (result.body, result.content_type) == (HTML, "image/jpeg")

    # ...the image check does, whatever the Content-Type said
    with pytest.raises(ImageRefused, match="not a JPEG"):
        analyse_image(result.body, max_pixels=64_000_000)


# --- HTTP errors and their classification -----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "reason", "transient"),
    [
        ("/missing", "HTTP 404", False),
        ("/busy", "HTTP 503", True),
        ("/throttled", "HTTP 429", True),
        ("/no-location", "HTTP 302 without Location", False),
        ("/cut-short", "connection closed before the body was complete", True),
        ("/gzip", "content-encoding gzip not accepted", False),
        ("/hang-up", "server closed the connection", True),
    ],
)
def test_http_failures(http_server: LocalServer, path: str, reason: str, transient: bool) -> None:
    error = refused(http_server.url(path), FetchPolicy(allowed_hosts=LOCAL))

    assert (error.reason, error.transient) == (reason, transient)


def test_too_many_redirects(http_server: LocalServer) -> None:
    error = refused(http_server.url("/r/4"), FetchPolicy(allowed_hosts=LOCAL, max_redirects=3))

    assert (error.reason, error.transient) == ("too many redirects", False)


def test_connection_refused_is_transient() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    error = refused(f"http://127.0.0.1:{port}/", FetchPolicy(allowed_hosts=LOCAL))

    assert (error.reason, error.transient) == ("connection refused", True)


@pytest.fixture
def unresponsive_port() -> Iterator[int]:
    """A port whose SYNs go unanswered: Linux drops them while the accept queue is full."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.05)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


@pytest.mark.skipif(sys.platform != "linux", reason="relies on Linux dropping SYNs on a full queue")
def test_connect_timeout_is_transient(unresponsive_port: int) -> None:
    policy = FetchPolicy(allowed_hosts=LOCAL, connect_timeout=0.3)

    started = time.monotonic()
    error = refused(f"http://127.0.0.1:{unresponsive_port}/", policy)

    assert (error.reason, error.transient) == ("connect timeout", True)
    assert time.monotonic() - started < 2.0


@pytest.mark.skipif(sys.platform != "linux", reason="relies on Linux dropping SYNs on a full queue")
def test_the_deadline_also_bounds_connecting(unresponsive_port: int) -> None:
    policy = FetchPolicy(allowed_hosts=LOCAL, connect_timeout=5.0, total_deadline=0.3)

    started = time.monotonic()
    error = refused(f"http://127.0.0.1:{unresponsive_port}/", policy)

    assert (error.reason, error.transient) == ("deadline of 0.3s exceeded", True)
    assert time.monotonic() - started < 2.0


def test_read_timeout_is_transient(http_server: LocalServer) -> None:
    policy = FetchPolicy(allowed_hosts=LOCAL, read_timeout=0.2)

    started = time.monotonic()
    error = refused(http_server.url("/slow"), policy)

    assert (error.reason, error.transient) == ("read timeout", True)
    assert time.monotonic() - started < 2.0


# --- address checks: nothing reaches a forbidden address --------------------------------------


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("127.0.0.1", "loopback"),
        ("127.1.2.3", "loopback"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - it is the address under test
        ("169.254.169.254", "a cloud metadata address"),
        ("169.254.10.10", "link-local"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("100.100.100.200", "a cloud metadata address"),
        ("168.63.129.16", "a cloud metadata address"),
        ("224.0.0.251", "multicast"),
        ("240.0.0.1", "reserved"),
        ("198.18.0.1", "private"),
        ("[::1]", "loopback"),
        ("[::]", "unspecified"),
        ("[fe80::1]", "link-local"),
        ("[fc00::1]", "private"),
        ("[fd00:ec2::254]", "a cloud metadata address"),
        ("[ff02::1]", "multicast"),
        ("[::ffff:10.0.0.1]", "private (as 10.0.0.1)"),
        ("[::ffff:169.254.169.254]", "a cloud metadata address (as 169.254.169.254)"),
        ("[::ffff:127.0.0.1]", "loopback (as 127.0.0.1)"),
        ("[64:ff9b::a9fe:a9fe]", "a cloud metadata address (as 169.254.169.254)"),
        ("[2002:a00:1::]", "private (as 10.0.0.1)"),
    ],
)
def test_forbidden_ip_literals_are_refused_without_connecting(
    connects: list[Any], host: str, kind: str
) -> None:
    error = refused(f"http://{host}:8080/latest/meta-data/", FetchPolicy(), resolver=no_resolver)

    address = ipaddress.ip_address(host.strip("[]"))
    # The way out for a local demo is named, except for a metadata address (no demo needs it)
    hint = (
        "" if "metadata" in kind else f"; {host.strip('[]')} is not in INGEST_FETCH_ALLOWED_HOSTS"
    )
    assert error.reason == f"address {address} is {kind}{hint}"
    assert error.transient is False
    assert connects == []


def test_localhost_is_refused_unless_allowed_by_name(
    http_server: LocalServer, connects: list[Any]
) -> None:
    # "127.0.0.1" is allowed, but the check compares the host as written, not what it resolves to
    url = f"http://localhost:{http_server.port}/image.jpg"

    error = refused(url, FetchPolicy(allowed_hosts=LOCAL))

    assert error.reason == (
        "address 127.0.0.1 is loopback; localhost is not in INGEST_FETCH_ALLOWED_HOSTS"
    )
    assert error.transient is False
    assert connects == []


def test_every_resolved_address_is_checked(connects: list[Any]) -> None:
    # given a name whose DNS answer mixes a public address with a loopback one
    resolve = resolver_for("93.184.215.14", "127.0.0.1")

    error = refused("http://cdn.example.com/look-1.jpg", FetchPolicy(), resolver=resolve)

    assert error.reason == (
        "address 127.0.0.1 is loopback; cdn.example.com is not in INGEST_FETCH_ALLOWED_HOSTS"
    )
    assert connects == []


def test_a_public_address_passes_and_is_the_one_connected_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a public answer, and a network that refuses every connection (no traffic leaves)
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    resolve = resolver_for("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")

    error = refused("https://cdn.example.com/look-1.jpg", FetchPolicy(), resolver=resolve)

    # then the checked addresses themselves were tried, in order, on the URL's port
    assert error.reason == "connection refused"
    assert error.transient is True
    assert attempts == [
        ("93.184.215.14", 443),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", 443, 0, 0),
    ]


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (
            "/to-metadata",
            "redirect to a disallowed address "
            "(address 169.254.169.254 is a cloud metadata address)",
        ),
        (
            "/to-private",
            "redirect to a disallowed address "
            "(address 10.0.0.1 is private; 10.0.0.1 is not in INGEST_FETCH_ALLOWED_HOSTS)",
        ),
        ("/to-ftp", "redirect to a disallowed URL (scheme ftp is not allowed)"),
    ],
)
def test_redirects_to_forbidden_targets_are_refused_before_connecting(
    http_server: LocalServer, connects: list[Any], path: str, reason: str
) -> None:
    error = refused(http_server.url(path), FetchPolicy(allowed_hosts=LOCAL))

    assert (error.reason, error.transient) == (reason, False)
    # only the first hop, to the local server, was ever connected
    assert connects == [("127.0.0.1", http_server.port)]


def test_redirect_to_a_name_resolving_privately_is_refused(
    http_server: LocalServer, connects: list[Any]
) -> None:
    # given a redirect to a name whose DNS answer is a private address
    http_server.routes["/to-intranet"] = redirect("http://intranet.example/admin")
    resolve = resolver_for("10.1.2.3")

    error = refused(
        http_server.url("/to-intranet"), FetchPolicy(allowed_hosts=LOCAL), resolver=resolve
    )

    assert error.reason == (
        "redirect to a disallowed address "
        "(address 10.1.2.3 is private; intranet.example is not in INGEST_FETCH_ALLOWED_HOSTS)"
    )
    assert connects == [("127.0.0.1", http_server.port)]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://127.0.0.1/image.jpg", "scheme ftp is not allowed"),
        ("file:///etc/passwd", "scheme file is not allowed"),
        ("gopher://127.0.0.1:70/_x", "scheme gopher is not allowed"),
        ("/relative/path.jpg", "scheme (none) is not allowed"),
        ("http://user:secret@127.0.0.1/image.jpg", "credentials in the URL are not allowed"),
        ("http://cdn.example.com@10.0.0.1/image.jpg", "credentials in the URL are not allowed"),
        ("http:///image.jpg", "URL has no host"),
    ],
)
def test_urls_refused_before_any_lookup(connects: list[Any], url: str, reason: str) -> None:
    error = refused(url, FetchPolicy(allowed_hosts=LOCAL), resolver=no_resolver)

    assert (error.reason, error.transient) == (reason, False)
    assert connects == []


def test_unknown_host_is_a_permanent_failure() -> None:
    def nxdomain(*args: object, **kwargs: object) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    error = refused("http://no-such-host.example/x.jpg", FetchPolicy(), resolver=nxdomain)

    assert (error.reason, error.transient) == ("host no-such-host.example not found", False)


# --- size and time limits ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/big", "/big-unsized", "/big-chunked", "/huge-declared"])
def test_bodies_over_the_cap_are_refused(http_server: LocalServer, path: str) -> None:
    # /huge-declared announces 10 GB and sends nothing: refused on the header alone, at once
    policy = FetchPolicy(allowed_hosts=LOCAL, max_bytes=1000, read_timeout=5.0)

    started = time.monotonic()
    error = refused(http_server.url(path), policy)

    assert (error.reason, error.transient) == ("body larger than 1000 bytes", False)
    assert time.monotonic() - started < 3.0


def test_exactly_the_cap_is_accepted(http_server: LocalServer) -> None:
    policy = FetchPolicy(allowed_hosts=LOCAL, max_bytes=len(JPEG))

    assert fetch(http_server.url("/image.jpg"), policy=policy).body == JPEG


@pytest.mark.parametrize("path", ["/trickle", "/trickle-headers"])
def test_a_trickling_server_is_cut_at_the_deadline(http_server: LocalServer, path: str) -> None:
    # one byte every 0.1 s never trips the 1 s read timeout; only the total deadline stops it
    policy = FetchPolicy(allowed_hosts=LOCAL, read_timeout=1.0, total_deadline=1.5)

    started = time.monotonic()
    error = refused(http_server.url(path), policy)
    elapsed = time.monotonic() - started

    assert (error.reason, error.transient) == ("deadline of 1.5s exceeded", True)
    assert 1.4 < elapsed < 3.0


def test_a_dns_lookup_that_hangs_is_cut_at_the_connect_timeout() -> None:
    # getaddrinfo has no timeout: a hostile DNS server could hold the download thread for as
    # long as the system resolver retries. The fetch gives up at the connect timeout.
    release = threading.Event()

    def hanging_resolver(*args: object, **kwargs: object) -> list[Any]:
        release.wait(10)
        return resolver_for("93.184.215.14")(*args, **kwargs)

    policy = FetchPolicy(connect_timeout=0.5, total_deadline=5.0)
    started = time.monotonic()
    try:
        error = refused("http://slow-dns.example/a.jpg", policy, resolver=hanging_resolver)
    finally:
        release.set()

    assert (error.reason, error.transient) == ("host slow-dns.example lookup timed out", True)
    assert time.monotonic() - started < 2.0


def test_a_lookup_error_still_says_what_it_was() -> None:
    def unknown_host(*args: object, **kwargs: object) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    error = refused("http://nowhere.example/a.jpg", FetchPolicy(), resolver=unknown_host)

    assert (error.reason, error.transient) == ("host nowhere.example not found", False)


# --- HTTPS without the network: a throw-away CA ------------------------------------------------


@dataclass
class Pki:
    ca_file: str
    server_context: ssl.SSLContext


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder: Path = tmp_path_factory.mktemp("pki")
    now = dt.datetime.now(dt.UTC)

    def certificate(
        subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: Any, *, ca: bool
    ) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            ).add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.DNSName("archive.test"),
                        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    ]
                ),
                critical=False,
            ).add_extension(
                x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Archive Test CA")])
    ca_cert = certificate("Archive Test CA", ca_key, ca_name, ca_key, ca=True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf_cert = certificate("archive.test", leaf_key, ca_cert.subject, ca_key, ca=False)

    ca_file = folder / "ca.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    chain_file = folder / "server.pem"
    chain_file.write_bytes(
        leaf_cert.public_bytes(serialization.Encoding.PEM)
        + leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(chain_file)
    return Pki(ca_file=str(ca_file), server_context=server_context)


@pytest.fixture(scope="module")
def https_server(pki: Pki) -> Iterator[LocalServer]:
    server = LocalServer(base="")
    server.routes["/image.jpg"] = lambda h: send(h, 200, JPEG, content_type="image/jpeg")
    yield from serve_routes(server, tls=pki.server_context)


def test_https_verifies_the_certificate_against_the_url_host(
    https_server: LocalServer, pki: Pki
) -> None:
    # given a name resolved (once, by us) to 127.0.0.1 and a certificate issued for that name
    policy = FetchPolicy(allowed_hosts=frozenset({"archive.test"}), ca_bundle=pki.ca_file)
    url = f"https://archive.test:{https_server.port}/image.jpg"

    result = fetch(url, policy=policy, resolver=resolver_for("127.0.0.1"))

    assert result.body == JPEG


def test_https_to_an_ip_literal_checks_the_ip_in_the_certificate(
    https_server: LocalServer, pki: Pki
) -> None:
    policy = FetchPolicy(allowed_hosts=LOCAL, ca_bundle=pki.ca_file)

    assert fetch(https_server.url("/image.jpg"), policy=policy).body == JPEG


def test_https_refuses_a_certificate_for_another_name(https_server: LocalServer, pki: Pki) -> None:
    policy = FetchPolicy(allowed_hosts=frozenset({"other.test"}), ca_bundle=pki.ca_file)
    url = f"https://other.test:{https_server.port}/image.jpg"

    error = refused(url, policy, resolver=resolver_for("127.0.0.1"))

    assert error.reason.startswith("TLS: ")
    assert "mismatch" in error.reason
    assert error.transient is False


def test_https_refuses_an_untrusted_issuer_by_default(https_server: LocalServer) -> None:
    # no ca_bundle: the system trust store, which has never heard of our test CA
    policy = FetchPolicy(allowed_hosts=LOCAL)

    error = refused(https_server.url("/image.jpg"), policy)

    assert error.reason.startswith("TLS: ")
    assert "certificate" in error.reason
    assert error.transient is False


# --- hostile URLs and redirects: FetchError and nothing else ---------------------------------


def idna_resolver(host: str, port: int, *args: object, **kwargs: object) -> list[Any]:
    """127.0.0.1 for every name, after the IDNA step getaddrinfo itself applies first (it
    raises UnicodeError on an empty or over-long label)."""
    host.encode("idna")
    return resolver_for("127.0.0.1")(host, port)


def raw_redirect(location: bytes) -> Route:
    """A redirect whose Location is exactly these bytes, whatever they are."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\n")
        handler.wfile.write(b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        handler.close_connection = True

    return route


@pytest.fixture
def only_our_server(monkeypatch: pytest.MonkeyPatch, http_server: LocalServer) -> None:
    """Sockets may connect to the test's server and nowhere else: an arbitrary URL names public
    addresses (which pass the address check) and this machine's other services."""
    original = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if address[:2] != ("127.0.0.1", http_server.port):
            raise ConnectionRefusedError(111, "Connection refused (test: not our server)")
        original(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        (b"http://[::1/a.jpg", "redirect to an invalid URL (Invalid IPv6 URL)"),
        (b"http://[not-an-address]/a.jpg", "redirect to an invalid URL"),
        (b"http://cdn..example.com/a.jpg", "invalid host name 'cdn..example.com'"),
        (b"http://." + b"/a.jpg", "invalid host name '.'"),
        (b"http://" + b"a" * 64 + b".example.com/a.jpg", "invalid host name 'aaaaaaa"),
        (b"http://" + b"a." * 127 + b"b/a.jpg", "invalid host name 'a.a.a."),
        (b"http://cdn.example.com:99999/a.jpg", "invalid URL (Port out of range 0-65535)"),
        (b"http://cdn.example.com:-1/a.jpg", "invalid URL (Port could not be cast"),
        (b"http://cdn.example.com:0/a.jpg", "invalid URL (port 0)"),
        (b"http://cdn.exa\x00mple.com/a.jpg", "invalid host name 'cdn.exa\\x00mple.com'"),
        (b"http://cdn example.com/a.jpg", "invalid host name 'cdn example.com'"),
    ],
)
def test_a_malformed_location_is_a_fetch_error(
    http_server: LocalServer, only_our_server: None, location: bytes, reason: str
) -> None:
    http_server.routes["/malformed"] = raw_redirect(location)

    error = refused(
        http_server.url("/malformed"), FetchPolicy(allowed_hosts=LOCAL), resolver=idna_resolver
    )

    assert error.reason.startswith(reason), error.reason
    assert not error.transient


class SocketsWithoutIPv6(socket.socket):
    """socket.socket on a machine whose kernel has no IPv6."""

    def __init__(self, family: Any = -1, type: Any = -1, proto: Any = -1, fileno: Any = None):
        if family == socket.AF_INET6 and fileno is None:
            raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")
        super().__init__(family, type, proto, fileno)


@pytest.fixture
def no_ipv6(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", SocketsWithoutIPv6)


def test_without_ipv6_a_dual_stack_host_is_fetched_over_ipv4(
    http_server: LocalServer, no_ipv6: None
) -> None:
    policy = FetchPolicy(allowed_hosts=frozenset({"dual.example"}))
    url = f"http://dual.example:{http_server.port}/image.jpg"

    fetched = fetch(url, policy=policy, resolver=resolver_for("::1", "127.0.0.1"))

    assert fetched.body == JPEG


@pytest.mark.parametrize("url", ["http://v6only.example/a.jpg", "http://[::1]/a.jpg"])
def test_without_ipv6_an_ipv6_only_host_is_a_fetch_error(no_ipv6: None, url: str) -> None:
    policy = FetchPolicy(allowed_hosts=frozenset({"v6only.example", "::1"}))

    error = refused(url, policy, resolver=resolver_for("::1"))

    assert error.reason == "cannot connect to ::1 (address family not supported by protocol)"
    assert not error.transient


# Hosts worth trying on top of arbitrary text: what parsers, IDNA and resolvers trip on.
TRICKY_HOSTS = st.sampled_from(
    [
        "127.0.0.1",
        "[::1]",
        "[::1",
        "::1]",
        "[fe80::1%25lo]",
        "[::ffff:127.0.0.1]",
        "[v1.x]",
        "localhost",
        "a..b",
        ".",
        "..",
        "-",
        "a" * 64,
        "a." * 127 + "b",
        "xn--",
        "xn--zz",
        "0x7f.1",
        "2130706433",
        "user@127.0.0.1",
        "exa\x00mple",
        "ex ample",
        "例え.テスト",
        "8.8.8.8",
        "[2001:db8::1]",
    ]
)
PORTS = st.one_of(
    st.just(""),
    st.integers(min_value=-5, max_value=70_000).map(lambda p: f":{p}"),
    st.text(max_size=6).map(lambda t: f":{t}"),
)
HOSTS = st.one_of(
    TRICKY_HOSTS,
    st.text(max_size=20),
    st.lists(st.text(alphabet="ab-_.é\x00 [:]%", max_size=70), max_size=4).map(".".join),
)
URLS = st.one_of(
    st.text(max_size=80),
    st.builds(
        "{}://{}{}/{}".format,
        st.sampled_from(["http", "https", "HTTP", "ftp", "", "http:"]),
        HOSTS,
        PORTS,
        st.text(max_size=20),
    ),
)
LOCATIONS = st.one_of(URLS.map(lambda url: url.encode("utf-8")), st.binary(max_size=80))
PROPERTY_POLICY = FetchPolicy(
    allowed_hosts=LOCAL, connect_timeout=1.0, read_timeout=1.0, total_deadline=3.0
)


def fetch_outcome(url: str) -> Fetched | FetchError:
    try:
        return fetch(url, policy=PROPERTY_POLICY, resolver=idna_resolver)
    except FetchError as error:
        return error


@hypothesis_settings(max_examples=200, deadline=None)
@given(url=URLS)
def test_any_url_is_fetched_or_a_fetch_error(only_our_server: None, url: str) -> None:
    outcome = fetch_outcome(url)

    if isinstance(outcome, FetchError):
        # A reason of its own for each case, not the fetcher's last-resort guard.
        assert outcome.reason and not outcome.reason.startswith(UNEXPECTED), outcome.reason


@hypothesis_settings(max_examples=200, deadline=None)
@given(location=LOCATIONS)
def test_any_location_is_followed_or_a_fetch_error(
    http_server: LocalServer, only_our_server: None, location: bytes
) -> None:
    http_server.routes["/any-location"] = raw_redirect(location)

    outcome = fetch_outcome(http_server.url("/any-location"))

    if isinstance(outcome, FetchError):
        assert outcome.reason and not outcome.reason.startswith(UNEXPECTED), outcome.reason
