"""The webhooks API: register (the secret shown once), change, list events, ping, read the delivery log, send
again; researchers and admins only."""

from __future__ import annotations

import pytest

from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher_api(api_client_for, researcher):
    return api_client_for(researcher)


def test_a_webhook_is_registered_with_its_secret_shown_once_and_changed_through_the_rules(
    researcher_api, make_project, allowed_receiver, receiver
):
    project, _, _ = make_project(annotators=0)
    created = researcher_api.post(
        "/api/webhooks/",
        {"project": project.pk, "url": receiver.url + "/in", "events": ["export.ready", "project.completed"]},
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["secret"].startswith("whsec_") and body["events"] == ["project.completed", "export.ready"]
    assert body["deliveries_url"] == f"/api/webhooks/{body['id']}/deliveries/"
    assert Webhook.objects.get().secret == body["secret"]

    listed = researcher_api.get(f"/api/webhooks/?project={project.pk}").json()
    assert [hook["id"] for hook in listed["results"]] == [body["id"]]
    assert "secret" not in listed["results"][0] and "secret" not in researcher_api.get(body["deliveries_url"]).json()

    changed = researcher_api.patch(f"/api/webhooks/{body['id']}/", {"events": ["item.adjudicated"]}, format="json")
    assert changed.status_code == 200 and changed.json()["events"] == ["item.adjudicated"]
    assert changed.json()["project"] == project.pk and "secret" not in changed.json()

    rotated = researcher_api.post(f"/api/webhooks/{body['id']}/rotate-secret/").json()
    assert rotated["secret"] != body["secret"] and Webhook.objects.get().secret == rotated["secret"]

    events = researcher_api.get("/api/webhooks/events/").json()
    names = [event["name"] for event in events]
    assert names[:2] == ["import.finished", "import.failed"] and "webhook.ping" not in names
    assert all(event["description"] for event in events)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"url": "https://elsewhere.example.com/in"}, "not on the list of allowed"),
        ({"events": ["project.finished"]}, "unknown event 'project.finished'"),
        ({"events": []}, "This list may not be empty"),
        ({"url": "http://127.0.0.1:1/\x00"}, "cannot be stored"),
    ],
)
def test_a_bad_url_or_event_is_a_400_with_the_reason_and_nothing_is_saved(
    researcher_api, make_project, allowed_receiver, change, message
):
    project, _, _ = make_project(annotators=0)
    given = {"project": project.pk, "url": "http://127.0.0.1:9/in", "events": ["export.ready"], **change}
    answer = researcher_api.post("/api/webhooks/", given, format="json")
    assert answer.status_code == 400 and message in str(answer.json())
    assert not Webhook.objects.exists()


def test_a_ping_is_delivered_and_the_log_shows_it_and_send_again_repeats_it(
    researcher_api, researcher, make_project, allowed_receiver, receiver, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    project, _, _ = make_project(annotators=0)
    hook = researcher_api.post(
        "/api/webhooks/",
        {"project": project.pk, "url": receiver.url + "/in", "events": ["export.ready"]},
        format="json",
    ).json()
    with django_capture_on_commit_callbacks(execute=True):
        pinged = researcher_api.post(f"/api/webhooks/{hook['id']}/ping/")
    assert pinged.status_code == 202 and pinged.json()["event"] == "webhook.ping"
    assert receiver.requests[0].json()["data"]["requested_by"] == researcher.username

    log = researcher_api.get(f"/api/webhooks/{hook['id']}/deliveries/").json()
    [row] = log["results"]
    assert (row["status"], row["attempts"], row["last_status_code"]) == ("succeeded", 1, 200)
    detail = researcher_api.get(row["url"]).json()
    assert detail["body"]["event"] == "webhook.ping"
    assert [(a["number"], a["trigger"], a["status_code"]) for a in detail["attempt_log"]] == [(1, "event", 200)]

    with django_capture_on_commit_callbacks(execute=True):
        again = researcher_api.post(f"{row['url']}send-again/")
    assert again.status_code == 202
    detail = researcher_api.get(row["url"]).json()
    assert [(a["trigger"], a["requested_by"]) for a in detail["attempt_log"]] == [
        ("event", None),
        ("manual", researcher.username),
    ]
    assert len(receiver.requests) == 2

    everything = researcher_api.get(f"/api/webhook-deliveries/?project={project.pk}&status=succeeded").json()
    assert [row["id"] for row in everything["results"]] == [detail["id"]]
    assert researcher_api.get("/api/webhook-deliveries/?status=lost").status_code == 400
    assert researcher_api.get("/api/webhook-deliveries/?event=nothing").status_code == 400
    assert researcher_api.get("/api/webhook-deliveries/?webhook=abc").status_code == 400

    researcher_api.patch(f"/api/webhooks/{hook['id']}/", {"is_active": False}, format="json")
    refused = researcher_api.post(f"{row['url']}send-again/")
    assert refused.status_code == 400 and "inactive" in refused.json()["detail"]
    assert researcher_api.post(f"/api/webhooks/{hook['id']}/ping/").status_code == 400

    assert researcher_api.delete(f"/api/webhooks/{hook['id']}/").status_code == 204
    assert not WebhookDelivery.objects.exists()


def test_only_researchers_and_admins_see_webhooks(api_client_for, annotator, adjudicator, make_project):
    project, _, _ = make_project(annotators=0)
    for user in (annotator, adjudicator, None):
        client = api_client_for(user)
        assert client.get("/api/webhooks/").status_code in (401, 403)
        assert client.get("/api/webhook-deliveries/").status_code in (401, 403)
        assert (
            client.post("/api/webhooks/", {"project": project.pk, "url": "http://x", "events": ["export.ready"]})
        ).status_code in (401, 403)
