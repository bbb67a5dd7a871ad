"""A real Celery worker on Redis: an export finishes in the worker, the worker hears it and posts the delivery, and
retries after the receiver's 500 with its backoff."""

from __future__ import annotations

import pytest

from reports import services as export_services
from tests.fakes.http_receiver import Answer
from tests.waiting import wait_for
from webhooks import services
from webhooks.models import WebhookDelivery


@pytest.mark.worker
def test_a_worker_delivers_an_export_ready_event_and_retries_after_a_500(
    celery_worker_factory, verifybench_data, export_root, allowed_receiver, receiver, verify_webhook
):
    export_root.mkdir(parents=True, exist_ok=True)
    celery_worker_factory({"EXPORT_ROOT": str(export_root), "WEBHOOK_RETRY_BASE_SECONDS": "0.5"})
    hook = services.create_webhook(
        project=verifybench_data.project, url=receiver.url + "/ready", events=["export.ready"]
    )
    receiver.script(Answer(500, b"not yet"))
    job = export_services.create_export(project=verifybench_data.project, format="verifybench-hard")

    delivery = wait_for(
        lambda: WebhookDelivery.objects.filter(webhook=hook, status="succeeded").first(),
        what="the delivery to succeed",
    )
    assert delivery.attempts == 2 and [r.answer.status for r in receiver.requests] == [500, 200]
    first, second = delivery.attempt_log.order_by("number")
    assert (first.trigger, first.status_code, second.trigger, second.status_code) == ("event", 500, "retry", 200)
    assert (second.started_at - first.started_at).total_seconds() >= 0.5  # the backoff was waited
    for request in receiver.requests:
        verify_webhook(hook.secret, request.headers, request.body)
    assert receiver.requests[1].json()["data"]["export"]["id"] == job.pk
