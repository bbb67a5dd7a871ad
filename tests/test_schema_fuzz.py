"""The API answers generated requests as its OpenAPI schema says, for every operation, as each of four identities
(anonymous, an annotator, a researcher and an admin): no server error and no response that contradicts its
documented schema.

Schemathesis generates the requests from the schema the app serves, with a fixed seed (the same requests every run;
SCHEMA_FUZZ_EXAMPLES examples per operation and identity, 50 by default) and sends them to the app in this process
through its WSGI handler, the whole Django stack from the middleware down, without the cost of a socket per request.
Each identity is its own test, so the four can run side by side. Path ids are drawn from the schema and, half of the
time, are ids of real objects of the demo data, so the answers of found objects are checked too."""

from __future__ import annotations

import io
import os
import re
from collections import defaultdict

import hypothesis
import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.specs.openapi.checks import response_schema_conformance

from annotation import services as annotation_services
from annotation.models import AnnotationProject, Item, ProjectMember, Task
from core.demo import load_demo
from core.jobs import runner
from core.tasks import run_job
from grading.models import AllowedJudgeHost, Competition, Rubric, SelectionRecord, VerificationRun, VerifierConfig
from reports import services as export_services
from reports.models import ExportJob
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer

pytestmark = [pytest.mark.postgres]

EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", "50"))
SEED = int(os.environ.get("SCHEMA_FUZZ_SEED", "20261128"))
ONLY = os.environ.get("SCHEMA_FUZZ_PATHS", "")  # a regular expression, to fuzz some paths only while fixing them
ROLES = {"anonymous": None, "annotator": "annotator1", "researcher": "researcher1", "admin": "admin1"}
CHECKS = [not_a_server_error, response_schema_conformance]
# Revoking the token would sign the rest of the run out; the endpoint is covered by test_authentication_limits.py.
SKIPPED = {("DELETE", "/api/auth/token/")}


def _first(queryset):
    return list(queryset.order_by("pk").values_list("pk", flat=True)[:3])


def real_ids(users) -> dict[str, list]:
    correctness = AnnotationProject.objects.filter(kind="correctness").order_by("pk").first()
    task = annotation_services.next_task(correctness, users["annotator"])
    export = export_services.create_export(project=correctness, format="verifybench-hard", enqueue=False)
    runner.run("export", export.pk, export.attempt)
    AllowedJudgeHost.objects.get_or_create(
        host="judge.example.org", port=443, defaults={"created_by": users["admin"], "key_envs": ["OPENAI_API_KEY"]}
    )
    ids = {
        "completions": _first(Completion.objects),
        "datasets": _first(Dataset.objects),
        "exports": _first(ExportJob.objects),
        "grading/competitions": _first(Competition.objects),
        "grading/items": _first(Item.objects.filter(project__kind="proof_grade")),
        "grading/judge-hosts": _first(AllowedJudgeHost.objects),
        "grading/rubrics": _first(Rubric.objects),
        "grading/runs": _first(VerificationRun.objects),
        "grading/selections": _first(SelectionRecord.objects),
        "grading/tasks": _first(Task.objects.filter(item__project__kind="proof_grade")),
        "grading/verifiers": _first(VerifierConfig.objects),
        "imports": [],
        "items": _first(Item.objects),
        "prior-labels": _first(PriorLabel.objects),
        "projects": _first(AnnotationProject.objects),
        "questions": _first(Question.objects),
        "references": _first(ReferenceAnswer.objects),
        "tasks": [task.pk] if task else _first(Task.objects),
        "jobs": [f"{kind.name}-{pk}" for kind in runner.kinds() for pk in _first(kind.model.objects)[:1]],
        "member_id": _first(ProjectMember.objects),
        "invitation_id": [],
    }
    return {key: value for key, value in ids.items() if value}


