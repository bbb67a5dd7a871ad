"""Celery tasks of the webhooks: one attempt of a delivery (the next one is queued with its backoff as a new message),
and the sweep that queues again deliveries whose message was lost."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="webhooks.deliver")
def deliver(delivery_id: int, token: str, trigger: str = "event", requested_by_id: int | None = None) -> float | None:
    """One attempt; safe to deliver twice or late (a stale token claims nothing)."""
    return services.attempt_delivery(delivery_id, token, trigger, requested_by_id)


@shared_task(name="webhooks.queue_overdue")
def queue_overdue() -> list[int]:
    return services.queue_overdue()


def _dispatch(delivery_id: int, token: str, trigger: str, requested_by_id: int | None, countdown: float) -> None:
    deliver.apply_async((delivery_id, token, trigger, requested_by_id), countdown=countdown or None)


services.set_dispatcher(_dispatch)
