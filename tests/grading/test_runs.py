"""Verification runs in eager mode: chunks, progress, resume without duplicates, cancel, judges, API, command."""

from __future__ import annotations

import itertools
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Count

from annotation import services as annotation_services
from core import workspaces
from grading import runs
from grading.models import PromptTemplate, Verdict, VerificationRun, VerifierConfig
from grading.runs import pipeline
from tests.conftest import allow_judge_endpoint
from tests.fakes.openai_server import CORRECT_MARKER
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

JUDGE_KEY_ENV = "JUDGE_KEY_MATHLABEL_TEST_RUN"
_names = itertools.count(1)


def make_dataset(name: str = "runs", questions: int = 5, per_question: int = 4, *, judge_markers: bool = False):
    """Questions with reference 10+q; completion k of each is right when k is even. Returns the dataset."""
    dataset = Dataset.objects.create(name=name)
    for q in range(questions):
        answer_type, domain = ("A1", "math_reasoning") if q % 2 == 0 else ("C3", "logic_reasoning")
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{q}",
            text=f"Question {q}",
            domain=domain,
            source=f"src{q % 2}",
            answer_type=answer_type,
            answer_class=answer_type[0],
            content_hash=f"h{q}",
        )
        reference = str(10 + q) if answer_type == "A1" else "yes"
        ReferenceAnswer.objects.create(question=question, final_answer=reference)
        for k in range(per_question):
            right = k % 2 == 0
            if answer_type == "A1":
                answer = reference if right else str(99 + k)
            else:
                answer = "yes" if right else "no"
            text = f"Working. \\boxed{{{answer}}}" + (f" {CORRECT_MARKER}" if judge_markers and right else "")
            Completion.objects.create(
                question=question, external_id=f"c{k}", model_name=f"model-{k % 2}", text=text, content_hash=f"h{q}-{k}"
            )
    return dataset


def rule_verifier(name: str = "rules") -> VerifierConfig:
    return VerifierConfig.objects.create(name=name, kind=VerifierConfig.Kind.RULE)


def judge_verifier(base_url: str, name: str | None = None) -> VerifierConfig:
    allow_judge_endpoint(base_url, JUDGE_KEY_ENV)
    return VerifierConfig.objects.create(
        name=name or f"judge-{next(_names)}",
        kind=VerifierConfig.Kind.JUDGE,
        base_url=base_url,
        model="fake-judge",
        api_key_env=JUDGE_KEY_ENV,
        template=PromptTemplate.objects.get(name="verifybench-final-judgment", version=1),
        timeout_seconds=5,
        max_retries=1,
        backoff_base_seconds=0.01,
    )


def verdicts_per_completion(config) -> dict[int, int]:
    rows = Verdict.objects.filter(verifier=config).values("completion_id").annotate(n=Count("pk"))
    return {row["completion_id"]: row["n"] for row in rows}


def run_now(run) -> VerificationRun:
    return runs.execute_run(run.pk, run.attempt)


def watch_chunks(monkeypatch, watch):
    """Call `watch(rows)` with each chunk's rows before the rules verify them (its answer is ignored)."""
    original = pipeline.verify_rule_rows
    monkeypatch.setattr(pipeline, "verify_rule_rows", lambda rows: watch(rows) or original(rows))


@pytest.fixture
def dataset(db):
    return make_dataset()


@pytest.mark.django_db
def test_a_rule_run_verifies_every_completion_in_chunks_and_counts_the_verdicts(dataset, monkeypatch):
    config = rule_verifier()
    chunk_sizes = []
    watch_chunks(monkeypatch, lambda chunk: chunk_sizes.append(len(chunk)))
    run = run_now(runs.create_run(verifier=config, dataset=dataset, chunk_size=6, enqueue=False))

    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert chunk_sizes == [6, 6, 6, 2]
    assert (run.total, run.done) == (20, 20)
    assert run.counts == {"correct": 10, "incorrect": 10, "inconclusive": 0, "failed": 0}
    assert set(verdicts_per_completion(config).values()) == {1} and len(verdicts_per_completion(config)) == 20
    wrong = Verdict.objects.get(verifier=config, completion__question__external_id="q0", completion__external_id="c1")
    assert (wrong.status, wrong.extracted_answer) == ("incorrect", "100")
    assert "A1" in wrong.reason and json.loads(wrong.raw_output)["answer_type_used"] == "A1"