def fixed_path_parameters(path: str, ids: dict[str, list]) -> dict[str, list]:
    """For each parameter of an operation's path, the real ids it may take."""
    parameters = {}
    for name in re.findall(r"\{(\w+)\}", path):
        if name == "id":
            key = re.match(r"/api/(.+?)/\{id\}", path).group(1)
        elif name.endswith("_id") and name not in ("member_id", "invitation_id"):
            key = name.removesuffix("_id") + "s"
        else:
            key = name
        if key in ids:
            parameters[name] = ids[key]
    return parameters


def _exercise(operation, strategy, app, headers: dict, problems: set[str]):
    """A function that sends EXAMPLES generated requests of one operation and notes what fails; returns the count."""
    calls = 0

    @hypothesis.settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
        verbosity=hypothesis.Verbosity.quiet,
    )
    @hypothesis.seed(SEED)
    @hypothesis.given(case=strategy)
    def exercise(case):
        nonlocal calls
        try:
            response = case.call(base_url="http://testserver", headers=headers, app=app)
        except Exception as error:  # noqa: BLE001  (a dropped connection or a timeout is a finding too)
            problems.add(f"no answer: {type(error).__name__}: {error} [{case.method} {case.formatted_path}]")
            return
        calls += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except (Failure, FailureGroup) as error:
            for problem in error.exceptions if isinstance(error, FailureGroup) else [error]:
                problems.add(
                    f"{response.status_code} {type(problem).__name__}: {str(problem.title)[:80]}: {str(problem.message)[:400]} "
                    f"[{case.method} {case.formatted_path} query={case.query} body={str(case.body)[:120]}]"
                )

    def run() -> int:
        exercise()
        return calls

    return run


@pytest.fixture
def jobs_stay_queued():
    """Jobs the requests start are queued and left there, as with a broker no worker reads: the run is about the
    answers of the API, and a verification run executed inside a request would only slow it down."""
    queued = []
    runner.set_dispatcher(lambda kind, job_id, attempt: queued.append((kind, job_id, attempt)))
    yield queued
    runner.set_dispatcher(lambda kind, job_id, attempt: run_job.delay(kind, job_id, attempt))


@pytest.mark.parametrize("role", list(ROLES))
def test_every_operation_keeps_to_its_schema_for_every_identity(
    role, transactional_db, settings, tmp_path, jobs_stay_queued
):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    settings.API_TOKEN_THROTTLE_RATE = "100000/min"
    settings.LOGIN_MAX_FAILURES = 0
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    load_demo(stdout=io.StringIO())
    users = {name: User.objects.get(username=username) for name, username in ROLES.items() if username}
    ids = real_ids(users)
    schema_dict = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(schema_dict)
    operations = [result.ok() for result in schema.get_all_operations()]
    failures: dict[tuple, set[str]] = defaultdict(set)  # (method, path, role) -> problems
    calls = 0
    app = WSGIHandler()

    user = users.get(role)
    headers = {}
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        headers = {"Authorization": f"Token {token.key}"}
    for operation in operations:
        if (operation.method.upper(), operation.path) in SKIPPED or not re.search(ONLY, operation.path):
            continue
        strategies = [operation.as_strategy()]
        fixed = fixed_path_parameters(operation.path, ids)
        if fixed and len(fixed) == len(re.findall(r"\{(\w+)\}", operation.path)):
            strategies += [
                st.fixed_dictionaries({name: st.sampled_from(values) for name, values in fixed.items()}).flatmap(
                    lambda chosen, op=operation: op.as_strategy(path_parameters=chosen)
                )
            ]

        exercise = _exercise(
            operation,
            st.one_of(strategies),
            app,
            headers,
            failures[(operation.method.upper(), operation.path, role)],
        )
        calls += exercise()

    failures = {key: problems for key, problems in failures.items() if problems}
    report = "\n".join(
        f"{method} {path} as {role}: {sorted(problems)[0]}"
        for (method, path, role), problems in sorted(failures.items())
    )
    assert calls >= len([op for op in operations if re.search(ONLY, op.path)])
    assert not failures, f"{len(failures)} failing operation/role pairs in {calls} calls:\n{report}"
