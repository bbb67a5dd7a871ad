"""The rules -> judge -> humans cascade end to end against the local fake OpenAI-compatible server: a run's verdicts
and stages, its per-stage figures (decided, coverage, precision against human labels, tokens, money) in the run API,
on the run page and in the meta-evaluation, resume after a failed judge, configuration checks, and a selection that
routes only what the cascade left to humans."""

from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import aggregates
from annotation import services as annotation_services
from annotation.models import Item
from grading import runs
from grading.models import (
    AllowedJudgeHost,
    PromptTemplate,
    SelectionRecord,
    Verdict,
    VerificationRun,
    VerifierConfig,
)
from grading.selection import services as selection_services
from grading.services import ensure_default_templates
from tests.conftest import allow_judge_endpoint
from tests.fakes.openai_server import CORRECT_MARKER, UNDECIDED_MARKER, Reply, Status
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

pytestmark = pytest.mark.django_db
JUDGE_KEY_ENV = "JUDGE_KEY_MATHLABEL_TEST_CASCADE"
QUESTIONS = 4
PRICE_IN, PRICE_OUT = Decimal("2.0"), Decimal("10.0")

# What each completion k of a question says, and what the rules and the fake judge make of it.
KINDS = {
    0: "rules correct, the judge agrees",
    1: "rules incorrect, the judge agrees",
    2: "rules inconclusive, the judge says correct",
    3: "rules inconclusive, the judge cannot decide",
    4: "rules correct, the judge disagrees",
}


def completion_text(k: int, reference: str) -> str:
    return {
        0: f"So the result is \\boxed{{{reference}}}. {CORRECT_MARKER}",
        1: "So the result is \\boxed{99}.",
        2: f"I could not finish the computation. {CORRECT_MARKER}",
        3: f"No answer is given here. {UNDECIDED_MARKER}",
        4: f"Hence \\boxed{{{reference}}}.",
    }[k]


def make_cascade_dataset(name: str = "cascade-data") -> Dataset:
    """QUESTIONS numeric questions with reference 10+q, one completion of each kind in KINDS per question."""
    dataset = Dataset.objects.create(name=name)
    for q in range(QUESTIONS):
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{q}",
            text=f"Compute the value of item {q}.",
            domain="math_reasoning",
            source="src",
            answer_type="A1",
            answer_class="A",
            content_hash=f"{name}-h{q}",
        )
        ReferenceAnswer.objects.create(question=question, final_answer=str(10 + q))
        for k in KINDS:
            Completion.objects.create(
                question=question,
                external_id=f"c{k}",
                model_name=f"model-{k % 2}",
                text=completion_text(k, str(10 + q)),
                content_hash=f"{name}-h{q}-{k}",
            )
    return dataset


def make_cascade(base_url: str, *, sample_rate: float = 1.0, name: str = "cascade") -> VerifierConfig:
    allow_judge_endpoint(base_url, JUDGE_KEY_ENV)
    judge = VerifierConfig.objects.create(
        name=f"{name}-judge",
        kind=VerifierConfig.Kind.JUDGE,
        base_url=base_url,
        model="fake-judge",
        api_key_env=JUDGE_KEY_ENV,
        template=PromptTemplate.objects.get(name="umath-cot-extract", version=1),
        timeout_seconds=5,
        max_retries=0,
        backoff_base_seconds=0.01,
        price_input_per_million=PRICE_IN,
        price_output_per_million=PRICE_OUT,
    )
    return VerifierConfig.objects.create(
        name=name, kind=VerifierConfig.Kind.CASCADE, cascade_judge=judge, cascade_sample_rate=sample_rate
    )


def kind_of(completion: Completion) -> int:
    return int(completion.external_id[1:])


def label_project(dataset: Dataset, labels: dict[tuple[int, int], bool]):
    """A correctness project over the dataset whose items (question q, kind k) in `labels` are resolved as given."""
    project = annotation_services.create_project(dataset=dataset, kind="correctness", name=f"{dataset.name} labels")
    for (q, k), value in labels.items():
        completion = Completion.objects.get(
            question__dataset=dataset, question__external_id=f"q{q}", external_id=f"c{k}"
        )
        Item.objects.filter(project=project, subject_id=completion.pk).update(
            state=Item.State.RESOLVED, final_value=value
        )
    aggregates.rebuild(project)  # the items were resolved behind the services' back
    return project


