"""How a webhook delivery is signed, and how a receiver checks it. Pure module, no Django.

The signature is HMAC-SHA256, keyed with the hook's secret, over the timestamp, a dot and the body exactly as sent:
`X-Mathlabel-Signature: v1=<hex digest of "<timestamp>.<body>">`, with the timestamp (Unix seconds) in
`X-Mathlabel-Timestamp`. Signing the timestamp with the body lets a receiver refuse an old delivery sent again
(a replay): it checks the signature, then that the timestamp is recent. Every attempt is signed afresh.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

SIGNATURE_HEADER = "X-Mathlabel-Signature"
TIMESTAMP_HEADER = "X-Mathlabel-Timestamp"
EVENT_HEADER = "X-Mathlabel-Event"
EVENT_ID_HEADER = "X-Mathlabel-Event-Id"
DELIVERY_HEADER = "X-Mathlabel-Delivery"
ATTEMPT_HEADER = "X-Mathlabel-Attempt"
SCHEME = "v1"
SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300


class SignatureRefused(ValueError):
    """A delivery whose signature does not match, or whose timestamp is too old or too far ahead."""


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"{SCHEME}={digest}"


def signed_headers(
    secret: str, body: bytes, *, event: str, event_id: str, delivery_id: int, attempt: int, timestamp: int | None = None
) -> dict[str, str]:
    """The headers of one attempt: what it is, and its signature over the body and the time of sending."""
    sent_at = int(time.time()) if timestamp is None else timestamp
    return {
        "Content-Type": "application/json",
        EVENT_HEADER: event,
        EVENT_ID_HEADER: event_id,
        DELIVERY_HEADER: str(delivery_id),
        ATTEMPT_HEADER: str(attempt),
        TIMESTAMP_HEADER: str(sent_at),
        SIGNATURE_HEADER: signature(secret, sent_at, body),
    }


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> None:
    """Raise SignatureRefused unless the body was signed with `secret` within `tolerance_seconds` of `now`.

    `headers` may be any case (a mapping with exact names, or lower-cased ones)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    timestamp_text = lowered.get(TIMESTAMP_HEADER.lower(), "")
    given = lowered.get(SIGNATURE_HEADER.lower(), "")
    if not timestamp_text.isdigit() or not given:
        raise SignatureRefused("the delivery has no timestamp or no signature")
    timestamp = int(timestamp_text)
    if not hmac.compare_digest(signature(secret, timestamp, body), given):
        raise SignatureRefused("the signature does not match the body")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        raise SignatureRefused("the timestamp is too old (a replay?) or too far ahead")
