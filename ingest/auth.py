"""Standard Webhooks signatures as a DRF authentication class.

A crawler signs ``{webhook-id}.{webhook-timestamp}.{content}`` with HMAC-SHA256 under a shared
secret (``whsec_<base64>``) and sends ``webhook-signature: v1,<base64>`` (several
space-separated signatures are allowed). The content is the body of a POST and the path of a
GET (``/api/ingest/v1/jobs/17``): a read has no body, and a signature over an empty one would
read every job for as long as its timestamp is valid. The expected signature is computed by the
``standardwebhooks`` library itself (``Webhook.sign``), so we verify exactly what crawlers using
it produce. We do not call its ``verify`` because we need what it cannot give: several active
secrets (rotation), a configurable tolerance, and a clean refusal of malformed headers (it
raises ValueError/binascii.Error on them instead of its verification error).

Replay protection (the ``webhook-id`` nonce) is not here: it must be stored in the same
transaction as the job it admits, so ``ingest.services.ingest_job_accept`` does it.
"""

import base64
import binascii
import hmac
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http.request import RawPostDataException
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import SAFE_METHODS, BasePermission
from standardwebhooks.webhooks import Webhook

WEBHOOK_ID_MAX_LENGTH = 255  # UsedWebhookId.webhook_id


@dataclass(frozen=True, slots=True)
class WebhookSignature:
    """``request.auth`` of a signed request."""

    webhook_id: str


@dataclass(frozen=True, slots=True)
class SignedCrawler:
    """``request.user`` of a signed request: a crawler holding one of the secrets."""

    is_authenticated = True
    is_anonymous = False
    username = "crawler"

    def __str__(self) -> str:
        return self.username


SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret
# Standard Webhooks asks for 24 to 64 random bytes; a shorter key is guessable offline from a
# single signed request.
SECRET_MIN_BYTES = 24


def load_secrets(values: list[str]) -> list[Webhook]:
    """The configured secrets as library objects; raises ValueError on a malformed one.

    Stricter than the library, which strips an optional prefix and decodes anything with
    padding added: there ``whsec_ab`` is a one-byte key and a typo in the base64 a shorter one.
    """
    webhooks = []
    for position, value in enumerate(values):
        try:
            webhooks.append(Webhook(_secret_key(value.strip())))
        except ValueError as exc:
            raise ValueError(f"INGEST_SECRETS entry {position + 1} {exc}") from None
    return webhooks


def _secret_key(value: str) -> bytes:
    if not value.startswith(SECRET_PREFIX):
        raise ValueError(f"does not start with {SECRET_PREFIX}")
    try:
        # strict_mode: the standard alphabet with its exact padding, nothing skipped silently.
        key = binascii.a2b_base64(value.removeprefix(SECRET_PREFIX), strict_mode=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"is not {SECRET_PREFIX} followed by standard base64") from None
    if len(key) < SECRET_MIN_BYTES:
        raise ValueError(
            f"is a {len(key)}-byte key: at least {SECRET_MIN_BYTES} random bytes are needed"
        )
    return key


class StandardWebhookAuthentication(BaseAuthentication):
    def authenticate(self, request):
        headers = request.headers
        webhook_id = headers.get("webhook-id", "")
        timestamp_header = headers.get("webhook-timestamp", "")
        signature_header = headers.get("webhook-signature", "")
        missing = [
            name
            for name, value in (
                ("webhook-id", webhook_id),
                ("webhook-timestamp", timestamp_header),
                ("webhook-signature", signature_header),
            )
            if not value
        ]
        if missing:
            raise exceptions.AuthenticationFailed(f"Missing header(s): {', '.join(missing)}.")
        if len(webhook_id) > WEBHOOK_ID_MAX_LENGTH or not webhook_id.isprintable():
            raise exceptions.AuthenticationFailed(
                f"webhook-id must be at most {WEBHOOK_ID_MAX_LENGTH} printable characters."
            )

        timestamp = self._checked_timestamp(timestamp_header)
        webhooks = self._webhooks()
        content = self._signed_content(request)

        expected = [
            _signature_bytes(
                webhook.sign(
                    msg_id=webhook_id,
                    timestamp=datetime.fromtimestamp(timestamp, tz=UTC),
                    data=content,
                )
            )
            for webhook in webhooks
        ]
        for passed in _passed_signatures(signature_header):
            for candidate in expected:
                if hmac.compare_digest(candidate, passed):
                    return SignedCrawler(), WebhookSignature(webhook_id)
        refusal = "No valid signature for any active secret."
        if request.method in SAFE_METHODS:
            refusal += f" A {request.method} signs its path ({request.path}), not an empty body."
        raise exceptions.AuthenticationFailed(refusal)

    def authenticate_header(self, request) -> str:
        # Any value makes DRF answer 401 (not 403) to an unauthenticated request.
        return 'Standard-Webhooks realm="ingest"'

    @staticmethod
    def _checked_timestamp(header: str) -> int:
        # Integer seconds, as the scheme defines; a float or a date is refused, not guessed.
        if not header.isascii() or not header.isdigit() or len(header) > 12:
            raise exceptions.AuthenticationFailed("webhook-timestamp must be integer seconds.")
        timestamp = int(header)
        tolerance = settings.INGEST_SIGNATURE_TOLERANCE_SECONDS
        if abs(time.time() - timestamp) > tolerance:
            raise exceptions.AuthenticationFailed(
                f"webhook-timestamp is more than {tolerance} seconds away from the server's clock."
            )
        return timestamp

    @staticmethod
    def _webhooks() -> list[Webhook]:
        if not settings.INGEST_SECRETS:
            raise exceptions.AuthenticationFailed("Ingest is closed: no INGEST_SECRETS set.")
        try:
            return load_secrets(settings.INGEST_SECRETS)
        except ValueError as exc:  # also reported by the system check ingest.E001
            raise exceptions.AuthenticationFailed(str(exc)) from None

    @classmethod
    def _signed_content(cls, request) -> str:
        # A read signs what it reads: its path binds the headers to one job.
        if request.method in SAFE_METHODS:
            return request.path
        return cls._body(request)

    @staticmethod
    def _body(request) -> str:
        try:
            raw = request.body
        except RequestDataTooBig:
            raise exceptions.ValidationError(
                {"body": [f"Larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."]}
            ) from None
        except RawPostDataException:  # pragma: no cover - the body was streamed elsewhere
            raise exceptions.ParseError("The request body could not be read.") from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise exceptions.ParseError("The request body is not UTF-8.") from None


class IsSignedCrawler(BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, WebhookSignature)


def _signature_bytes(versioned: str) -> bytes:
    return base64.b64decode(versioned.split(",", 1)[1])


def _passed_signatures(header: str) -> list[bytes]:
    """The v1 signatures of the header; entries of other versions or malformed ones are
    ignored, as the scheme asks (a sender may add signatures a receiver does not know)."""
    passed = []
    for entry in header.split(" "):
        version, _, value = entry.partition(",")
        if version != "v1" or not value:
            continue
        try:
            passed.append(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            continue
    return passed
