"""Webhook deliveries against a real local HTTP receiver: signed bodies the documented snippet verifies, retries
after a 500 with the log of every attempt, a replay refused by the receiver's check, disallowed endpoints refused,
and hooks that hear only their own project's events."""

from __future__ import annotations

import json
import time

import httpx2
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import services as annotation_services
from core.jobs import runner
from reports import services as export_services
from tests.conftest import allow_judge_endpoint
from tests.fakes.http_receiver import Answer
from verifybench import imports
from webhooks import services, signing
from webhooks.models import WebhookAttempt, WebhookDelivery

pytestmark = pytest.mark.django_db


def label_all_correct(project, annotators) -> None:
    """Every annotator labels every item correct, so each item has a final label an export can write."""
    for user in annotators:
        while (task := annotation_services.next_task(project, user)) is not None:
            annotation_services.submit_label(task, user, value=True)


def export_now(project):
    job = export_services.create_export(project=project, format="verifybench-hard", enqueue=False)
    return runner.run("export", job.pk, job.attempt)


@pytest.fixture
def hook_on(allowed_receiver, receiver, make_user):
    def make(project, events=("export.ready",), path="/hook"):
        return services.create_webhook(
            project=project, url=receiver.url + path, events=list(events), created_by=make_user("researcher")
        )

    return make


def test_an_event_is_delivered_signed_and_the_documented_check_accepts_it(
    hook_on, receiver, verifybench_data, export_root, verify_webhook, fast_retries, django_capture_on_commit_callbacks
):
    hook = hook_on(verifybench_data.project)
    with django_capture_on_commit_callbacks(execute=True):
        job = export_now(verifybench_data.project)

    [request] = receiver.requests
    assert request.method == "POST" and request.path == "/hook"
    verify_webhook(hook.secret, request.headers, request.body)  # raises when the signature or the time is wrong
    body = request.json()
    assert body["event"] == "export.ready" and body["webhook"] == hook.pk
    assert body["project"] == verifybench_data.project.pk and body["dataset"] == verifybench_data.dataset.pk
    assert body["data"]["export"]["id"] == job.pk
    assert body["data"]["export"]["download_url"] == f"/api/exports/{job.pk}/download/"
    assert body["data"]["job"]["status"] == "succeeded"
    assert request.header("X-Mathlabel-Event") == "export.ready"
    assert request.header("X-Mathlabel-Event-Id") == body["id"]
    assert request.header("X-Mathlabel-Attempt") == "1"
    assert request.header("Content-Type") == "application/json"

    delivery = WebhookDelivery.objects.get()
    assert str(delivery.pk) == request.header("X-Mathlabel-Delivery")
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 1, 200)
    assert delivery.delivered_at is not None and json.loads(delivery.body) == body
    [attempt] = delivery.attempt_log.all()
    assert (attempt.number, attempt.trigger, attempt.status_code, attempt.error) == (1, "event", 200, "")
    assert attempt.response_excerpt == '{"ok": true}'


def test_a_500_is_retried_with_the_same_body_signed_afresh_until_it_is_accepted(
    hook_on, receiver, verifybench_data, export_root, verify_webhook, fast_retries, django_capture_on_commit_callbacks
):
    hook = hook_on(verifybench_data.project)
    receiver.script(Answer(500, b"busy"), Answer(503, b"later"))
    with django_capture_on_commit_callbacks(execute=True):
        export_now(verifybench_data.project)

    assert [request.answer.status for request in receiver.requests] == [500, 503, 200]
    assert len({request.body for request in receiver.requests}) == 1
    assert [request.header("X-Mathlabel-Attempt") for request in receiver.requests] == ["1", "2", "3"]
    assert len({request.header("X-Mathlabel-Event-Id") for request in receiver.requests}) == 1
    for request in receiver.requests:
        verify_webhook(hook.secret, request.headers, request.body)

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 3, 200)
    log = list(delivery.attempt_log.values_list("number", "trigger", "status_code", "response_excerpt"))
    assert log == [(1, "event", 500, "busy"), (2, "retry", 503, "later"), (3, "retry", 200, '{"ok": true}')]
    assert "answered 500" in delivery.attempt_log.get(number=1).error


