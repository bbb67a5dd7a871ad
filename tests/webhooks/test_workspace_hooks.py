"""Webhooks of a workspace: a hook hears every project, dataset and import of its workspace and nothing of another,
signed as a project's hook is; only the workspace's researchers (and admins) register, see and change one, through
the API and the workspace's webhooks page; a hook has exactly one scope."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, transaction
from django.urls import reverse

from core import workspaces
from core.jobs import runner
from core.models import Workspace
from reports import services as export_services
from tests.annotation.conftest import build_dataset
from tests.fakes.http_receiver import Answer
from tests.frontend.test_pages import assert_csp_clean
from tests.webhooks.test_deliveries import label_all_correct
from verifybench import imports
from verifybench.models import Dataset
from webhooks import services, signing
from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db


def export_now(project):
    job = export_services.create_export(project=project, format="verifybench-hard", enqueue=False)
    return runner.run("export", job.pk, job.attempt)


def import_now(dataset_name: str, workspace: Workspace, text: str):
    upload = SimpleUploadedFile("rows.jsonl", text.encode())
    job = imports.create_import(uploaded=upload, dataset_name=dataset_name, workspace=workspace, enqueue=False)
    return runner.run("import", job.pk, job.attempt)


ROW = json.dumps({"question_id": "new", "question": "2+2?", "reference_answer": "4", "completion": "4", "model": "m"})


@pytest.fixture
def other_team(make_user):
    """A second workspace with a researcher of its own and a project on a dataset of its own."""
    team = Workspace.objects.create(name="Another team")
    dataset = build_dataset(name="their set")
    Dataset.objects.filter(pk=dataset.pk).update(workspace=team)
    dataset.refresh_from_db()
    member = make_user("researcher")
    member.workspace_memberships.all().delete()
    workspaces.add_member(team, member)
    return {"workspace": team, "dataset": dataset, "researcher": member}


def test_a_workspace_hook_hears_its_projects_datasets_and_imports_signed_and_nothing_of_another_workspace(
    allowed_receiver,
    receiver,
    verifybench_data,
    make_project,
    other_team,
    make_user,
    settings,
    tmp_path,
    verify_webhook,
    fast_retries,
    django_capture_on_commit_callbacks,
):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    settings.EXPORT_ROOT = tmp_path / "exports"
    ours = verifybench_data.dataset.workspace
    theirs = other_team["workspace"]
    their_project, their_annotators, _ = make_project(annotators=2, dataset=other_team["dataset"])
    label_all_correct(their_project, their_annotators)  # an export writes only what has a final label
    hook = services.create_webhook(
        workspace=ours,
        url=receiver.url + "/ours",
        events=["export.ready", "import.finished", "import.failed"],
        created_by=make_user("researcher"),
    )
    other = services.create_webhook(
        workspace=theirs, url=receiver.url + "/theirs", events=["export.ready", "import.finished"]
    )

    with django_capture_on_commit_callbacks(execute=True):
        export_now(their_project)  # another workspace's project: only its own workspace's hook hears it
        job = export_now(verifybench_data.project)
    heard = [(request.path, request.json()["event"], request.json()["project"]) for request in receiver.requests]
    assert heard == [
        ("/theirs", "export.ready", their_project.pk),
        ("/ours", "export.ready", verifybench_data.project.pk),
    ]
    ours_request = receiver.requests[1]
    verify_webhook(hook.secret, ours_request.headers, ours_request.body)  # the README's check
    signing.verify(hook.secret, ours_request.headers, ours_request.body)  # the app's own
    with pytest.raises(signing.SignatureRefused, match="does not match"):
        signing.verify(other.secret, ours_request.headers, ours_request.body)
    body = ours_request.json()
    assert (body["webhook"], body["workspace"], body["dataset"]) == (hook.pk, ours.pk, verifybench_data.dataset.pk)
    assert body["data"]["export"]["id"] == job.pk
    assert ours_request.header("X-Mathlabel-Delivery") == str(WebhookDelivery.objects.get(webhook=hook).pk)
    assert receiver.requests[0].json()["workspace"] == theirs.pk

    receiver.requests.clear()
    with django_capture_on_commit_callbacks(execute=True):
        import_now(verifybench_data.dataset.name, ours, ROW + "\n")  # into one of our datasets
        import_now("a set never made", ours, "{broken\n")  # rejected before its dataset existed: ours still
        import_now("their new set", theirs, ROW + "\n")
    heard = [(request.path, request.json()["event"], request.json()["dataset"]) for request in receiver.requests]
    assert heard == [
        ("/ours", "import.finished", verifybench_data.dataset.pk),
        ("/ours", "import.failed", None),
        ("/theirs", "import.finished", Dataset.objects.get(name="their new set").pk),
    ]
    for request in receiver.requests[:2]:
        verify_webhook(hook.secret, request.headers, request.body)
        assert request.json()["workspace"] == ours.pk and request.json()["project"] is None
    assert WebhookDelivery.objects.filter(webhook=hook).count() == 3
    assert WebhookDelivery.objects.filter(webhook=other).count() == 2


def test_a_hook_has_exactly_one_scope_in_the_service_and_in_the_database(verifybench_data, allowed_receiver, receiver):
    project, workspace = verifybench_data.project, verifybench_data.dataset.workspace
    with pytest.raises(services.WebhookRequestError, match="project or the workspace"):
        services.create_webhook(url=receiver.url, events=["export.ready"])
    with pytest.raises(services.WebhookRequestError, match="not both"):
        services.create_webhook(project=project, workspace=workspace, url=receiver.url, events=["export.ready"])
    for scope in ({}, {"project": project, "workspace": workspace}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Webhook.objects.create(url=receiver.url, events=["export.ready"], secret="s", **scope)
    assert not Webhook.objects.exists()


@pytest.fixture
def researcher_api(api_client_for, researcher):
    return api_client_for(researcher)


def test_the_api_registers_a_workspace_hook_for_members_and_refuses_a_scope_that_is_not_exactly_one(
    researcher_api, researcher, make_project, other_team, allowed_receiver, receiver
):
    project, _, _ = make_project(annotators=0)
    ours = project.dataset.workspace
    assert workspaces.can_research(researcher, ours.pk)
    given = {"url": receiver.url + "/in", "events": ["export.ready"]}

    created = researcher_api.post("/api/webhooks/", {**given, "workspace": ours.pk}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["workspace"], body["project"]) == (ours.pk, None) and body["secret"].startswith("whsec_")
    assert Webhook.objects.get(pk=body["id"]).workspace == ours

    neither = researcher_api.post("/api/webhooks/", given, format="json")
    assert neither.status_code == 400 and "project or the workspace" in str(neither.json()["project"])
    both = researcher_api.post("/api/webhooks/", {**given, "workspace": ours.pk, "project": project.pk}, format="json")
    assert both.status_code == 400 and "not both" in str(both.json()["workspace"])
    nulls = researcher_api.post("/api/webhooks/", {**given, "workspace": None, "project": None}, format="json")
    assert nulls.status_code == 400
    foreign = researcher_api.post("/api/webhooks/", {**given, "workspace": other_team["workspace"].pk}, format="json")
    missing = researcher_api.post("/api/webhooks/", {**given, "workspace": 987654}, format="json")
    assert foreign.status_code == missing.status_code == 400  # another team's workspace is as good as none
    assert "does not exist" in str(foreign.json()["workspace"]) and "does not exist" in str(missing.json()["workspace"])
    assert Webhook.objects.count() == 1

    project_hook = researcher_api.post("/api/webhooks/", {**given, "project": project.pk}, format="json").json()
    changed = researcher_api.patch(
        f"/api/webhooks/{body['id']}/", {"events": ["import.failed"], "project": project.pk}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["events"] == ["import.failed"]
    assert (changed.json()["workspace"], changed.json()["project"]) == (ours.pk, None)  # the scope stays

    listed = researcher_api.get("/api/webhooks/").json()["results"]
    assert [row["id"] for row in listed] == [body["id"], project_hook["id"]]
    filtered = researcher_api.get(f"/api/webhooks/?workspace={ours.pk}").json()["results"]
    assert [row["id"] for row in filtered] == [body["id"]]
    assert researcher_api.get(f"/api/webhooks/?project={project.pk}").json()["results"][0]["id"] == project_hook["id"]


def test_a_researcher_of_another_workspace_neither_sees_nor_changes_a_workspace_hook(
    api_client_for,
    researcher,
    admin_role_user,
    other_team,
    make_project,
    allowed_receiver,
    receiver,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    theirs = other_team["workspace"]
    their_project, their_annotators, _ = make_project(annotators=2, dataset=other_team["dataset"])
    label_all_correct(their_project, their_annotators)  # an export writes only what has a final label
    member = api_client_for(other_team["researcher"])
    hook = member.post(
        "/api/webhooks/",
        {"workspace": theirs.pk, "url": receiver.url + "/in", "events": ["export.ready"]},
        format="json",
    ).json()
    project_hook = member.post(
        "/api/webhooks/",
        {"project": their_project.pk, "url": receiver.url + "/in", "events": ["export.ready"]},
        format="json",
    ).json()
    with django_capture_on_commit_callbacks(execute=True):
        assert member.post(f"/api/webhooks/{hook['id']}/ping/").status_code == 202
    delivery = WebhookDelivery.objects.get()
    assert member.get(f"/api/webhook-deliveries/?workspace={theirs.pk}").json()["results"][0]["id"] == delivery.pk

    outsider = api_client_for(researcher)  # a researcher of the default workspace only
    assert not workspaces.can_research(researcher, theirs.pk)
    before = list(Webhook.objects.order_by("pk").values_list("pk", "url", "events", "is_active", "secret"))
    for hook_id in (hook["id"], project_hook["id"]):
        url = f"/api/webhooks/{hook_id}/"
        assert outsider.get(url).status_code == 404
        assert outsider.patch(url, {"url": receiver.url + "/mine"}, format="json").status_code == 404
        assert outsider.put(url, {"url": receiver.url, "events": ["import.failed"]}, format="json").status_code == 404
        for action in ("ping", "rotate-secret"):
            assert outsider.post(f"{url}{action}/").status_code == 404
        assert outsider.get(f"{url}deliveries/").status_code == 404
        assert outsider.delete(url).status_code == 404
    assert outsider.get(f"/api/webhook-deliveries/{delivery.pk}/").status_code == 404
    assert outsider.post(f"/api/webhook-deliveries/{delivery.pk}/send-again/").status_code == 404
    assert outsider.get("/api/webhooks/").json()["results"] == []
    assert outsider.get(f"/api/webhooks/?workspace={theirs.pk}").json()["results"] == []
    assert outsider.get("/api/webhook-deliveries/").json()["results"] == []
    assert outsider.get(f"/api/webhook-deliveries/?workspace={theirs.pk}").json()["results"] == []
    assert list(Webhook.objects.order_by("pk").values_list("pk", "url", "events", "is_active", "secret")) == before
    assert len(receiver.requests) == 1

    admin = api_client_for(admin_role_user)  # admins reach every workspace
    assert {row["id"] for row in admin.get("/api/webhooks/").json()["results"]} == {hook["id"], project_hook["id"]}
    made = admin.post(
        "/api/webhooks/",
        {"workspace": theirs.pk, "url": receiver.url + "/admin", "events": ["run.failed"]},
        format="json",
    )
    assert made.status_code == 201 and made.json()["workspace"] == theirs.pk


def page_form(url: str, *events: str) -> dict:
    return {"hook-url": url, "hook-events": list(events), "hook-description": "the team's scheduler"}


def test_the_workspace_webhooks_page_is_linked_from_home_and_registers_a_hook_with_its_delivery_log(
    client, researcher, make_project, allowed_receiver, receiver, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    project, _, _ = make_project(annotators=0)
    workspace = project.dataset.workspace
    page_url = reverse("workspace-webhooks", args=[workspace.pk])
    client.force_login(researcher)
    home = client.get(reverse("home")).content.decode()
    assert f'href="{page_url}"' in home
    project_page = client.get(reverse("project-webhooks", args=[project.pk])).content.decode()
    assert f'href="{page_url}"' in project_page

    page = client.get(page_url)
    html = page.content.decode()
    assert page.status_code == 200 and f"Webhooks of the workspace {workspace.name}" in html
    assert "No webhook yet" in html and 'href="/#workspaces"' in html
    assert_csp_clean(html)

    created = client.post(
        reverse("workspace-webhook-new", args=[workspace.pk]),
        page_form(receiver.url + "/in", "export.ready", "import.finished"),
    )
    hook = Webhook.objects.get()
    assert created.status_code == 201 and hook.secret in created.content.decode()
    assert (hook.workspace, hook.project, hook.events) == (workspace, None, ["import.finished", "export.ready"])
    assert hook.created_by == researcher and hook.description == "the team's scheduler"
    html = client.get(page_url).content.decode()
    assert f'data-webhook="{hook.pk}"' in html and hook.secret not in html
    assert (
        f'data-webhook="{hook.pk}"' not in client.get(reverse("project-webhooks", args=[project.pk])).content.decode()
    )

    receiver.script(Answer(500, b"down"))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("workspace-webhook-action", args=[workspace.pk, hook.pk, "ping"]))
    delivery = WebhookDelivery.objects.get()
    html = client.get(page_url).content.decode()
    assert f'data-delivery="{delivery.pk}" data-status="succeeded"' in html
    assert 'data-attempt="1" data-code="500"' in html and 'data-attempt="2" data-code="200"' in html
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(reverse("workspace-webhook-send-again", args=[workspace.pk, delivery.pk]))
    assert again.status_code == 302 and again.url == page_url
    assert 'data-attempt="3" data-code="200"' in client.get(page_url).content.decode()

    refused = client.post(reverse("workspace-webhook-new", args=[workspace.pk]), page_form("https://x.example.net/"))
    assert refused.status_code == 400 and "This field is required" in refused.content.decode()
    client.post(reverse("workspace-webhook-action", args=[workspace.pk, hook.pk, "delete"]))
    assert not Webhook.objects.exists()


def test_the_workspace_webhooks_page_is_a_404_for_anyone_but_its_researchers(
    client, researcher, annotator, other_team, allowed_receiver, receiver
):
    theirs = other_team["workspace"]
    hook = services.create_webhook(workspace=theirs, url=receiver.url + "/in", events=["export.ready"])
    services.ping(hook)
    delivery = WebhookDelivery.objects.get()
    client.force_login(other_team["researcher"])
    assert client.get(reverse("workspace-webhooks", args=[theirs.pk])).status_code == 200

    for user in (researcher, annotator):
        client.force_login(user)
        assert client.get(reverse("workspace-webhooks", args=[theirs.pk])).status_code == 404
        assert theirs.name not in client.get(reverse("home")).content.decode()
        create = client.post(reverse("workspace-webhook-new", args=[theirs.pk]), page_form(receiver.url, "run.failed"))
        assert create.status_code == 404
        for action in ("ping", "rotate-secret", "deactivate", "delete"):
            url = reverse("workspace-webhook-action", args=[theirs.pk, hook.pk, action])
            assert client.post(url).status_code == 404
        assert client.post(reverse("workspace-webhook-send-again", args=[theirs.pk, delivery.pk])).status_code == 404
    own = researcher.workspace_memberships.get().workspace
    client.force_login(researcher)  # their own workspace's page does not reach another's hook either
    assert client.post(reverse("workspace-webhook-action", args=[own.pk, hook.pk, "delete"])).status_code == 404
    assert Webhook.objects.filter(pk=hook.pk, is_active=True, secret=hook.secret).exists()
    assert Webhook.objects.count() == 1
