"""A real Varnish (Debian's varnishd, installed by scripts/varnish.sh) in front of a test
server, with the project's own config/varnish.vcl; and a proxy of the test's own that makes a
server fail on demand."""

import http.client
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support import ROOT

VARNISHD = shutil.which("varnishd") or "/usr/sbin/varnishd"


class AppServer:
    """The project's WSGI application on a free port, threaded, and nothing else: pytest-django's
    live_server answers MEDIA_URL from the folder itself (Django's test handler), so the media
    route that decides from the database would never be asked."""

    def __init__(self) -> None:
        from django.core.handlers.wsgi import WSGIHandler
        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

        class QuietHandler(WSGIRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
        self.httpd.set_app(WSGIHandler())
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} did not come up in {timeout} s")


class Varnish:
    """varnishd in the foreground on a free port, its backend the given port."""

    def __init__(self, backend_port: int, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        vcl = (ROOT / "config" / "varnish.vcl").read_text()
        vcl = vcl.replace('.port = "8000";', f'.port = "{backend_port}";')
        (workdir / "test.vcl").write_text(vcl)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.instance = workdir / "instance"  # varnishstat -n
        self.process = subprocess.Popen(  # noqa: S603 - Debian's varnishd, our own arguments
            [
                VARNISHD,
                "-F",
                "-j",
                "none",  # no privilege separation: the test's user runs it all
                "-n",
                str(workdir / "instance"),
                "-a",
                f"127.0.0.1:{self.port}",
                "-T",
                "127.0.0.1:0",
                "-f",
                str(workdir / "test.vcl"),
                "-s",
                "malloc,64m",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            wait_for(self._answers, timeout=30, what="varnishd")
        except TimeoutError:
            self.stop()
            raise

    def _answers(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"varnishd exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def get(self, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", path, headers={"Host": "localhost", **headers})
            answer = connection.getresponse()
            return answer.status, dict(answer.getheaders()), answer.read()
        finally:
            connection.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)


class FailingProxy:
    """Forwards requests to ``upstream`` (host:port) until told to fail: then answers every
    request (or those whose method is in ``methods``) with ``status`` itself, as a store or a
    cache having a bad day does."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removeprefix("http://").rstrip("/")
        self.failing = False
        self.methods: set[str] | None = None
        self.status = 503
        self.failed = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                body = self._body()
                if proxy.failing and (proxy.methods is None or self.command in proxy.methods):
                    proxy.failed += 1
                    payload = (
                        b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                        b"<Message>Please reduce your request rate.</Message></Error>"
                    )
                    self.send_response(proxy.status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
                upstream = http.client.HTTPConnection(proxy.upstream, timeout=30)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                    self.send_response(answer.status)
                    for key, value in answer.getheaders():
                        if key.lower() not in {"transfer-encoding", "connection", "content-length"}:
                            self.send_header(key, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    upstream.close()

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            break
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PURGE = _forward  # noqa: N815

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
