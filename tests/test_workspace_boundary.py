"""The workspace boundary, route by route: a researcher who is a member of one workspace reaches nothing another holds.

The demo's two teams' workspaces (and the default one) are filled, and a few more kinds of object are added to them
(an import, an export, a selection, an invitation, a project's and a workspace's hook and their deliveries); then a researcher of a third workspace
asks every API operation and every page for each of those objects, and every list for its contents. Every answer is
a 403 or a 404, no list shows any of it, and no request changes a row. A positive control proves the researcher is
signed in and sees their own workspace.
"""

from __future__ import annotations

import hashlib
import io
import re

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import AnnotationProject, Invitation, Item, ProjectMember, Task
from annotation.services import create_invitation, next_task
from core import roles, workspaces
from core.jobs import runner
from core.models import Workspace
from grading.models import AllowedJudgeHost, Competition, Rubric, SelectionRecord, VerificationRun, VerifierConfig
from grading.selection.services import select_for_annotation
from reports.models import ExportJob
from reports.services import create_export
from verifybench.imports import create_import
from verifybench.models import Completion, Dataset, ImportJob, PriorLabel, Question, ReferenceAnswer
from webhooks import services as webhook_services
from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db

DENIED = {403, 404}
WRITES = ("post", "put", "patch", "delete")
# Lists that show what every workspace shares: the hookable event names, and verifiers that belong to no workspace.
SHARED_LISTS = {"/api/webhooks/events/"}
WATCHED_APPS = ("core", "verifybench", "annotation", "grading", "reports", "webhooks")


@pytest.fixture
def foreign(db, tmp_path, settings, monkeypatch):
    """Every kind of object the API and the pages name, in workspaces the outsider is not a member of."""
    settings.EXPORT_ROOT = tmp_path / "exports"
    monkeypatch.setenv("WEBHOOK_ALLOWED_HOSTS", "hooks.example.org")
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.org"]
    call_command("load_demo", force=True, stdout=io.StringIO())
    AllowedJudgeHost.objects.create(host="judge.example.org", port=443, scheme="https")
    admin = User.objects.get(username="admin1")
    project = AnnotationProject.objects.filter(kind="correctness").order_by("pk").first()
    dataset = project.dataset
    create_invitation(project, actor=admin)
    create_export(project=project, format="verifybench-hard", created_by=admin)
    upload = io.BytesIO(b'{"question": "q", "reference_answer": "1", "completion": "1"}\n')
    upload.name = "more.jsonl"
    create_import(uploaded=upload, dataset_name=dataset.name, created_by=admin, workspace=dataset.workspace)
    verifiers = [VerifierConfig.objects.filter(kind=VerifierConfig.Kind.RULE).order_by("pk").first()]
    VerifierConfig.objects.filter(pk=verifiers[0].pk).update(workspace=dataset.workspace)
    select_for_annotation(
        dataset=dataset, strategy="verifybench", verifiers=verifiers, target=4, seed=1, created_by=admin
    )
    hook = Webhook.objects.create(
        project=project, url="https://hooks.example.org/in", events=["export.succeeded"], secret="s" * 32
    )
    webhook_services.ping(hook, requested_by=admin)
    team_hook = Webhook.objects.create(
        workspace=dataset.workspace, url="https://hooks.example.org/team", events=["import.failed"], secret="t" * 32
    )
    webhook_services.ping(team_hook, requested_by=admin)
    proofs = AnnotationProject.objects.get(kind="proof_grade")
    grader = proofs.memberships.filter(role=ProjectMember.Role.ANNOTATOR).first().user
    assert next_task(proofs, grader) is not None  # a grader's lease: a proof grading task
    return project


@pytest.fixture
def outsider(db):
    """A researcher whose only workspace holds one dataset of their own."""
    user = User.objects.create_user(username="outsider", password="pass-word-123")
    user.groups.add(Group.objects.get_or_create(name=roles.RESEARCHER)[0])
    own = Workspace.objects.create(name="Elsewhere")
    workspaces.add_member(own, user)
    Dataset.objects.create(name="outsider's own set", workspace=own)
    return user


def foreign_ids(model, **filters) -> list:
    if model is Dataset:
        filters["workspace__name__in"] = list(
            Workspace.objects.exclude(name="Elsewhere").values_list("name", flat=True)
        )
    if model is Workspace:
        filters["pk__in"] = list(Workspace.objects.exclude(name="Elsewhere").values_list("pk", flat=True))
    return list(model.objects.filter(**filters).order_by("pk").values_list("pk", flat=True)[:3])


def job_ids() -> list[str]:
    return [f"{kind.name}-{pk}" for kind in runner.kinds() for pk in foreign_ids(kind.model)]