# Kinds 0 and 1 labeled as the rules say; kind 2 (judge says correct) right on q0 and q1, wrong on q2;
# one undecided item (kind 3) labeled.
LABELS = {
    **{(q, 0): True for q in range(QUESTIONS)},
    **{(q, 1): False for q in range(QUESTIONS)},
    (0, 2): True,
    (1, 2): True,
    (2, 2): False,
    (0, 3): False,
}


@pytest.fixture
def cascade_setup(fake_openai, monkeypatch):
    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-cascade-test-key")
    ensure_default_templates()
    dataset = make_cascade_dataset()
    return dataset, make_cascade(fake_openai.base_url)


def run_now(run) -> VerificationRun:
    return runs.execute_run(run.pk, run.attempt)


def stages_of(report: dict) -> dict:
    return {stage["stage"]: stage for stage in report["stages"]}


def test_a_cascade_run_decides_by_stage_and_records_both_verdicts_and_the_judge_cost(cascade_setup, fake_openai):
    dataset, config = cascade_setup
    run = run_now(runs.create_run(verifier=config, dataset=dataset, chunk_size=7, enqueue=False))

    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    n = QUESTIONS
    assert (run.total, run.done) == (5 * n, 5 * n)
    # correct: kinds 0 and 2; incorrect: kind 1; inconclusive (left to humans): kinds 3 and 4.
    assert run.counts == {"correct": 2 * n, "incorrect": n, "inconclusive": 2 * n, "failed": 0}
    expected = {
        0: ("rules", "correct", "correct", "correct"),
        1: ("rules", "incorrect", "incorrect", "incorrect"),
        2: ("judge", "correct", "inconclusive", "correct"),
        3: ("human", "inconclusive", "inconclusive", "inconclusive"),
        4: ("human", "inconclusive", "correct", "incorrect"),
    }
    for verdict in Verdict.objects.filter(verifier=config).select_related("completion"):
        kind = kind_of(verdict.completion)
        assert (verdict.stage, verdict.status, verdict.rule_status, verdict.judge_status) == expected[kind], kind
        assert verdict.route == {3: "undecided", 4: "disputed"}.get(kind, "")
        assert verdict.prompt_tokens > 0 and verdict.completion_tokens > 0  # sample rate 1: the judge saw all
        assert verdict.cost == (verdict.prompt_tokens * PRICE_IN + verdict.completion_tokens * PRICE_OUT) / 10**6
        assert verdict.prompt_template_id == config.cascade_judge.template_id
    # Two calls (judgment and extraction) per completion, each completion's prompt distinct.
    assert len(fake_openai.chat_requests) == 2 * 5 * n
    assert not Verdict.objects.filter(verifier=config.cascade_judge).exists(), "the judge's own verdicts stay apart"


def test_only_inconclusive_rule_verdicts_reach_the_judge_without_sampling(fake_openai, monkeypatch):
    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-cascade-test-key")
    ensure_default_templates()
    dataset = make_cascade_dataset("no-sampling")
    config = make_cascade(fake_openai.base_url, sample_rate=0.0, name="unsampled")
    run = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))

    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    judged_texts = [request.messages[-1]["content"] for request in fake_openai.chat_requests]
    assert len(judged_texts) == 2 * 2 * QUESTIONS  # kinds 2 and 3 only, two calls each
    assert not any("\\boxed{99}" in text for text in judged_texts)
    rule_decided = Verdict.objects.filter(verifier=config, stage="rules")
    assert rule_decided.count() == 3 * QUESTIONS  # kind 4 is not checked, so the rules' "correct" stands
    assert set(rule_decided.values_list("judge_status", "prompt_tokens", "cost")) == {("", 0, Decimal(0))}
    report = runs.cascade_report(run)
    assert report["sampled_checks"] == 0 and report["disputed"] == 0
    assert stages_of(report)["judge"]["calls"] == 2 * QUESTIONS


