"""One request on one connection to a checked address: TCP and TLS to exactly that address,
http.client over a socket whose every read meets the deadline, the body under its cap."""

from __future__ import annotations

import functools
import http.client
import io
import socket
import ssl
from typing import Any

from ingest.fetching.policy import FetchError, FetchPolicy, check_deadline, os_reason
from ingest.fetching.target import Target

_CHUNK = 64 * 1024


class Exchange:
    """One request on one fresh connection to an already checked address.

    Entering it connects, sends the GET and reads the status line and headers; leaving it
    closes the socket whatever happened (we never reuse connections, so nothing is drained).
    """

    def __init__(
        self,
        target: Target,
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
        # would resolve the name again). resolve_checked never returns an empty list.
        last_error = FetchError("no address to connect to", transient=True)
        for family, sockaddr in self._addresses:
            remaining = check_deadline(self._deadline, self._policy)
            try:
                sock = socket.socket(family, socket.SOCK_STREAM)
            except OSError as exc:
                # A machine without IPv6 (or IPv4) sockets: this address is unreachable from
                # here, whatever the retries; the next address may still do.
                last_error = FetchError(
                    f"cannot connect to {sockaddr[0]} ({os_reason(exc)})", transient=False
                )
                continue
            sock.settimeout(min(self._policy.connect_timeout, remaining))
            try:
                sock.connect(sockaddr)
            except TimeoutError:
                sock.close()
                check_deadline(self._deadline, self._policy)
                last_error = FetchError("connect timeout", transient=True)
            except ConnectionRefusedError:
                sock.close()
                last_error = FetchError("connection refused", transient=True)
            except OSError as exc:
                sock.close()
                last_error = FetchError(f"cannot connect ({os_reason(exc)})", transient=True)
            else:
                return sock
        raise last_error

    def _tls(self, sock: socket.socket) -> ssl.SSLSocket:
        remaining = check_deadline(self._deadline, self._policy)
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
            check_deadline(self._deadline, self._policy)
            raise FetchError("TLS handshake timeout", transient=True) from None
        except (ssl.SSLError, OSError) as exc:
            raise FetchError(f"TLS handshake failed ({os_reason(exc)})", transient=True) from None
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
            raise FetchError(f"connection lost ({os_reason(exc)})", transient=True) from None
        except (http.client.HTTPException, ValueError) as exc:
            raise FetchError(f"malformed HTTP response ({exc})", transient=False) from None
        except OSError as exc:
            raise FetchError(f"network error ({os_reason(exc)})", transient=True) from None
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise FetchError(f"content-encoding {encoding} not accepted", transient=False)
        return response


def read_body(response: http.client.HTTPResponse, policy: FetchPolicy) -> bytes:
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
        raise FetchError(f"connection lost ({os_reason(exc)})", transient=True) from None
    except (http.client.HTTPException, ValueError) as exc:
        raise FetchError(f"malformed HTTP response ({exc})", transient=False) from None
    except OSError as exc:  # TLS errors mid-body among them
        raise FetchError(f"network error ({os_reason(exc)})", transient=True) from None
    if response.length:  # Content-Length promised more than arrived before EOF
        raise FetchError("connection closed before the body was complete", transient=True)
    return b"".join(parts)


class _DeadlineSocket:
    """The socket as http.client sees it: every recv is bounded by the remaining deadline.

    http.client only calls ``sendall``, ``makefile`` and ``close`` on it. ``close`` is left to
    :class:`Exchange`, because http.client closes its side as soon as the headers say
    "Connection: close", while we still read the body through the file.
    """

    def __init__(self, sock: socket.socket, policy: FetchPolicy, deadline: float) -> None:
        self._sock = sock
        self._policy = policy
        self._deadline = deadline

    def sendall(self, data: bytes) -> None:
        remaining = check_deadline(self._deadline, self._policy)
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
        remaining = check_deadline(self._deadline, self._policy)
        self._sock.settimeout(min(self._policy.read_timeout, remaining))
        try:
            return self._sock.recv_into(buffer)
        except TimeoutError:
            check_deadline(self._deadline, self._policy)
            raise FetchError("read timeout", transient=True) from None


@functools.lru_cache(maxsize=8)
def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    # create_default_context: CERT_REQUIRED + check_hostname, TLS >= 1.2. Built once per bundle
    # (loading the system store costs milliseconds); an SSLContext is safe to share between
    # threads for wrapping sockets.
    return ssl.create_default_context(cafile=ca_bundle)
