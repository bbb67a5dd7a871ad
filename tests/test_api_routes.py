"""Every API route, opened the way a browser or a client opens it, answers without a server error.

Routes come from the URL resolver, so a new endpoint is walked as soon as it is wired. Path parameters are filled with
ids of real objects (the demo data, plus an open task, a proof task, a selection and a finished export) and with ids
that exist nowhere; each URL is then read with a browser's Accept header (the browsable API) and as JSON, by an
anonymous visitor and by a user of each role.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass

import pytest
from django.contrib.admindocs.views import simplify_regex
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework.authtoken.models import Token

from annotation import services as annotation_services
from annotation.models import AnnotationProject, Item, ProjectMember, Task
from core.demo import load_demo
from core.jobs import runner
from core.models import Workspace
from grading.models import AllowedJudgeHost, Competition, Rubric, SelectionRecord, VerificationRun, VerifierConfig
from grading.proofs.subject import PROOF_GRADE
from grading.selection import services as selection_services
from reports import services as export_services
from reports.models import ExportJob
from verifybench import imports
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer
from webhooks import services as webhook_services
from webhooks.models import WebhookDelivery

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
ACCEPTS = {"html": BROWSER_ACCEPT, "json": "application/json"}
ROLES = ("anonymous", "annotator", "adjudicator", "researcher", "admin")
DEMO_USERS = {"annotator": "annotator1", "adjudicator": "adjudicator1", "researcher": "researcher1", "admin": "admin1"}
MISSING = 987654321
PARAMETER = re.compile(r"<(\w+)>")
CONVERTER = re.compile(r"<\w+:(\w+)>")


@dataclass(frozen=True)
class Route:
    path: str  # with <name> for each parameter, e.g. /api/items/<pk>/history/
    name: str | None
    basename: str | None  # the router's basename for viewset routes

    @property
    def parameters(self) -> list[str]:
        return PARAMETER.findall(self.path)


def _walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def api_routes() -> list[Route]:
    routes = []
    for regex, pattern in _walk(get_resolver().url_patterns):
        path = CONVERTER.sub(r"<\1>", simplify_regex(regex)).replace("\\.", ".")
        if path.startswith("/api/"):
            initkwargs = getattr(pattern.callback, "initkwargs", {}) or {}
            routes.append(Route(path, pattern.name, initkwargs.get("basename")))
    return routes


def _ids(queryset, count: int = 2) -> list:
    return list(queryset.order_by("pk").values_list("pk", flat=True)[:count])


@pytest.fixture
def lab(db, settings, tmp_path):
    """The demo data and one more object of every kind an API route can name."""
    settings.EXPORT_ROOT = tmp_path / "exports"
    load_demo(stdout=io.StringIO())
    users = {role: User.objects.get(username=name) for role, name in DEMO_USERS.items()}
    correctness = AnnotationProject.objects.filter(kind="correctness").order_by("pk").first()
    proofs = AnnotationProject.objects.get(kind=PROOF_GRADE)
    open_task = annotation_services.next_task(correctness, users["annotator"])
    proof_task = annotation_services.next_task(proofs, users["annotator"])
    assert open_task is not None and proof_task is not None
    verifier = VerifierConfig.objects.get(name="sympy-rules")
    selection_services.select_for_annotation(
        dataset=correctness.dataset,
        strategy="verifybench",
        verifiers=[verifier],
        seed=1,
        target=8,
        name="walk",
        created_by=users["researcher"],
    )
    export = export_services.create_export(project=correctness, format="verifybench-hard", enqueue=False)
    runner.run("export", export.pk, export.attempt)
    queued_export = export_services.create_export(project=correctness, format="verifybench-hard", enqueue=False)
    AllowedJudgeHost.objects.create(host="judge.example.org", port=443, created_by=users["admin"])
    webhook = webhook_services.create_webhook(
        project=correctness, url="https://judge.example.org/hook", events=["export.ready"]
    )
    webhook_services.ping(webhook)  # recorded; its attempt is queued only when the test's transaction commits
    invitation, invitation_token = annotation_services.create_invitation(
        correctness, role=ProjectMember.Role.ANNOTATOR, days=7, actor=users["researcher"]
    )
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    row = {"question_id": "walk-1", "question": "1+1?", "reference_answer": "2", "completion": "2", "model": "m"}
    upload = SimpleUploadedFile("walk.jsonl", (json.dumps(row) + "\n{broken\n").encode())
    done_import = imports.create_import(uploaded=upload, dataset_name="walk", skip_invalid=True, enqueue=False)
    runner.run("import", done_import.pk, done_import.attempt)
    queued_import = imports.create_import(
        uploaded=SimpleUploadedFile("again.jsonl", json.dumps(row).encode()), dataset_name="walk", enqueue=False
    )
    assert ExportJob.objects.get(pk=export.pk).status == ExportJob.Status.SUCCEEDED

    waiting = Item.objects.filter(state=Item.State.NEEDS_ADJUDICATION)
    items = sorted(
        {
            *_ids(Item.objects.filter(project=correctness)),
            *_ids(waiting, 1),
            *_ids(Item.objects.filter(project=proofs), 1),
        }
    )
    real = {
        "dataset": _ids(Dataset.objects),
        "question": _ids(Question.objects, 1),
        "reference": _ids(ReferenceAnswer.objects, 1),
        "completion": _ids(Completion.objects, 1),
        "prior-label": _ids(PriorLabel.objects, 1),
        "project": _ids(AnnotationProject.objects, 10),
        "task": [open_task.pk, *_ids(Task.objects.exclude(pk=open_task.pk).filter(item__project=correctness), 1)],
        "item": items,
        "proof-task": [proof_task.pk],
        "proof-item": _ids(Item.objects.filter(project=proofs), 1),
        "rubric": _ids(Rubric.objects, 1),
        "competition": _ids(Competition.objects, 1),
        "judge-host": _ids(AllowedJudgeHost.objects, 1),
        "verifier-config": _ids(VerifierConfig.objects, 1),
        "verification-run": _ids(VerificationRun.objects, 1),
        "selection": _ids(SelectionRecord.objects, 1),
        "export": [export.pk, queued_export.pk],
        "import": [done_import.pk, queued_import.pk],
        "member": _ids(ProjectMember.objects.filter(project=correctness), 2),
        "invitation": [invitation.pk],
        "webhook": [webhook.pk],
        "webhook-delivery": _ids(WebhookDelivery.objects, 1),
        "delivery": _ids(WebhookDelivery.objects, 1),
        "workspace": _ids(Workspace.objects, 1),
    }
    real["job"] = [f"{kind.name}-{pk}" for kind in runner.kinds() for pk in _ids(kind.model.objects, 1)]
    missing = {key: [MISSING] for key in real}
    missing["job"] = [f"{runner.kinds()[0].name}-{MISSING}", f"no-such-kind-{MISSING}"]
    for kind, ids in real.items():
        assert ids, f"the lab has no {kind} to open"
    return {"users": users, "real": real, "missing": missing, "invitation_token": invitation_token}


def _kind_of(route: Route, parameter: str) -> str:
    if parameter == "pk":
        assert route.basename, f"{route.path}: a pk in a route that no router registered"
        return route.basename
    if parameter.endswith("_id"):
        return parameter.removesuffix("_id")
    raise AssertionError(f"{route.path}: the test does not know what to put in <{parameter}>")


def urls_for(route: Route, ids: dict[str, list]) -> list[str]:
    urls = [route.path]
    for parameter in route.parameters:
        if parameter == "format":
            values = ["api", "json"]
        else:
            kind = _kind_of(route, parameter)
            assert kind in ids, f"{route.path}: no objects of kind {kind!r} for <{parameter}>; add them to `lab`"
            values = ids[kind]
        urls = [url.replace(f"<{parameter}>", str(value), 1) for url in urls for value in values]
    return urls


def test_the_walk_covers_the_whole_api():
    routes = api_routes()
    paths = {route.path for route in routes}
    assert {
        "/api/items/<pk>/history/",
        "/api/items/<pk>/override/",
        "/api/docs/",
        "/api/redoc/",
        "/api/projects/<project_id>/meta-eval/",
        "/api/jobs/<pk>/cancel/",
    } <= paths
    assert len(routes) > 60


def test_the_whole_schema_is_valid_and_builds_without_warnings():
    GENERATOR_STATS.reset()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    assert not GENERATOR_STATS._warn_cache, dict(GENERATOR_STATS._warn_cache)
    assert not GENERATOR_STATS._error_cache, dict(GENERATOR_STATS._error_cache)


def test_no_api_url_answers_with_a_server_error(lab):
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role in ROLES[1:]:
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(lab["users"][role])
    failures, opened = [], 0
    for route in api_routes():
        urls = set(urls_for(route, lab["real"])) | set(urls_for(route, lab["missing"]))
        if "<format>" in route.path:
            urls = set(sorted(urls)[:2])  # the suffixed twin of a route: one real id in each format is enough
        for url in sorted(urls):
            for role, client in clients.items():
                for accept_name, accept in ACCEPTS.items():
                    response = client.get(url, HTTP_ACCEPT=accept)
                    opened += 1
                    if response.status_code >= 500:
                        error = getattr(response, "exc_info", None)
                        reason = f"{error[0].__name__}: {error[1]}" if error else ""
                        failures.append(f"{response.status_code} GET {url} as {role} ({accept_name}) {reason}")
    assert not failures, f"{len(failures)} of {opened} requests failed:\n" + "\n".join(failures)


BAD_IDS = ["abc", "1abc", "-1", "1.5", "9" * 5000]


def test_an_id_that_is_no_number_is_a_404_on_every_route(lab):
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role in ("annotator", "admin"):
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(lab["users"][role])
    failures, opened = [], 0
    for route in api_routes():
        names = [name for name in route.parameters if name != "format"]
        if not names:
            continue
        for name in names:
            base = route.path
            for other in route.parameters:
                if other not in (name, "format"):
                    base = base.replace(f"<{other}>", str(lab["real"][_kind_of(route, other)][0]), 1)
            base = base.replace("<format>", "json")
            for bad in BAD_IDS:
                url = base.replace(f"<{name}>", bad, 1)
                for role, client in clients.items():
                    for method in ("get", "options", "post"):
                        response = getattr(client, method)(url, HTTP_ACCEPT="application/json")
                        opened += 1
                        if response.status_code != 404:
                            failures.append(f"{response.status_code} {method.upper()} {url[:80]} as {role}")
    assert opened > 1000
    assert not failures, f"{len(failures)} of {opened} requests were not 404:\n" + "\n".join(failures)


def test_options_is_answered_on_every_route(lab):
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role in ROLES[1:]:
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(lab["users"][role])
    failures, opened = [], 0
    for route in api_routes():
        for url in sorted(set(urls_for(route, lab["real"])))[:2]:
            for role, client in clients.items():
                response = client.options(url, HTTP_ACCEPT="application/json")
                opened += 1
                if response.status_code not in (200, 401, 403, 404, 405, 406):  # 406: an HTML page asked for JSON
                    error = getattr(response, "exc_info", None)
                    reason = f"{error[0].__name__}: {error[1]}" if error else ""
                    failures.append(f"{response.status_code} OPTIONS {url} as {role} {reason}")
    for route in all_routes():
        if route.path.startswith("/api/"):
            continue
        for url in _page_urls(route, lab):
            for role, client in clients.items():
                response = client.options(url, HTTP_ACCEPT=BROWSER_ACCEPT)
                opened += 1
                if response.status_code >= 500:
                    error = getattr(response, "exc_info", None)
                    reason = f"{error[0].__name__}: {error[1]}" if error else ""
                    failures.append(f"{response.status_code} OPTIONS {url} as {role} {reason}")
    for action in ("submit", "skip", "adjudicate", "override", "grade", "decide"):
        assert any(route.path.endswith(f"/{action}/") for route in api_routes()), action
    assert not failures, f"{len(failures)} of {opened} requests failed:\n" + "\n".join(failures)


# The labeling page claims an item when it is opened; moving that claim to a POST from the page is its own change.
CLAIMING_PAGES = {"/projects/<project_id>/label/", "/projects/<project_id>/label/fragment/"}


def all_routes() -> list[Route]:
    routes = []
    for regex, pattern in _walk(get_resolver().url_patterns):
        path = CONVERTER.sub(r"<\1>", simplify_regex(regex)).replace("\\.", ".")
        if path.startswith(("/admin/", "/static/", "/media/")) or path in CLAIMING_PAGES:
            continue
        initkwargs = getattr(pattern.callback, "initkwargs", {}) or {}
        routes.append(Route(path, pattern.name, initkwargs.get("basename")))
    return routes


def _page_urls(route: Route, lab) -> list[str]:
    """The URLs of a page or an API route with real ids; a page's job is the finished export."""
    real = lab["real"]
    export_id = real["export"][0]
    fixed = {
        "kind": "export",
        "action": "cancel",
        "format": "json",
        "token": lab["invitation_token"],
        "job_id": export_id
        if "/jobs/" in route.path or route.path.startswith("/exports/")
        else real["verification-run"][0],
    }
    url = route.path
    for parameter in route.parameters:
        if parameter in fixed:
            value = fixed[parameter]
        elif parameter == "pk" and route.basename == "job":
            value = real["job"][0]
        else:
            value = real[_kind_of(route, parameter)][0]
        url = url.replace(f"<{parameter}>", str(value), 1)
    return [url]