@pytest.mark.django_db
def test_a_failed_run_keeps_its_whole_chunks_and_a_resume_finishes_without_duplicates(dataset, monkeypatch):
    config = rule_verifier()
    calls = []

    def crash_on_third_chunk(chunk):
        calls.append([completion.pk for completion in chunk])
        if len(calls) == 3:
            raise RuntimeError("worker lost")

    watch_chunks(monkeypatch, crash_on_third_chunk)
    run = run_now(runs.create_run(verifier=config, dataset=dataset, chunk_size=4, enqueue=False))
    assert run.status == VerificationRun.Status.FAILED and "worker lost" in run.error
    first_eight = sorted(Completion.objects.filter(question__dataset=dataset).values_list("pk", flat=True))[:8]
    assert sorted(verdicts_per_completion(config)) == first_eight and run.done == 8

    monkeypatch.undo()
    seen = []
    watch_chunks(monkeypatch, lambda chunk: seen.extend(x.pk for x in chunk))
    run = run_now(runs.resume_run(run, enqueue=False))
    assert run.status == VerificationRun.Status.SUCCEEDED and run.attempt == 2
    assert not set(seen) & set(first_eight) and len(seen) == 12
    assert set(verdicts_per_completion(config).values()) == {1} and len(verdicts_per_completion(config)) == 20
    assert run.done == 20 and sum(run.counts.values()) == 20


@pytest.mark.django_db
def test_a_second_run_of_the_same_verifier_skips_what_is_done_and_a_stale_message_is_ignored(dataset, monkeypatch):
    config = rule_verifier()
    first = run_now(runs.create_run(verifier=config, dataset=dataset, answer_types=["A"], enqueue=False))
    assert first.total == first.done == 12
    seen = []
    watch_chunks(monkeypatch, seen.extend)
    second = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))
    assert len(seen) == 8 and second.done == 20
    assert runs.execute_run(second.pk, attempt=second.attempt).status == VerificationRun.Status.SUCCEEDED
    assert Verdict.objects.filter(verifier=config).count() == 20


@pytest.mark.django_db
def test_cancel_stops_between_chunks_and_a_queued_run_is_cancelled_at_once(dataset, monkeypatch):
    config = rule_verifier()
    run = runs.create_run(verifier=config, dataset=dataset, chunk_size=5, enqueue=False)

    def cancel_during_second_chunk(chunk):
        if Verdict.objects.filter(verifier=config).count() == 5:
            runs.cancel_run(run)

    watch_chunks(monkeypatch, cancel_during_second_chunk)
    run = run_now(run)
    assert run.status == VerificationRun.Status.CANCELLED and run.cancel_requested
    assert Verdict.objects.filter(verifier=config).count() == 10 and run.done == 10  # the chunk under way is kept
    with pytest.raises(runs.RunRequestError, match="already ended"):
        runs.cancel_run(run)

    queued = runs.create_run(verifier=rule_verifier("other"), dataset=dataset, enqueue=False)
    assert runs.cancel_run(queued).status == VerificationRun.Status.CANCELLED
    assert run_now(queued).status == VerificationRun.Status.CANCELLED
    assert not Verdict.objects.filter(verifier__name="other").exists()


@pytest.mark.django_db
def test_a_project_scope_with_filters_covers_only_its_matching_completions(dataset):
    completion_ids = list(
        Completion.objects.filter(question__dataset=dataset).order_by("pk").values_list("pk", flat=True)[:10]
    )
    project = annotation_services.create_project(dataset=dataset, kind="correctness", subject_ids=completion_ids)
    run = run_now(runs.create_run(verifier=rule_verifier(), project=project, models=["model-0"], enqueue=False))
    verified = set(verdicts_per_completion(run.verifier))
    assert run.total == 5 and verified <= set(completion_ids)
    assert set(Completion.objects.filter(pk__in=verified).values_list("model_name", flat=True)) == {"model-0"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "request_fields, message",
    [
        ({}, "exactly one scope"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"answer_types": ["Z9"]}, "unknown answer type"),
        ({"domains": ["cooking"]}, "unknown domain"),
        ({"options": {"chunk_delay": -1}}, "chunk_delay"),
        ({"options": {"speed": 2}}, "unknown option"),
    ],
)
def test_bad_run_requests_are_refused_and_create_nothing(dataset, request_fields, message):
    fields = {"dataset": dataset, **request_fields} if request_fields else {}
    with pytest.raises(runs.RunRequestError, match=message):
        runs.create_run(verifier=rule_verifier(), enqueue=False, **fields)
    assert not VerificationRun.objects.exists()