def test_the_run_api_and_run_page_show_per_stage_figures(cascade_setup, researcher, api_client_for, client):
    dataset, config = cascade_setup
    label_project(dataset, LABELS)
    run = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))

    body = api_client_for(researcher).get(f"/api/grading/runs/{run.pk}/").json()
    report = body["cascade"]
    by_stage = stages_of(report)
    n = QUESTIONS
    assert report["total"] == 5 * n
    assert (by_stage["rules"]["decided"], by_stage["judge"]["decided"], by_stage["human"]["decided"]) == (
        2 * n,
        n,
        2 * n,
    )
    assert by_stage["rules"]["coverage"] == pytest.approx(0.4)
    assert (by_stage["rules"]["labeled"], by_stage["rules"]["precision"]) == (2 * n, 1.0)
    assert (by_stage["judge"]["labeled"], by_stage["judge"]["precision"]) == (3, pytest.approx(2 / 3))
    assert (by_stage["human"]["undecided"], by_stage["human"]["disputed"], by_stage["human"]["labeled"]) == (n, n, 1)
    assert (report["sampled_checks"], report["disputed"], report["disagreement_rate"]) == (
        3 * n,
        n,
        pytest.approx(1 / 3),
    )
    verdicts = Verdict.objects.filter(verifier=config)
    tokens = sum(v.prompt_tokens + v.completion_tokens for v in verdicts)
    cost = sum(v.cost for v in verdicts)
    assert report["tokens"] == by_stage["judge"]["tokens"] == tokens > 0
    assert report["cost"] == pytest.approx(float(cost)) and cost > 0
    assert by_stage["rules"]["tokens"] == 0 and by_stage["human"]["tokens"] == 0
    listed = api_client_for(researcher).get("/api/grading/runs/").json()["results"][0]
    assert listed["id"] == run.pk and "cascade" not in listed  # the list stays one query per page

    client.force_login(researcher)
    page = client.get(reverse("job-detail", args=["verification-run", run.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="cascade-report"' in html and "then cascade-judge, then humans" in html
    assert f'<td class="number" data-field="decided">{2 * n}</td>' in html
    assert f"({n} undecided, {n} disputed)" in html
    assert f"${float(cost):.6f}" in html and f"{tokens} <span" in html
    assert '<td class="number" data-field="precision">0.667</td>' in html


def test_the_meta_evaluation_reports_cascade_stages_and_calibrated_abstention(
    cascade_setup, researcher, api_client_for, client
):
    dataset, config = cascade_setup
    project = label_project(dataset, LABELS)
    run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))

    body = api_client_for(researcher).get(f"/api/projects/{project.pk}/meta-eval/", {"verifier": config.name}).json()
    report = body["verifiers"][0]
    # 12 labeled: kinds 0 and 1 (8, all decided right by the rules), kind 2 (3, the judge right on 2), one kind 3.
    assert report["labeled_items"] == 12
    overall = report["overall"]
    assert (overall["decided"], overall["decided_coverage"]) == (11, pytest.approx(11 / 12))
    assert overall["decided_precision"] == pytest.approx(10 / 11)
    assert report["by_answer_class"]["A"]["decided_precision"] == pytest.approx(10 / 11)
    assert report["by_answer_type"]["A1"]["decided_coverage"] == pytest.approx(11 / 12)
    assert overall["macro_f1"] is not None
    stages = stages_of(report["cascade"])
    assert (stages["rules"]["decided"], stages["judge"]["decided"], stages["human"]["decided"]) == (8, 3, 1)
    assert stages["judge"]["precision"] == pytest.approx(2 / 3) and stages["rules"]["precision"] == 1.0
    assert report["cascade"]["tokens"] > 0

    csv = (
        api_client_for(researcher)
        .get(f"/api/projects/{project.pk}/meta-eval/", {"verifier": config.name, "format": "csv"})
        .content.decode()
    )
    assert "cascade,cascade_stage,judge,3," in csv

    client.force_login(researcher)
    html = client.get(reverse("meta-eval-page", args=[project.pk]), {"verifier": config.name}).content.decode()
    assert 'data-testid="cascade-stages"' in html and "Coverage (decided)" in html
    assert '<td class="number" data-field="decided-precision">0.909' in html  # then its interval, if any
    assert '<tr data-type="A1"><th scope="row">A1</th><td class="number">12</td><td class="number">11</td>' in html
    dashboard = client.get(reverse("dashboard-project", args=[project.pk])).content.decode()
    assert '<td class="number" data-field="decided-precision">0.909</td>' in dashboard


def test_a_failed_judge_call_leaves_the_completion_to_a_resume(cascade_setup, fake_openai):
    dataset, config = cascade_setup
    fake_openai.always(Status(500))
    run = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))
    assert run.status == VerificationRun.Status.FAILED and "judge call(s) failed" in run.error
    assert run.counts["failed"] == 5 * QUESTIONS
    assert not Verdict.objects.filter(verifier=config, failed=False).exists()
    fake_openai.always(Reply())
    run = run_now(runs.resume_run(run, enqueue=False))
    assert run.status == VerificationRun.Status.SUCCEEDED, run.error
    assert run.counts == {"correct": 2 * QUESTIONS, "incorrect": QUESTIONS, "inconclusive": 2 * QUESTIONS, "failed": 0}
    assert Verdict.objects.filter(verifier=config, stage="judge").count() == QUESTIONS