def test_retries_stop_after_the_last_attempt_and_send_again_starts_a_new_round(
    hook_on, receiver, verifybench_data, export_root, make_user, fast_retries, django_capture_on_commit_callbacks
):
    fast_retries.WEBHOOK_MAX_ATTEMPTS = 3
    hook_on(verifybench_data.project)
    receiver.handler = lambda request: Answer(500, b"down")
    with django_capture_on_commit_callbacks(execute=True):
        export_now(verifybench_data.project)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 3, 500)
    assert delivery.next_attempt_at is None

    receiver.handler = lambda request: Answer()
    researcher = make_user("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        services.send_again(delivery, requested_by=researcher)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 4, 200)
    last = delivery.attempt_log.get(number=4)
    assert last.trigger == "manual" and last.requested_by == researcher
    assert len({request.header("X-Mathlabel-Event-Id") for request in receiver.requests}) == 1

    with pytest.raises(services.WebhookRequestError):  # not while it is being sent
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status="pending")
        services.send_again(delivery)


def test_the_backoff_doubles_up_to_its_cap(settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS, settings.WEBHOOK_RETRY_MAX_SECONDS = 30, 200
    assert [services.backoff_seconds(made) for made in range(1, 6)] == [30, 60, 120, 200, 200]


def test_a_replayed_delivery_is_refused_by_the_receivers_check(
    hook_on, receiver, verifybench_data, export_root, verify_webhook, fast_retries, django_capture_on_commit_callbacks
):
    hook = hook_on(verifybench_data.project)

    def check(request):
        try:
            # whole seconds, and a loaded machine may take a second to deliver: 3 s lets the genuine one through
            verify_webhook(hook.secret, request.headers, request.body, tolerance_seconds=3)
        except ValueError as refused:
            return Answer(401, str(refused).encode())
        return Answer()

    receiver.handler = check
    with django_capture_on_commit_callbacks(execute=True):
        export_now(verifybench_data.project)
    [genuine] = receiver.requests
    assert genuine.answer.status == 200

    time.sleep(4.1)  # the recorded request, sent again later, as an eavesdropper would
    headers = {name: value for name, value in genuine.headers.items() if name.lower() not in ("host", "content-length")}
    replayed = httpx2.post(receiver.url + "/hook", content=genuine.body, headers=headers)
    assert replayed.status_code == 401 and "too old" in replayed.text

    forged = httpx2.post(
        receiver.url + "/hook",
        content=genuine.body.replace(b"succeeded", b"failed"),
        headers={**headers, "X-Mathlabel-Timestamp": str(int(time.time()))},
    )
    assert forged.status_code == 401 and "does not match" in forged.text
    with pytest.raises(ValueError, match="does not match"):
        verify_webhook("whsec_another", genuine.headers, genuine.body)
    with pytest.raises(signing.SignatureRefused, match="too old"):  # the app's own check agrees
        signing.verify(hook.secret, genuine.headers, genuine.body, tolerance_seconds=1)
    signing.verify(hook.secret, genuine.headers, genuine.body, now=int(genuine.header("X-Mathlabel-Timestamp")))


def test_a_url_off_the_allow_list_is_refused_when_saved_and_an_address_no_longer_allowed_before_sending(
    receiver, verifybench_data, export_root, fast_retries, django_capture_on_commit_callbacks
):
    project = verifybench_data.project
    with pytest.raises(services.WebhookRequestError, match="not on the list of allowed"):
        services.create_webhook(project=project, url="https://hooks.example.net/x", events=["export.ready"])
    with pytest.raises(services.WebhookRequestError, match="must not carry credentials"):
        services.create_webhook(project=project, url="https://user:pw@hooks.example.net/", events=["export.ready"])
    with pytest.raises(services.WebhookRequestError, match="http:// or https://"):
        services.create_webhook(project=project, url="ftp://hooks.example.net/", events=["export.ready"])

    entry = allow_judge_endpoint(receiver.url, allow_private=False)
    hook = services.create_webhook(project=project, url=receiver.url + "/hook", events=["export.ready"])
    with django_capture_on_commit_callbacks(execute=True):
        export_now(project)
    delivery = WebhookDelivery.objects.get(webhook=hook)
    assert receiver.requests == []
    assert (delivery.status, delivery.attempts) == ("failed", 1)  # a refused address is not retried
    assert "non-public address" in delivery.last_error and "allow-list of LLM judges" in delivery.last_error

    entry.delete()  # taken off the list after the hook was saved
    allow_judge_endpoint(receiver.url).delete()
    with django_capture_on_commit_callbacks(execute=True):
        services.ping(hook)
    latest = WebhookDelivery.objects.filter(webhook=hook).order_by("-id").first()
    assert latest.status == "failed" and "not on the list" in latest.last_error and receiver.requests == []


def test_a_hook_hears_its_own_projects_events_and_its_datasets_imports_only(
    hook_on, receiver, make_project, make_user, settings, tmp_path, fast_retries, django_capture_on_commit_callbacks
):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    settings.EXPORT_ROOT = tmp_path / "exports"
    first, first_annotators, _ = make_project(annotators=2)
    second, second_annotators, _ = make_project(annotators=2, dataset=first.dataset)
    label_all_correct(first, first_annotators)
    label_all_correct(second, second_annotators)
    hook = hook_on(first, events=["export.ready", "import.finished"])
    hook_on(second, events=["import.failed"], path="/other")

    with django_capture_on_commit_callbacks(execute=True):
        export_now(second)  # another project's export: nobody here hears it
        row = {"question_id": "new", "question": "2+2?", "reference_answer": "4", "completion": "4", "model": "m"}
        upload = SimpleUploadedFile("more.jsonl", (json.dumps(row) + "\n").encode())
        job = imports.create_import(uploaded=upload, dataset_name=first.dataset.name, enqueue=False)
        runner.run("import", job.pk, job.attempt)
    assert [(request.path, request.json()["event"]) for request in receiver.requests] == [("/hook", "import.finished")]
    assert receiver.requests[0].json()["dataset"] == first.dataset.pk

    services.update_webhook(hook, is_active=False)
    with django_capture_on_commit_callbacks(execute=True):
        export_now(first)
    assert len(receiver.requests) == 1 and WebhookDelivery.objects.count() == 1


def test_a_hook_made_inactive_while_a_retry_waits_sends_nothing_more(
    hook_on, receiver, verifybench_data, export_root, fast_retries, django_capture_on_commit_callbacks
):
    hook = hook_on(verifybench_data.project)
    receiver.script(Answer(500))
    queued = []
    services.set_dispatcher(lambda *arguments: queued.append(arguments))
    try:
        with django_capture_on_commit_callbacks(execute=True):
            export_now(verifybench_data.project)
        delivery_id, token, trigger, requested_by, countdown = queued.pop()
        with django_capture_on_commit_callbacks(execute=True):
            services.attempt_delivery(delivery_id, token, trigger, requested_by)
        assert services.attempt_delivery(delivery_id, token, trigger, requested_by) is None  # a duplicate message
        delivery = WebhookDelivery.objects.get()
        assert (delivery.status, delivery.attempts) == ("pending", 1)
        retry = queued.pop()
        assert retry[2] == "retry" and retry[4] == 0
        services.update_webhook(hook, is_active=False)
        services.attempt_delivery(*retry[:4])
    finally:
        from webhooks import tasks

        services.set_dispatcher(tasks._dispatch)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 2) and "inactive" in delivery.last_error
    assert len(receiver.requests) == 1
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 2


def test_an_overdue_delivery_is_queued_again_and_its_old_message_sends_nothing(
    hook_on, receiver, verifybench_data, export_root, fast_retries, django_capture_on_commit_callbacks
):
    hook_on(verifybench_data.project)
    queued = []
    services.set_dispatcher(lambda *arguments: queued.append(arguments))
    try:
        with django_capture_on_commit_callbacks(execute=True):
            export_now(verifybench_data.project)
        lost = queued.pop()  # the broker lost this message
        WebhookDelivery.objects.update(next_attempt_at=WebhookDelivery.objects.get().created_at.replace(year=2000))
        with django_capture_on_commit_callbacks(execute=True):
            assert services.queue_overdue() == [lost[0]]
        again = queued.pop()
        assert again[1] != lost[1]
        assert services.attempt_delivery(*lost[:4]) is None
        services.attempt_delivery(*again[:4])
    finally:
        from webhooks import tasks

        services.set_dispatcher(tasks._dispatch)
    assert WebhookDelivery.objects.get().status == "succeeded" and len(receiver.requests) == 1