# The object a path's `{id}` names, by what precedes it.
API_OBJECTS = {
    "/api/completions/": Completion,
    "/api/datasets/": Dataset,
    "/api/exports/": ExportJob,
    "/api/grading/competitions/": Competition,
    "/api/grading/items/": Item,
    "/api/grading/judge-hosts/": AllowedJudgeHost,
    "/api/grading/rubrics/": Rubric,
    "/api/grading/runs/": VerificationRun,
    "/api/grading/selections/": SelectionRecord,
    "/api/grading/tasks/": Task,
    "/api/grading/verifiers/": VerifierConfig,
    "/api/imports/": ImportJob,
    "/api/items/": Item,
    "/api/prior-labels/": PriorLabel,
    "/api/projects/": AnnotationProject,
    "/api/questions/": Question,
    "/api/references/": ReferenceAnswer,
    "/api/tasks/": Task,
    "/api/webhook-deliveries/": WebhookDelivery,
    "/api/webhooks/": Webhook,
}
API_FILTERS = {VerifierConfig: {"workspace__isnull": False}}  # a verifier of no workspace is shared by all
PAGE_OBJECTS = {
    "dataset_id": Dataset,
    "completion_id": Completion,
    "project_id": AnnotationProject,
    "item_id": Item,
    "selection_id": SelectionRecord,
    "export_id": ExportJob,
    "task_id": Task,
    "competition_id": Competition,
    "workspace_id": Workspace,
}
NESTED = {  # a second parameter names an object of the project (or workspace) the first one names
    "member_id": ProjectMember,
    "invitation_id": Invitation,
    "webhook_id": Webhook,
    "delivery_id": WebhookDelivery,
}


def project_of(row) -> int:
    return row.webhook.project_id if isinstance(row, WebhookDelivery) else row.project_id


def nested_rows(model, first: str) -> list[tuple[int, int]]:
    """(the id of the project or workspace the first parameter names, the row's id) for rows of `model` under it."""
    scope = "workspace" if first == "workspace_id" else "project"
    rows = model.objects.order_by("pk")
    if model is Webhook:
        rows = rows.filter(**{f"{scope}__isnull": False})
    elif model is WebhookDelivery:
        rows = rows.filter(**{f"webhook__{scope}__isnull": False}).select_related("webhook")
    if scope == "workspace":
        return [(row.workspace_id if model is Webhook else row.webhook.workspace_id, row.pk) for row in rows[:3]]
    return [(project_of(row), row.pk) for row in rows[:3]]


def api_targets(path: str) -> list[dict]:
    """Values for the path's parameters, each naming objects of the other workspaces."""
    names = re.findall(r"{(\w+)}", path)
    if not names:
        return []
    first = names[0]
    if path.startswith("/api/jobs/"):
        values = job_ids()
    elif first in ("dataset_id", "project_id"):
        values = foreign_ids(Dataset if first == "dataset_id" else AnnotationProject)
    else:
        model = next(model for prefix, model in API_OBJECTS.items() if path.startswith(prefix))
        values = foreign_ids(model, **API_FILTERS.get(model, {}))
        if path.startswith("/api/grading/items/"):
            values = foreign_ids(Item, project__kind="proof_grade")
        elif path.startswith("/api/grading/tasks/"):
            values = foreign_ids(Task, item__project__kind="proof_grade")
    targets = [{first: value} for value in values]
    if len(names) == 2:
        targets = [{first: owner, names[1]: pk} for owner, pk in nested_rows(NESTED[names[1]], first)]
    assert targets, f"no foreign object for {path}: the fixture must make one"
    return targets


def state_digest() -> str:
    """A digest of every row the app keeps, to prove no request changed one."""
    digest = hashlib.sha256()
    for model in apps.get_models():
        if model._meta.app_label in WATCHED_APPS and not model._meta.proxy:
            for row in model.objects.order_by("pk").values_list():
                digest.update(repr(row).encode())
    return digest.hexdigest()


def api_operations():
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method in ("get", *WRITES):
                yield path, method, operation


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def listed_rows(body) -> list:
    if isinstance(body, dict) and isinstance(body.get("results"), list):
        return body["results"]
    return body if isinstance(body, list) else []