def test_cascade_configurations_are_checked(cascade_setup, researcher, api_client_for):
    dataset, config = cascade_setup
    api = api_client_for(researcher)
    judge = config.cascade_judge
    made = api.post(
        "/api/grading/verifiers/",
        {"name": "c2", "kind": "cascade", "cascade_judge": judge.pk, "cascade_sample_rate": 0.25},
        format="json",
    )
    assert made.status_code == 201, made.json()
    assert made.json()["cascade_judge"] == judge.pk and made.json()["cascade_sample_rate"] == 0.25
    no_judge = api.post("/api/grading/verifiers/", {"name": "c3", "kind": "cascade"}, format="json")
    assert no_judge.status_code == 400 and "cascade_judge" in no_judge.json()
    rule = VerifierConfig.objects.create(name="plain-rules", kind=VerifierConfig.Kind.RULE)
    not_a_judge = api.post(
        "/api/grading/verifiers/", {"name": "c4", "kind": "cascade", "cascade_judge": rule.pk}, format="json"
    )
    assert not_a_judge.status_code == 400 and "cascade_judge" in not_a_judge.json()
    bad_rate = api.post(
        "/api/grading/verifiers/",
        {"name": "c5", "kind": "cascade", "cascade_judge": judge.pk, "cascade_sample_rate": 1.5},
        format="json",
    )
    assert bad_rate.status_code == 400 and "cascade_sample_rate" in bad_rate.json()
    AllowedJudgeHost.objects.all().delete()
    refused = api.post("/api/grading/runs/", {"verifier": config.pk, "dataset": dataset.pk}, format="json")
    assert refused.status_code == 400 and "cascade-judge" in refused.json()["detail"]