@pytest.mark.django_db
def test_a_judge_run_uses_the_endpoint_once_per_distinct_prompt_and_the_cache_after(fake_openai, monkeypatch):
    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-run-test-key")
    dataset = make_dataset("judged", questions=3, per_question=4, judge_markers=True)
    config = judge_verifier(fake_openai.base_url)
    run = run_now(runs.create_run(verifier=config, dataset=dataset, chunk_size=5, enqueue=False))
    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert run.counts == {"correct": 6, "incorrect": 6, "inconclusive": 0, "failed": 0}
    distinct_prompts = Completion.objects.filter(question__dataset=dataset).values("question", "text").distinct()
    assert len(fake_openai.chat_requests) == distinct_prompts.count() == 8
    assert all(v.prompt_template_id == config.template_id for v in Verdict.objects.filter(verifier=config))

    twin = judge_verifier(fake_openai.base_url)
    again = run_now(runs.create_run(verifier=twin, dataset=dataset, enqueue=False))
    assert again.counts["correct"] == 6 and len(fake_openai.chat_requests) == 8
    assert all(v.cache_hit for v in Verdict.objects.filter(verifier=twin))


@pytest.mark.django_db
def test_failed_judge_calls_leave_the_run_failed_and_a_resume_retries_only_them(fake_openai, monkeypatch):
    from tests.fakes.openai_server import Reply, Status

    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-run-test-key")
    dataset = make_dataset("flaky", questions=2, per_question=2, judge_markers=True)
    config = judge_verifier(fake_openai.base_url)
    fake_openai.always(Status(500))
    run = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))
    assert run.status == VerificationRun.Status.FAILED and "4 judge call(s) failed" in run.error
    assert run.done == 0 and run.counts["failed"] == 4

    fake_openai.always(Reply())
    run = run_now(runs.resume_run(run, enqueue=False))
    assert run.status == VerificationRun.Status.SUCCEEDED
    assert run.counts == {"correct": 2, "incorrect": 2, "inconclusive": 0, "failed": 0} and run.done == 4
    assert Verdict.objects.filter(verifier=config, failed=False).count() == 4


@pytest.mark.django_db
def test_an_endpoint_answering_plain_text_fails_those_calls_not_the_run(fake_openai, monkeypatch):
    from tests.fakes.openai_server import Raw

    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-run-test-key")
    dataset = make_dataset("plain-text", questions=2, per_question=4, judge_markers=True)
    config = judge_verifier(fake_openai.base_url)
    fake_openai.script(Raw("Service temporarily moved"), Raw("Service temporarily moved"))
    run = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))
    failed = Verdict.objects.filter(verifier=config, failed=True).count()
    assert 2 <= failed < 8  # the two prompts answered in plain text (a prompt may stand for twin completions)
    assert run.status == VerificationRun.Status.FAILED and f"{failed} judge call(s) failed" in run.error
    assert run.counts["failed"] == failed and run.done == 8 - failed
    assert "not a chat completion" in Verdict.objects.filter(verifier=config, failed=True).first().reason
    run = run_now(runs.resume_run(run, enqueue=False))
    assert run.status == VerificationRun.Status.SUCCEEDED and run.counts["failed"] == 0


@pytest.mark.django_db
def test_a_judge_without_its_key_fails_the_run_with_a_clear_error(fake_openai, monkeypatch):
    monkeypatch.delenv(JUDGE_KEY_ENV, raising=False)
    dataset = make_dataset("no-key", questions=1, per_question=2)
    run = run_now(runs.create_run(verifier=judge_verifier(fake_openai.base_url), dataset=dataset, enqueue=False))
    assert run.status == VerificationRun.Status.FAILED and JUDGE_KEY_ENV in run.error
    assert not Verdict.objects.exists()