def _rows_written() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables")
        return {name: count for name, count in cursor.fetchall() if count}


@pytest.mark.postgres
def test_no_get_changes_a_row(lab):
    """Every GET, of a page or of the API, by every role and as a browser or a client, writes nothing: PostgreSQL
    counts the rows this transaction inserted, updated or deleted, before and after each request."""
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role in ROLES[1:]:
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(lab["users"][role])
    before = _rows_written()
    assert clients["annotator"].post(f"/projects/{lab['real']['project'][0]}/guidelines/seen/").status_code < 500
    Token.objects.create(user=lab["users"]["annotator"])
    assert _rows_written().get("authtoken_token", 0) > before.get("authtoken_token", 0)  # the count sees writes
    writes, opened = [], 0
    for route in all_routes():
        for url in _page_urls(route, lab):
            for role, client in clients.items():
                for accept_name, accept in ACCEPTS.items():
                    before = _rows_written()
                    response = client.get(url, HTTP_ACCEPT=accept)
                    opened += 1
                    changed = {
                        table: count - before.get(table, 0)
                        for table, count in _rows_written().items()
                        if count != before.get(table, 0)
                    }
                    if changed:
                        writes.append(f"GET {url} as {role} ({accept_name}, {response.status_code}) wrote {changed}")
    assert opened > 1000
    assert not writes, f"{len(writes)} of {opened} GET requests wrote rows:\n" + "\n".join(writes)
