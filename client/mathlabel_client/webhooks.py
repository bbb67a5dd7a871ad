"""Webhooks: register URLs that hear a project's events, read their delivery log, send a delivery again; and
`verify_webhook`, the check a receiver makes of each delivery's signature and timestamp."""

from __future__ import annotations

import builtins
import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._http import Http
from .types import Delivery, Webhook

DEFAULT_TOLERANCE_SECONDS = 300


class WebhookSignatureError(ValueError):
    """A delivery whose signature does not match its body, or whose timestamp is too old (a replay) or ahead."""


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> None:
    """Raise WebhookSignatureError unless `body` (the raw bytes received) was signed with the hook's `secret` within
    `tolerance_seconds` of now. `headers` is the request's header mapping (any case)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    timestamp = lowered.get("x-mathlabel-timestamp", "")
    signature = lowered.get("x-mathlabel-signature", "")
    if not timestamp.isdigit():
        raise WebhookSignatureError("no timestamp")
    expected = "v1=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise WebhookSignatureError("the signature does not match")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance_seconds:
        raise WebhookSignatureError("the timestamp is too old: a replay?")


class Webhooks:
    def __init__(self, http: Http):
        self._http = http

    def events(self) -> dict[str, str]:
        """The events a webhook may hear, with what each means."""
        return {event["name"]: event["description"] for event in self._http.get("/api/webhooks/events/")}

    def list(self, *, project: int | None = None, workspace: int | None = None) -> builtins.list[Webhook]:
        return self._http.all("/api/webhooks/", project=project, workspace=workspace)

    def get(self, webhook_id: int) -> Webhook:
        return self._http.get(f"/api/webhooks/{webhook_id}/")

    def create(self, project_id: int, url: str, events: Sequence[str], *, description: str = "") -> Webhook:
        """Register a URL for some of the project's events. The answer's `secret` signs every delivery and is not
        shown again. The URL's host must be on the server's egress allow-list (that of LLM judges)."""
        return self._http.post(
            "/api/webhooks/",
            {"project": project_id, "url": url, "events": list(events), "description": description},
        )

    def create_for_workspace(
        self, workspace_id: int, url: str, events: Sequence[str], *, description: str = ""
    ) -> Webhook:
        """Register a URL for some events of every project, dataset, run and export of a workspace you are a member
        of; signed and limited to the allow-list as `create`."""
        return self._http.post(
            "/api/webhooks/",
            {"workspace": workspace_id, "url": url, "events": list(events), "description": description},
        )

    def update(self, webhook_id: int, **changes: Any) -> Webhook:
        """Change `url`, `events`, `description` or `is_active`."""
        return self._http.patch(f"/api/webhooks/{webhook_id}/", changes)

    def delete(self, webhook_id: int) -> None:
        self._http.delete(f"/api/webhooks/{webhook_id}/")

    def rotate_secret(self, webhook_id: int) -> Webhook:
        """A new secret (in the answer, once); deliveries from now on are signed with it."""
        return self._http.post(f"/api/webhooks/{webhook_id}/rotate-secret/")

    def ping(self, webhook_id: int) -> Delivery:
        """Send a test event (webhook.ping) to this webhook alone; returns its delivery."""
        return self._http.post(f"/api/webhooks/{webhook_id}/ping/")

    def deliveries(
        self,
        webhook_id: int | None = None,
        *,
        project: int | None = None,
        status: str | None = None,
        event: str | None = None,
    ) -> builtins.list[Delivery]:
        """Deliveries, newest first: of one webhook, or filtered by project, status and event."""
        if webhook_id is not None and project is None and status is None and event is None:
            return self._http.all(f"/api/webhooks/{webhook_id}/deliveries/")
        return self._http.all(
            "/api/webhook-deliveries/", webhook=webhook_id, project=project, status=status, event=event
        )

    def delivery(self, delivery_id: int) -> Delivery:
        """One delivery with the body sent and every attempt (when, trigger, response code, error)."""
        return self._http.get(f"/api/webhook-deliveries/{delivery_id}/")

    def send_again(self, delivery_id: int) -> Delivery:
        """Send a finished delivery again: the same body and ids, with its own retries."""
        return self._http.post(f"/api/webhook-deliveries/{delivery_id}/send-again/")