@pytest.mark.django_db
def test_resume_refuses_a_live_run_unless_forced(dataset):
    run = runs.create_run(verifier=rule_verifier(), dataset=dataset, enqueue=False)
    with pytest.raises(runs.RunRequestError, match="already queued"):
        runs.resume_run(run, enqueue=False)
    claimed = runs.claim(run.pk, run.attempt)
    assert claimed is not None and runs.claim(run.pk, run.attempt) is None  # the owner is alive
    with pytest.raises(runs.RunRequestError, match="is running"):
        runs.resume_run(run, enqueue=False)
    resumed = runs.resume_run(run, force=True, enqueue=False)
    assert resumed.attempt == 2
    assert runs.execute_run(run.pk, attempt=1).status == VerificationRun.Status.QUEUED  # a late old message
    assert run_now(resumed).status == VerificationRun.Status.SUCCEEDED


# -- API ------------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_runs_api_starts_reports_cancels_and_resumes(
    dataset, researcher, api_client_for, django_capture_on_commit_callbacks
):
    client = api_client_for(researcher)
    config = rule_verifier()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/grading/runs/", {"verifier": config.pk, "dataset": dataset.pk, "chunk_size": 7}, format="json"
        )
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    body = client.get(f"/api/grading/runs/{run_id}/").json()
    assert body["status"] == "succeeded" and body["total"] == body["done"] == 20 and body["progress"] == 1.0
    assert body["counts"]["correct"] == 10 and body["verifier"]["name"] == "rules"
    assert body["created_by"] == researcher.username
    listing = client.get("/api/grading/runs/", {"status": "succeeded"}).json()
    assert [row["id"] for row in listing["results"]] == [run_id]

    assert client.post(f"/api/grading/runs/{run_id}/cancel/").status_code == 409
    with django_capture_on_commit_callbacks(execute=True):
        resumed = client.post(f"/api/grading/runs/{run_id}/resume/", {}, format="json")
    assert resumed.status_code == 200 and resumed.json()["attempt"] == 2
    assert client.get(f"/api/grading/runs/{run_id}/").json()["status"] == "succeeded"
    assert Verdict.objects.filter(verifier=config).count() == 20

    with django_capture_on_commit_callbacks(execute=False):
        queued = client.post(
            "/api/grading/runs/", {"verifier": rule_verifier("two").pk, "dataset": dataset.pk}, format="json"
        ).json()
    cancelled = client.post(f"/api/grading/runs/{queued['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"

    bad = client.post(
        "/api/grading/runs/", {"verifier": config.pk, "dataset": dataset.pk, "answer_types": ["nope"]}, format="json"
    )
    assert bad.status_code == 400 and "answer type" in bad.json()["detail"]


@pytest.mark.django_db
def test_run_and_verifier_endpoints_are_for_researchers_only(dataset, annotator, adjudicator, api_client_for):
    config = rule_verifier()
    run = runs.create_run(verifier=config, dataset=dataset, enqueue=False)
    for user in (annotator, adjudicator, None):
        client = api_client_for(user)
        expected = 403
        assert client.get("/api/grading/runs/").status_code == expected
        assert client.get(f"/api/grading/runs/{run.pk}/").status_code == expected
        assert (
            client.post("/api/grading/runs/", {"verifier": config.pk, "dataset": dataset.pk}, format="json").status_code
            == expected
        )
        assert client.post(f"/api/grading/runs/{run.pk}/cancel/").status_code == expected
        assert client.post(f"/api/grading/runs/{run.pk}/resume/").status_code == expected
        assert client.get("/api/grading/verifiers/").status_code == expected
        assert client.post("/api/grading/verifiers/", {"name": "x", "kind": "rule"}).status_code == expected
    assert VerificationRun.objects.count() == 1 and VerifierConfig.objects.count() == 1


@pytest.mark.django_db
def test_verifier_configs_name_the_key_variable_and_never_take_a_key(researcher, api_client_for):
    allow_judge_endpoint("http://127.0.0.1:8000", "JUDGE_KEY_QWEN")
    client = api_client_for(researcher)
    template = PromptTemplate.objects.get(name="verifybench-final-judgment", version=1)
    judge = {
        "name": "qwen",
        "kind": "judge",
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "qwen3-32b",
        "api_key_env": "JUDGE_KEY_QWEN",
        "template": template.pk,
    }
    created = client.post("/api/grading/verifiers/", judge, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["api_key_env"] == "JUDGE_KEY_QWEN" and "api_key" not in created.json()

    refused = client.post("/api/grading/verifiers/", {**judge, "name": "leaky", "api_key": "sk-secret"}, format="json")
    assert refused.status_code == 400 and "api_key" in refused.json()
    not_a_name = client.post(
        "/api/grading/verifiers/", {**judge, "name": "leaky", "api_key_env": "sk-abc 123"}, format="json"
    )
    assert not_a_name.status_code == 400 and "api_key_env" in not_a_name.json()
    incomplete = client.post("/api/grading/verifiers/", {"name": "half", "kind": "judge"}, format="json")
    assert incomplete.status_code == 400 and "model" in incomplete.json()
    assert not VerifierConfig.objects.filter(name__in=["leaky", "half"]).exists()
    assert "sk-secret" not in json.dumps(client.get("/api/grading/verifiers/").json())

    config_id = created.json()["id"]
    patched = client.patch(f"/api/grading/verifiers/{config_id}/", {"temperature": 0.5}, format="json")
    assert patched.status_code == 200 and patched.json()["temperature"] == 0.5
    assert client.patch(f"/api/grading/verifiers/{config_id}/", {"api_key_env": ""}, format="json").status_code == 400
    dataset = make_dataset("protected", questions=1, per_question=1)
    Verdict.objects.create(
        completion=Completion.objects.get(question__dataset=dataset), verifier_id=config_id, status="correct"
    )
    assert client.delete(f"/api/grading/verifiers/{config_id}/").status_code == 409
    shared = rule_verifier()  # of no workspace: every workspace runs it, only an admin changes it
    assert client.delete(f"/api/grading/verifiers/{shared.pk}/").status_code == 403
    own = rule_verifier("own rules")
    own.workspace = workspaces.default_workspace()
    own.save()
    assert client.delete(f"/api/grading/verifiers/{own.pk}/").status_code == 204


# -- command --------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_run_verifier_command_runs_here_and_resumes(dataset):
    rule_verifier()
    out = StringIO()
    call_command(
        "run_verifier",
        "--verifier",
        "rules",
        "--dataset",
        dataset.name,
        "--answer-type",
        "A1",
        "--chunk-size",
        "3",
        stdout=out,
    )
    payload = json.loads(out.getvalue())
    assert payload["status"] == "succeeded" and payload["total"] == payload["done"] == 12
    assert payload["scope"]["answer_types"] == ["A1"]
    out = StringIO()
    call_command("run_verifier", "--resume", str(payload["id"]), stdout=out)
    assert json.loads(out.getvalue())["attempt"] == 2

    with pytest.raises(CommandError, match="no verifier configuration"):
        call_command("run_verifier", "--verifier", "missing", "--dataset", dataset.name)
    with pytest.raises(CommandError, match="no dataset"):
        call_command("run_verifier", "--verifier", "rules", "--dataset", "missing")
    with pytest.raises(CommandError, match="give --dataset"):
        call_command("run_verifier", "--verifier", "rules")
    with pytest.raises(CommandError, match="unknown domain"):
        call_command("run_verifier", "--verifier", "rules", "--dataset", dataset.name, "--domain", "x")


@pytest.mark.django_db
def test_a_new_judge_takes_the_endpoint_and_key_variable_from_the_environment(researcher, api_client_for, settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9999/v1"
    allow_judge_endpoint(settings.OPENAI_BASE_URL, "OPENAI_API_KEY")
    template = PromptTemplate.objects.get(name="verifybench-final-judgment", version=1)
    created = api_client_for(researcher).post(
        "/api/grading/verifiers/",
        {"name": "default-endpoint", "kind": "judge", "model": "judge-model", "template": template.pk},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["base_url"] == "http://127.0.0.1:9999/v1"
    assert created.json()["api_key_env"] == "OPENAI_API_KEY"
    rule = api_client_for(researcher).post("/api/grading/verifiers/", {"name": "rules", "kind": "rule"}, format="json")
    assert rule.status_code == 201 and rule.json()["base_url"] == "" and rule.json()["api_key_env"] == ""
