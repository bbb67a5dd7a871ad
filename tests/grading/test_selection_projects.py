"""Selections made into annotation projects: the service, the API and the select_for_annotation command."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import AnnotationProject, Item
from grading.models import SelectionRecord, Verdict, VerifierConfig
from grading.selection import services
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

pytestmark = pytest.mark.django_db
JUDGES = ["j1", "j2", "j3", "j4", "j5"]
# The votes of j1..j5 on the completions of each question: 2 vs 3 splits, unanimous ones and a 1 vs 4.
VOTE_ROWS = [
    ("correct", "correct", "incorrect", "incorrect", "incorrect"),
    ("correct", "correct", "correct", "incorrect", "incorrect"),
    ("correct", "correct", "correct", "correct", "correct"),
    ("incorrect", "incorrect", "incorrect", "incorrect", "incorrect"),
    ("correct", "incorrect", "incorrect", "incorrect", "incorrect"),
    ("incorrect", "correct", "inconclusive", "correct", "incorrect"),
]


@pytest.fixture
def judged():
    """8 questions x 6 completions with verdicts of five judges (j1 alone is the VerifyBench pre-labeller)."""
    dataset = Dataset.objects.create(name="judged-pool")
    configs = [VerifierConfig.objects.create(name=name, kind=VerifierConfig.Kind.RULE) for name in JUDGES]
    for q in range(8):
        domain, answer_type = [("math_reasoning", "A1"), ("logic_reasoning", "C1")][q % 2]
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{q}",
            text=f"Q{q}",
            domain=domain,
            source=f"{domain}/S{q % 4}",
            answer_type=answer_type,
            answer_class=answer_type[0],
            content_hash=f"h{q}",
        )
        ReferenceAnswer.objects.create(question=question, final_answer="1")
        for k, votes in enumerate(VOTE_ROWS):
            completion = Completion.objects.create(
                question=question,
                external_id=f"c{k}",
                model_name=f"m{k % 3}",
                text=f"\\boxed{{{k}}}",
                content_hash=f"h{q}-{k}",
            )
            Verdict.objects.bulk_create(
                Verdict(completion=completion, verifier=config, status=status) for config, status in zip(configs, votes)
            )
    return dataset, configs


def test_a_verifybench_selection_becomes_a_project_with_its_report(judged, researcher):
    dataset, configs = judged
    project, record = services.select_for_annotation(
        dataset=dataset, strategy="verifybench", verifiers=configs[:1], seed=4, name="VB round 1", created_by=researcher
    )
    # j1 says correct to rows 0, 1, 2, 4 and incorrect to rows 3, 5: 2 + 2 per question.
    assert project.kind == "correctness" and project.name == "VB round 1"
    assert Item.objects.filter(project=project).count() == 8 * 4 == record.picked
    assert record.report["questions_short"] == 0 and record.report["picked_correct"] == 16
    assert record.strategy == "verifybench" and list(record.verifiers.all()) == configs[:1]
    picked = set(Item.objects.filter(project=project).values_list("subject_id", flat=True))
    assert picked == {pick["completion_id"] for pick in record.report["picks"]}
    assert project.selection_record == record


def test_a_verifybench_hard_selection_keeps_disagreements_up_to_the_target(judged):
    dataset, configs = judged
    project, record = services.select_for_annotation(
        dataset=dataset, strategy="verifybench-hard", verifiers=configs, seed=9, target=10
    )
    report = record.report
    assert report["contested"] == 8 * 3 and report["picked"] == 10 == project.items.count()
    assert sum(stratum["allocated"] for stratum in report["strata"]) == 10
    texts = set(
        Completion.objects.filter(pk__in=project.items.values("subject_id")).values_list("external_id", flat=True)
    )
    assert texts <= {"c0", "c1", "c5"}

    _, again = services.select_for_annotation(
        dataset=dataset, strategy="verifybench-hard", verifiers=configs, seed=9, target=10
    )
    assert [p["completion_id"] for p in again.report["picks"]] == [p["completion_id"] for p in report["picks"]]


def test_filters_narrow_a_selection_and_bad_requests_create_nothing(judged):
    dataset, configs = judged
    _, record = services.select_for_annotation(
        dataset=dataset,
        strategy="verifybench-hard",
        verifiers=configs,
        seed=1,
        target=100,
        answer_types=["C"],
        models=["m0"],
    )
    picked = Completion.objects.filter(pk__in=[p["completion_id"] for p in record.report["picks"]])
    assert picked.exists() and set(picked.values_list("question__answer_type", "model_name")) == {("C1", "m0")}

    projects = AnnotationProject.objects.count()
    for kwargs, message in [
        ({"strategy": "verifybench", "verifiers": configs[:2]}, "exactly one"),
        ({"strategy": "random", "verifiers": configs}, "unknown strategy"),
        ({"strategy": "verifybench-hard", "verifiers": configs, "min_minority": 3}, "min_minority"),
        ({"strategy": "verifybench-hard", "verifiers": configs, "domains": ["art"]}, "unknown domain"),
        ({"strategy": "verifybench-hard", "verifiers": configs, "models": ["nobody"]}, "picked no completion"),
    ]:
        with pytest.raises(services.SelectionRequestError, match=message):
            services.select_for_annotation(dataset=dataset, **kwargs)
    assert AnnotationProject.objects.count() == projects


def test_selections_api_creates_the_project_for_researchers_only(
    judged, researcher, annotator, adjudicator, api_client_for
):
    dataset, _ = judged
    payload = {
        "dataset": dataset.name,
        "strategy": "verifybench-hard",
        "verifiers": JUDGES,
        "target": 6,
        "seed": 3,
        "name": "hard round",
        "labels_per_item": 3,
    }
    for user in (annotator, adjudicator):
        assert api_client_for(user).post("/api/grading/selections/", payload, format="json").status_code == 403
        assert api_client_for(user).get("/api/grading/selections/").status_code == 403
    assert not SelectionRecord.objects.exists()

    client = api_client_for(researcher)
    response = client.post("/api/grading/selections/", payload, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    project = AnnotationProject.objects.get(pk=body["project_id"])
    assert (project.name, project.labels_per_item, project.items.count()) == ("hard round", 3, 6)
    assert body["preparing"] is False and body["setup_job"] is None  # a small selection's items are made at once
    assert body["report"]["picked"] == 6 and len(body["report"]["picks"]) == 6
    assert body["verifiers"] == JUDGES and body["created_by"] == researcher.username
    assert client.get(f"/api/grading/selections/{body['id']}/").json()["report"] == body["report"]
    assert [row["id"] for row in client.get("/api/grading/selections/").json()["results"]] == [body["id"]]

    bad = client.post("/api/grading/selections/", {**payload, "verifiers": ["j1", "ghost"]}, format="json")
    assert bad.status_code == 400 and "verifiers" in bad.json()
    empty = client.post("/api/grading/selections/", {**payload, "models": ["nobody"]}, format="json")
    assert empty.status_code == 400 and "picked no completion" in empty.json()["detail"]


def test_select_for_annotation_command(judged, tmp_path):
    dataset, _ = judged
    out = StringIO()
    report_path = tmp_path / "report.json"
    call_command(
        "select_for_annotation",
        "--dataset",
        dataset.name,
        "--strategy",
        "verifybench-hard",
        "--verifiers",
        *JUDGES,
        "--target",
        "12",
        "--seed",
        "5",
        "--name",
        "cmd round",
        "--report",
        str(report_path),
        stdout=out,
    )
    summary = json.loads(out.getvalue())
    project = AnnotationProject.objects.get(pk=summary["project_id"])
    assert project.name == "cmd round" and project.items.count() == 12
    assert summary["report"]["picked"] == 12 and "picks" not in summary["report"]
    assert len(json.loads(report_path.read_text())["picks"]) == 12

    out = StringIO()
    call_command(
        "select_for_annotation",
        "--dataset",
        dataset.name,
        "--strategy",
        "verifybench",
        "--verifiers",
        "j1",
        "--seed",
        "1",
        stdout=out,
    )
    assert json.loads(out.getvalue())["picked"] == 32

    with pytest.raises(CommandError, match="no verifier configuration named ghost"):
        call_command(
            "select_for_annotation", "--dataset", dataset.name, "--strategy", "verifybench", "--verifiers", "ghost"
        )
    with pytest.raises(CommandError, match="no dataset"):
        call_command("select_for_annotation", "--dataset", "nope", "--strategy", "verifybench", "--verifiers", "j1")
    with pytest.raises(CommandError, match="exactly one"):
        call_command(
            "select_for_annotation", "--dataset", dataset.name, "--strategy", "verifybench", "--verifiers", "j1", "j2"
        )


def test_a_large_selection_gets_its_items_from_a_setup_job(
    judged, researcher, monkeypatch, django_capture_on_commit_callbacks
):
    from annotation import setup
    from core.jobs import runner

    dataset, configs = judged
    monkeypatch.setattr(services, "INLINE_ITEMS", 10)
    with django_capture_on_commit_callbacks() as queued:
        project, record = services.select_for_annotation(
            dataset=dataset, strategy="verifybench", verifiers=configs[:1], seed=4, created_by=researcher
        )
    assert queued, "the setup job is queued when the selection commits"
    job = setup.active_setup(project)
    assert project.preparing and project.items.count() == 0 and job.status == "queued"
    assert record.picked == 32 and job.subject_ids == [pick["completion_id"] for pick in record.report["picks"]]

    runner.run("project-setup", job.pk)
    project.refresh_from_db()
    assert not project.preparing and setup.active_setup(project) is None
    picked = set(Item.objects.filter(project=project).values_list("subject_id", flat=True))
    assert picked == {pick["completion_id"] for pick in record.report["picks"]}


def test_the_selections_api_names_the_setup_job_of_a_large_selection(judged, researcher, api_client_for, monkeypatch):
    dataset, configs = judged
    monkeypatch.setattr(services, "INLINE_ITEMS", 3)
    payload = {"dataset": dataset.name, "strategy": "verifybench", "verifiers": ["j1"], "seed": 2}
    response = api_client_for(researcher).post("/api/grading/selections/", payload, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    project = AnnotationProject.objects.get(pk=body["project_id"])
    assert body["preparing"] is True and project.items.count() == 0
    assert body["setup_job"]["kind"] == "project-setup" and body["setup_job"]["status"] == "queued"
