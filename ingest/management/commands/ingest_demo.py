"""Push a demo runway album and a demo street album to a running server, as a crawler would.

    make run    # in one terminal (prints the signing secret)
    make demo   # in another: this command, against that server (scripts/demo.sh)

The command serves a handful of generated images from a local HTTP server of its own, signs
each request with the standardwebhooks library, and follows every job's status URL until the
job ends, printing what a crawler author sees: a first run's review queue then has a runway
(with a near-duplicate and a dead link) and a street album. The server must be allowed to
fetch from this machine (`INGEST_FETCH_ALLOWED_HOSTS`, which `make run` sets to
`127.0.0.1,localhost`).
"""

import io
import json
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from PIL import Image, ImageDraw
from standardwebhooks.webhooks import Webhook

from ingest.report import sent_image_name

FINAL = {"succeeded", "skipped", "failed"}


def demo_image(seed: int, *, size: tuple[int, int] = (600, 900)) -> Image.Image:
    """A distinct picture per seed: a few large shapes, so their perceptual hashes differ."""
    rng = random.Random(seed)  # noqa: S311 - demo pictures, not secrets
    image = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    w, h = size
    for _ in range(6):
        x0, y0 = rng.randrange(w), rng.randrange(h)
        x1, y1 = x0 + rng.randrange(w // 4, w), y0 + rng.randrange(h // 4, h)
        colour = tuple(rng.randrange(256) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=colour)
    return image


def encode(image: Image.Image, *, quality: int = 90, scale: float = 1.0) -> bytes:
    if scale != 1.0:
        image = image.resize((round(image.width * scale), round(image.height * scale)))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


class Command(BaseCommand):
    help = "Sign and push a demo runway and street album to a running server; follow the jobs."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the server")
        parser.add_argument("--secret", help="whsec_ secret (default: INGEST_SECRETS, .dev/)")
        parser.add_argument("--timeout", type=float, default=120, help="seconds to wait per job")

    def handle(self, *args, url: str, secret: str | None, timeout: float, **options):
        secret = secret or self._secret()
        _check_reachable(url)
        images = self._images()
        server = _serve(images)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            suffix = uuid.uuid4().hex[:6]
            runway = {
                "kind": "runway",
                "source": "demo",
                "source_url": f"https://example.com/shows/demo-maison-{suffix}",
                "brand": "Demo Maison",
                "season_code": f"FW{suffix[:2].upper()}",
                "season": "Fall/Winter",
                "collection_type": "ready-to-wear",
                "year": 2026,
                "title": "Demo Maison Fall/Winter Ready-to-Wear",
                "description": "Pushed by manage.py ingest_demo.",
                "images": [
                    {"url": f"{base}/look-1.jpg", "look_index": 1},
                    {"url": f"{base}/look-1-detail.jpg", "look_index": 1},
                    {"url": f"{base}/look-2.jpg", "look_index": 2},
                    {"url": f"{base}/look-3.jpg", "look_index": 3},
                    # A smaller re-encode of look 2: flagged as a near-duplicate.
                    {"url": f"{base}/look-2-small.jpg", "look_index": 4},
                    # A dead link: an issue in the report; the job goes on.
                    {"url": f"{base}/missing.jpg", "look_index": 5},
                ],
            }
            street = {
                "kind": "street",
                "source": "demo",
                "source_url": f"https://example.com/street/demo-{suffix}",
                "city": "Copenhagen",
                "year": 2026,
                "month": 8,
                "title": f"Demo Street Style {suffix}",
                "description": "",
                "images": [
                    {"url": f"{base}/street-1.jpg"},
                    {"url": f"{base}/street-1-detail.jpg", "is_detail": True, "parent": 0},
                    {"url": f"{base}/street-2.jpg"},
                ],
            }
            self._ensure_brand()
            for album in (runway, street):
                self._push(url, secret, album, timeout)
        finally:
            server.shutdown()
            server.server_close()

    def _push(self, url: str, secret: str, album: dict, timeout: float) -> None:
        body = json.dumps(album)
        status, answer = _request(secret, "POST", f"{url}/api/ingest/v1/albums", body)
        self.stdout.write(f"POST {album['kind']} album -> {status} {json.dumps(answer)}")
        if status != 202:
            raise CommandError(f"the server refused the album: {status} {answer}")
        deadline = time.monotonic() + timeout
        while True:
            # A read is signed over its path (ingest.auth).
            path = answer["status_url"]
            status, job = _request(secret, "GET", f"{url}{path}", path)
            if status != 200:
                raise CommandError(f"status {status}: {job}")
            if job["status"] in FINAL:
                break
            if time.monotonic() > deadline:
                raise CommandError(f"job {job['job_id']} still {job['status']} after {timeout}s")
            time.sleep(0.5)  # polling a remote job, as a crawler would
        counts = job["report"]["counts"]
        self.stdout.write(
            f"  job {job['job_id']}: {job['status']}"
            + (f" ({job['reason']})" if job["reason"] else "")
            + (f" - {job['error']}" if job["error"] else "")
            + f"; record {job['record_id']}; attempts {job['attempts']}; counts {counts}"
        )
        for issue in job["report"]["issues"]:
            # Named as the report and every ingest message name an image (docs/crawlers.md).
            name = sent_image_name(issue["index"])
            self.stdout.write(f"    {name}: {issue['reason']} ({issue['url']})")

    def _secret(self) -> str:
        if settings.INGEST_SECRETS:
            return settings.INGEST_SECRETS[0]
        dev = Path(settings.BASE_DIR) / ".dev" / "ingest-secret"
        if dev.is_file():
            return dev.read_text().strip()
        raise CommandError("No secret: pass --secret, set INGEST_SECRETS, or run `make run` once.")

    def _ensure_brand(self) -> None:
        # The runway's brand must exist on the server (an unknown brand fails the job). This
        # command shares the server's settings, so it can add it to the same database.
        from catalog.models import Brand

        Brand.objects.get_or_create(slug="demo-maison", defaults={"name": "Demo Maison"})

    @staticmethod
    def _images() -> dict[str, bytes]:
        look_2 = demo_image(2)
        detail = demo_image(1).crop((100, 200, 500, 800)).resize((600, 900))
        return {
            "/look-1.jpg": encode(demo_image(1)),
            "/look-1-detail.jpg": encode(detail),
            "/look-2.jpg": encode(look_2),
            "/look-3.jpg": encode(demo_image(3)),
            "/look-2-small.jpg": encode(look_2, quality=70, scale=0.5),
            "/street-1.jpg": encode(demo_image(11)),
            "/street-1-detail.jpg": encode(demo_image(12)),
            "/street-2.jpg": encode(demo_image(13)),
        }


def _serve(images: dict[str, bytes]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802 - http.server's name
            body = images.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "image/jpeg" if body else "text/plain")
            body = body or b"not found"
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _check_reachable(url: str) -> None:
    """One clear line, not a traceback, when nothing answers at ``url``."""
    try:
        urllib.request.urlopen(f"{url}/healthz", timeout=5).close()  # noqa: S310
    except urllib.error.HTTPError:
        pass  # something answered: the pushes say what is wrong with it
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CommandError(
            f"No server answers at {url} ({reason}). Start one with `make run`, or pass --url."
        ) from None


def _request(secret: str, method: str, url: str, body: str) -> tuple[int, dict]:
    msg_id = f"msg_{uuid.uuid4().hex}"
    now = datetime.now(tz=UTC)
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, now, body),
        "Content-Type": "application/json",
    }
    data = body.encode() if method == "POST" else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
