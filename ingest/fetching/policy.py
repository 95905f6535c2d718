"""What the caller of `fetch` passes and gets back: the policy, the fetched body, the one error
type; and the deadline every step checks."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


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


class Disallowed(FetchError):
    """A URL or address the policy forbids (as opposed to one that failed)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, transient=False)


def check_deadline(deadline: float, policy: FetchPolicy) -> float:
    """Seconds left before ``deadline``; raise the deadline error if there are none."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        # Transient like the other timeouts: a slow CDN often recovers; the caller decides
        # how many retries a slow server deserves.
        raise FetchError(f"deadline of {policy.total_deadline:g}s exceeded", transient=True)
    return remaining


def os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
