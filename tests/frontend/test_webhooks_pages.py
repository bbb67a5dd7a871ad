"""The webhooks page: add a hook (the secret shown once), refused URLs say why, the delivery log shows each attempt
with its response code, and "Send again" sends it again."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import AnnotationProject
from tests.fakes.http_receiver import Answer
from verifybench.models import Dataset
from webhooks.models import Webhook, WebhookDelivery

from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(db):
    dataset = Dataset.objects.create(name="hooks")
    return AnnotationProject.objects.create(name="Hooked", dataset=dataset, kind="correctness")


def form(url: str, *events: str, description: str = "") -> dict:
    return {"hook-url": url, "hook-events": list(events), "hook-description": description}


def test_a_researcher_adds_a_webhook_sees_its_secret_once_and_its_deliveries(
    client, researcher, project, allowed_receiver, receiver, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    client.force_login(researcher)
    page = client.get(reverse("project-webhooks", args=[project.pk]))
    assert page.status_code == 200 and "No webhook yet" in page.content.decode()
    assert_csp_clean(page.content.decode())

    created = client.post(
        reverse("project-webhook-new", args=[project.pk]),
        form(receiver.url + "/in", "export.ready", "project.completed", description="our scheduler"),
    )
    hook = Webhook.objects.get()
    html = created.content.decode()
    assert created.status_code == 201 and hook.secret in html and "not shown again" in html
    assert hook.events == ["project.completed", "export.ready"] and hook.description == "our scheduler"
    assert hook.secret not in client.get(reverse("project-webhooks", args=[project.pk])).content.decode()

    receiver.script(Answer(500, b"down"))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("project-webhook-action", args=[project.pk, hook.pk, "ping"]))
    delivery = WebhookDelivery.objects.get()
    html = client.get(reverse("project-webhooks", args=[project.pk])).content.decode()
    assert f'data-delivery="{delivery.pk}" data-status="succeeded"' in html
    assert 'data-attempt="1" data-code="500"' in html and 'data-attempt="2" data-code="200"' in html
    assert "the receiver answered 500" in html

    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(reverse("project-webhook-send-again", args=[project.pk, delivery.pk]))
    assert again.status_code == 302
    html = client.get(reverse("project-webhooks", args=[project.pk])).content.decode()
    assert 'data-attempt="3" data-code="200"' in html and f"sent again by {researcher.username}" in html

    rotated = client.post(reverse("project-webhook-action", args=[project.pk, hook.pk, "rotate-secret"]))
    hook.refresh_from_db()
    assert hook.secret in rotated.content.decode() and "New secret" in rotated.content.decode()
    client.post(reverse("project-webhook-action", args=[project.pk, hook.pk, "deactivate"]))
    hook.refresh_from_db()
    assert not hook.is_active
    refused = client.post(reverse("project-webhook-send-again", args=[project.pk, delivery.pk]), follow=True)
    assert "inactive" in refused.content.decode()
    client.post(reverse("project-webhook-action", args=[project.pk, hook.pk, "delete"]))
    assert not Webhook.objects.exists()


def test_a_url_off_the_allow_list_is_refused_on_the_form_with_the_reason(client, researcher, project):
    client.force_login(researcher)
    answer = client.post(
        reverse("project-webhook-new", args=[project.pk]), form("https://hooks.example.net/x", "export.ready")
    )
    assert answer.status_code == 400 and "not on the list of allowed" in answer.content.decode()
    answer = client.post(reverse("project-webhook-new", args=[project.pk]), form("https://hooks.example.net/x"))
    assert answer.status_code == 400 and "This field is required" in answer.content.decode()
    assert not Webhook.objects.exists()


def test_only_researchers_reach_the_webhooks_page(client, annotator, adjudicator, project):
    for user in (annotator, adjudicator):
        client.force_login(user)
        assert client.get(reverse("project-webhooks", args=[project.pk])).status_code == 404
        assert client.post(reverse("project-webhook-new", args=[project.pk]), form("http://x", "x")).status_code == 404
