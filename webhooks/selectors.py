"""What the webhooks pages and API read: a project's or a workspace's hooks, and deliveries with their attempts."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import QuerySet

from core import workspaces

from .models import Webhook, WebhookAttempt, WebhookDelivery


def project_webhooks(project_id: int) -> QuerySet[Webhook]:
    return Webhook.objects.filter(project_id=project_id).select_related("created_by").order_by("id")


def workspace_webhooks(workspace_id: int) -> QuerySet[Webhook]:
    """The hooks of the workspace itself (its projects' own hooks are on their pages)."""
    return Webhook.objects.filter(workspace_id=workspace_id).select_related("created_by").order_by("id")


def visible_webhooks(user) -> QuerySet[Webhook]:
    """The hooks a researcher may see and change: those of their workspaces and of their workspaces' projects (every
    one for an admin)."""
    visible = workspaces.condition(user, "project__dataset__workspace") | workspaces.condition(user, "workspace")
    return Webhook.objects.filter(visible)


def deliveries(
    *, webhook_id: int | None = None, project_id: int | None = None, workspace_id: int | None = None
) -> QuerySet[WebhookDelivery]:
    """Deliveries newest first, of one hook, of every hook of a project, or of every hook of a workspace itself."""
    rows = WebhookDelivery.objects.select_related("webhook")
    if webhook_id is not None:
        rows = rows.filter(webhook_id=webhook_id)
    if project_id is not None:
        rows = rows.filter(webhook__project_id=project_id)
    if workspace_id is not None:
        rows = rows.filter(webhook__workspace_id=workspace_id)
    return rows.order_by("-created_at", "-id")


def visible_deliveries(user) -> QuerySet[WebhookDelivery]:
    """The deliveries of the hooks `visible_webhooks` gives the user, newest first."""
    visible = workspaces.condition(user, "webhook__project__dataset__workspace") | workspaces.condition(
        user, "webhook__workspace"
    )
    return deliveries().filter(visible)


def attempts_of(delivery_ids: list[int]) -> dict[int, list[WebhookAttempt]]:
    """The attempts of these deliveries, oldest first, by delivery id (one query)."""
    found: dict[int, list[WebhookAttempt]] = {pk: [] for pk in delivery_ids}
    for attempt in (
        WebhookAttempt.objects.filter(delivery_id__in=delivery_ids)
        .select_related("requested_by")
        .order_by("delivery_id", "number")
    ):
        found[attempt.delivery_id].append(attempt)
    return found


def _time(value) -> str | None:
    return value.isoformat() if value else None


def attempt_payload(attempt: WebhookAttempt) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "trigger": attempt.trigger,
        "requested_by": attempt.requested_by.get_username() if attempt.requested_by is not None else None,
        "started_at": _time(attempt.started_at),
        "duration_ms": attempt.duration_ms,
        "status_code": attempt.status_code,
        "succeeded": attempt.succeeded,
        "error": attempt.error,
        "response_excerpt": attempt.response_excerpt,
    }


def delivery_payload(delivery: WebhookDelivery, attempts: list[WebhookAttempt] | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": delivery.pk,
        "url": f"/api/webhook-deliveries/{delivery.pk}/",
        "webhook": delivery.webhook_id,
        "project": delivery.webhook.project_id,
        "workspace": delivery.webhook.workspace_id,
        "event": delivery.event,
        "event_id": delivery.event_id,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "created_at": _time(delivery.created_at),
        "next_attempt_at": _time(delivery.next_attempt_at),
        "delivered_at": _time(delivery.delivered_at),
    }
    if attempts is not None:
        payload["body"] = json.loads(delivery.body)
        payload["attempt_log"] = [attempt_payload(attempt) for attempt in attempts]
    return payload