def test_no_api_operation_reaches_another_workspace(foreign, outsider):
    client = client_for(outsider)
    own_workspace = Workspace.objects.get(name="Elsewhere").pk
    own = client.get("/api/datasets/")
    assert own.status_code == 200 and [row["name"] for row in listed_rows(own.json())] == ["outsider's own set"]
    member = client_for(User.objects.get(username="researcher1"))
    assert member.get(f"/api/projects/{foreign.pk}/").status_code == 200  # the objects are there to be reached

    names = list(Dataset.objects.exclude(workspace__name="Elsewhere").values_list("name", flat=True))
    names += list(AnnotationProject.objects.values_list("name", flat=True))
    before = state_digest()
    reached = []
    for path, method, operation in api_operations():
        targets = api_targets(path)
        if not targets:
            if method != "get" or path in SHARED_LISTS or path == "/api/grading/judge-hosts/":
                continue
            query = {
                parameter["name"]: foreign.dataset_id if "dataset" in parameter["name"] else foreign.pk
                for parameter in operation.get("parameters", [])
                if parameter["in"] == "query" and parameter["name"] in ("dataset", "project", "competition")
            }
            for asked in ({}, query) if query else ({},):
                response = client.get(path, asked)
                rows = listed_rows(response.json()) if response.status_code == 200 else []
                # the outsider's own dataset, and verifiers every workspace shares, may be listed
                rows = [row for row in rows if row.get("workspace") not in (None, own_workspace)]
                text = response.content.decode()
                if rows or any(name and f'"{name}"' in text for name in names):
                    reached.append((method, path, asked, response.status_code, text[:200]))
            continue
        for values in targets:
            url = path
            for name, value in values.items():
                url = url.replace("{" + name + "}", str(value))
            response = getattr(client, method)(url, {}, format="json")
            if response.status_code not in DENIED:
                reached.append((method, url, response.status_code, response.content[:200]))
    assert reached == [], "\n".join(map(str, reached))
    assert state_digest() == before


def page_patterns():
    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if not str(pattern.pattern).startswith(("admin/", "api/")):
                    yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield prefix + str(pattern.pattern), pattern

    yield from walk(get_resolver().url_patterns)


def page_targets(route: str) -> list[str]:
    names = re.findall(r"<(?:\w+:)?(\w+)>", route)
    if not names:
        return []
    if route.startswith("jobs/"):
        rows = [(kind.name, pk) for kind in runner.kinds() for pk in foreign_ids(kind.model)]
        urls = ["jobs/{}/{}/".format(*row) for row in rows]
        if "action" in names:
            urls = [url + action + "/" for url in urls for action in ("cancel", "resume", "restart")]
        return urls
    if route.startswith(("runs/", "exports/")) and "job_id" in names:
        model = VerificationRun if route.startswith("runs/") else ExportJob
        return [re.sub(r"<[^>]+>", str(pk), route, count=1) for pk in foreign_ids(model)]
    if names == ["token"]:
        return []  # an invitation's link is a secret of its own, for anyone who holds it
    first = names[0]
    if len(names) == 1:
        return [re.sub(r"<[^>]+>", str(pk), route) for pk in foreign_ids(PAGE_OBJECTS[first])]
    urls = []
    for owner, pk in nested_rows(NESTED[names[1]], first):
        url = route.replace(f"<int:{first}>", str(owner)).replace(f"<int:{names[1]}>", str(pk))
        urls.extend(url.replace("<slug:action>", action) for action in ("ping", "rotate-secret", "delete", "edit"))
    return sorted(set(urls))


def test_no_page_reaches_another_workspace(foreign, outsider):
    client = Client()
    client.force_login(outsider)
    home = client.get("/").content.decode()
    assert "outsider&#x27;s own set" in home or "outsider's own set" in home

    names = [name for name in Dataset.objects.exclude(workspace__name="Elsewhere").values_list("name", flat=True)]
    names += list(AnnotationProject.objects.values_list("name", flat=True))
    before = state_digest()
    reached = []
    for route, _pattern in page_patterns():
        urls = page_targets(route)
        if not urls:
            if "<" in route:
                continue
            response = client.get("/" + route)
            text = response.content.decode(errors="replace")
            shown = [name for name in names if name and name in text]
            if response.status_code == 200 and shown:
                reached.append(("get", route, shown))
            continue
        for url in urls:
            for method in ("get", "post"):
                response = getattr(client, method)("/" + url)
                if response.status_code not in DENIED | {405}:  # a page that takes no such method tells nothing
                    reached.append((method, url, response.status_code))
    assert reached == [], "\n".join(map(str, reached))
    assert state_digest() == before


NOT_A_RESEARCHERS = ("/api/tasks/", "/api/grading/tasks/", "/api/grading/judge-hosts/")


def test_a_member_reads_every_object_the_outsider_could_not(foreign):
    """The other side of the boundary, so that the outsider's refusals are not an artefact: a researcher of the
    workspaces that hold the objects reads each of them through every GET route that names one."""
    member = client_for(User.objects.get(username="researcher1"))
    assert set(workspaces.visible_ids(User.objects.get(username="researcher1"))) == set(
        Dataset.objects.values_list("workspace_id", flat=True)
    )
    refused = []
    for path, method, _operation in api_operations():
        # tasks are their annotator's, conflicts the adjudicators', the allow-list of judge hosts the admins'; an
        # import without skipped lines has no rejects
        if method != "get" or path.startswith(NOT_A_RESEARCHERS) or path.endswith(("/conflicts/", "/rejects/")):
            continue
        for values in api_targets(path):
            url = path
            for name, value in values.items():
                url = url.replace("{" + name + "}", str(value))
            response = member.get(url)
            if response.status_code in DENIED:
                refused.append((url, response.status_code, response.content[:200]))
    assert refused == [], "\n".join(map(str, refused))