def test_selection_routes_only_what_the_cascade_left_to_humans(cascade_setup, researcher, api_client_for):
    dataset, config = cascade_setup
    run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))

    project, record = selection_services.select_for_annotation(
        dataset=dataset, strategy="cascade", verifiers=[config], seed=1
    )
    picked = Completion.objects.filter(pk__in=Item.objects.filter(project=project).values("subject_id"))
    assert sorted(kind_of(c) for c in picked) == sorted([3, 4] * QUESTIONS)
    assert (record.report["undecided"], record.report["disputed"], record.report["decided_by_cascade"]) == (
        QUESTIONS,
        QUESTIONS,
        3 * QUESTIONS,
    )
    reasons = {pick["reason"] for pick in record.report["picks"]}
    assert reasons == {"the rules and the judge disagreed", "neither the rules nor the judge could decide"}

    response = api_client_for(researcher).post(
        "/api/grading/selections/",
        {
            "dataset": dataset.name,
            "strategy": "cascade",
            "verifiers": [config.name],
            "routes": ["disputed"],
            "target": 3,
            "seed": 2,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    chosen = Item.objects.filter(project_id=response.json()["project_id"]).values_list("subject_id", flat=True)
    assert len(chosen) == 3 and {kind_of(c) for c in Completion.objects.filter(pk__in=chosen)} == {4}

    with pytest.raises(selection_services.SelectionRequestError, match="one cascade verifier"):
        selection_services.select_for_annotation(dataset=dataset, strategy="cascade", verifiers=[config.cascade_judge])


def test_the_selection_form_and_the_command_route_what_the_cascade_left_to_humans(cascade_setup, researcher, client):
    dataset, config = cascade_setup
    run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))
    client.force_login(researcher)
    url = reverse("jobs-dataset-select", args=[dataset.pk])
    base = {
        "select-verifiers": [config.pk],
        "select-per_side": 2,
        "select-min_minority": 2,
        "select-seed": 3,
        "select-labels_per_item": 2,
    }

    refused = client.post(url, {**base, "select-strategy": "cascade", "select-verifiers": [config.cascade_judge.pk]})
    assert refused.status_code == 400 and "exactly one cascade configuration" in refused.content.decode()
    response = client.post(
        url,
        {
            **base,
            "select-strategy": "cascade",
            "select-routes": ["undecided"],
            "select-name": "Undecided by the cascade",
        },
    )
    record = SelectionRecord.objects.get(project__name="Undecided by the cascade")
    assert response.status_code == 302 and response.url == reverse("jobs-selection", args=[record.pk])
    kinds = [kind_of(c) for c in Completion.objects.filter(pk__in=record.project.items.values("subject_id"))]
    assert kinds == [3] * QUESTIONS and record.report["parameters"]["routes"] == ["undecided"]
    page = client.get(reverse("jobs-selection", args=[record.pk])).content.decode()
    assert "neither the rules nor the judge could decide" in page and 'data-testid="cascade-routing"' in page
    assert f"left <strong>{QUESTIONS}</strong> completions undecided" in page
    assert f"Picked {QUESTIONS} undecided and 0 disputed." in page and "contested" not in page

    out = StringIO()
    call_command(
        "select_for_annotation",
        "--dataset",
        dataset.name,
        "--strategy",
        "cascade",
        "--verifiers",
        config.name,
        "--route",
        "disputed",
        "--name",
        "Disputed",
        stdout=out,
    )
    summary = json.loads(out.getvalue())
    assert summary["picked"] == QUESTIONS and summary["report"]["picked_disputed"] == QUESTIONS
    with pytest.raises(CommandError, match="one cascade verifier"):
        call_command(
            "select_for_annotation",
            "--dataset",
            dataset.name,
            "--strategy",
            "cascade",
            "--verifiers",
            config.cascade_judge.name,
            stdout=StringIO(),
        )


def test_a_completion_whose_projects_disagree_counts_as_unlabeled_in_the_run_report(cascade_setup):
    dataset, config = cascade_setup
    label_project(dataset, LABELS)
    run = run_now(runs.create_run(verifier=config, dataset=dataset, enqueue=False))
    assert stages_of(runs.cascade_report(run))["rules"]["labeled"] == 2 * QUESTIONS

    second = annotation_services.create_project(dataset=dataset, kind="correctness", name="second opinion")
    overturned = Completion.objects.get(question__dataset=dataset, question__external_id="q0", external_id="c0")
    confirmed = Completion.objects.get(question__dataset=dataset, question__external_id="q1", external_id="c0")
    Item.objects.filter(project=second, subject_id=overturned.pk).update(state=Item.State.RESOLVED, final_value=False)
    Item.objects.filter(project=second, subject_id=confirmed.pk).update(state=Item.State.RESOLVED, final_value=True)
    rules = stages_of(runs.cascade_report(run))["rules"]
    assert (rules["labeled"], rules["precision"]) == (2 * QUESTIONS - 1, 1.0)


def test_the_run_verifier_command_prints_a_cascade_run_with_its_stages(cascade_setup):
    dataset, config = cascade_setup
    out = StringIO()
    call_command("run_verifier", "--verifier", config.name, "--dataset", dataset.name, stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["status"] == "succeeded" and printed["verifier"]["kind"] == "cascade"
    assert [stage["decided"] for stage in printed["cascade"]["stages"]] == [2 * QUESTIONS, QUESTIONS, 2 * QUESTIONS]
    assert printed["cascade"]["tokens"] > 0
