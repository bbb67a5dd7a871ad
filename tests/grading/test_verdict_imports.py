"""Verdicts computed elsewhere: imported in the long and the wide shape from JSON Lines, CSV and Parquet, checked row
by row, all or nothing, idempotent, with conflicts reported; the verifiers they name are external configurations,
which no run can start, and the projects' figures move with their verdicts as with a run's."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import aggregates
from annotation import services as annotation_services
from grading import runs
from grading.models import Verdict, VerifierConfig
from grading.verdict_imports import import_verdicts, verdict_status
from tests.annotation.conftest import build_dataset
from verifybench.services import ImportRejected, import_jsonl

pytestmark = pytest.mark.django_db


def jsonl(rows) -> io.BytesIO:
    source = io.BytesIO("".join(json.dumps(row) + "\n" for row in rows).encode())
    source.name = "verdicts.jsonl"
    return source


def long_rows(dataset, judges=("judge-a", "judge-b")) -> list[dict]:
    rows = []
    for question_id, completion_id in sorted(dataset.questions.values_list("external_id", "completions__external_id")):
        for index, judge in enumerate(judges):
            rows.append(
                {
                    "question_id": question_id,
                    "completion_id": completion_id,
                    "verifier": judge,
                    "verdict": (int(question_id[1:]) + int(completion_id[1:]) + index) % 2 == 0,
                    "raw_output": f"Final Judgment: {judge}",
                    "prompt_tokens": 120,
                    "completion_tokens": 8,
                    "cost": "0.00015",
                    "judged_at": "2026-11-01T10:00:00Z",
                }
            )
    return rows


def stored(verifier_name: str) -> dict[tuple[str, str], str]:
    return {
        (question_id, completion_id): status
        for question_id, completion_id, status in Verdict.objects.filter(verifier__name=verifier_name).values_list(
            "completion__question__external_id", "completion__external_id", "status"
        )
    }


def test_a_long_file_for_two_judges_makes_external_verifiers_and_their_verdicts(researcher):
    dataset = build_dataset(questions=3, completions_per_question=2, name="imported-verdicts")
    rows = long_rows(dataset)
    report = import_verdicts(dataset_name=dataset.name, source=jsonl(rows), created_by=researcher)
    assert report.ok and report.verdicts_created == 12 and report.verdicts_unchanged == 0
    assert report.verifiers_created == ["judge-a", "judge-b"]
    judge = VerifierConfig.objects.get(name="judge-a")
    assert judge.kind == VerifierConfig.Kind.EXTERNAL and judge.workspace_id == dataset.workspace_id
    assert "verdicts.jsonl" in judge.provenance and researcher.username in judge.provenance
    expected = {
        (row["question_id"], row["completion_id"]): "correct" if row["verdict"] else "incorrect"
        for row in rows
        if row["verifier"] == "judge-a"
    }
    assert stored("judge-a") == expected
    verdict = Verdict.objects.filter(verifier=judge).first()
    assert verdict.raw_output == "Final Judgment: judge-a" and verdict.prompt_tokens == 120
    assert verdict.cost == Decimal("0.00015") and "judged at 2026-11-01" in verdict.reason


def test_a_second_import_changes_nothing_and_a_changed_verdict_is_a_conflict_that_rejects_the_file():
    dataset = build_dataset(questions=2, completions_per_question=2, name="idempotent-verdicts")
    rows = long_rows(dataset, judges=("judge-a",))
    import_verdicts(dataset_name=dataset.name, source=jsonl(rows))
    before = stored("judge-a")

    again = import_verdicts(dataset_name=dataset.name, source=jsonl(rows))
    assert (again.verdicts_created, again.verdicts_unchanged, again.verifiers_created) == (0, 4, [])

    changed = [dict(row) for row in rows]
    changed[1]["verdict"] = not changed[1]["verdict"]
    changed.append({**rows[0], "question_id": "q9", "verifier": "judge-new"})  # unknown question: an error too
    with pytest.raises(ImportRejected) as rejected:
        import_verdicts(dataset_name=dataset.name, source=jsonl(changed))
    report = rejected.value.report
    assert report.conflict_count == 1 and report.conflicts[0].line == 2
    assert "judge-a said" in report.conflicts[0].reason
    assert any(error.line == 5 and error.field == "completion_id" for error in report.errors)
    assert stored("judge-a") == before and not VerifierConfig.objects.filter(name="judge-new").exists()


def test_every_bad_row_is_reported_with_its_line_and_nothing_is_written():
    dataset = build_dataset(questions=2, completions_per_question=2, name="bad-verdicts")
    good = {"question_id": "q0", "completion_id": "c0", "verifier": "judge-a", "verdict": "correct"}
    rows = [
        good,
        {**good, "completion_id": "c7"},  # no such completion
        {**good, "completion_id": "c1", "verdict": "probably"},  # not a verdict
        {**good},  # a second verdict of judge-a on q0/c0
        {"completion_id": "c1", "verifier": "judge-a", "verdict": "incorrect"},  # c1 names two completions
        {**good, "completion_id": "c1", "question_id": "q1", "prompt_tokens": -3, "cost": "cheap"},
        {**good, "verifier": ""},
    ]
    with pytest.raises(ImportRejected) as rejected:
        import_verdicts(dataset_name=dataset.name, source=jsonl(rows))
    report = rejected.value.report
    problems = {(error.line, error.field) for error in report.errors}
    assert {(2, "completion_id"), (3, "verdict"), (4, "completion_id"), (5, "completion_id")} <= problems
    assert {(6, "prompt_tokens"), (6, "cost"), (7, "verifier")} <= problems
    assert "give question_id" in next(e.reason for e in report.errors if e.line == 5)
    assert not Verdict.objects.exists() and not VerifierConfig.objects.filter(kind="external").exists()


def test_a_bad_last_row_of_a_long_file_rejects_all_of_it():
    dataset = build_dataset(questions=50, completions_per_question=40, name="long-verdicts")
    rows = long_rows(dataset, judges=("j1", "j2", "j3", "j4", "j5"))
    assert len(rows) == 10_000
    rows.append({"question_id": "q0", "completion_id": "c0", "verifier": "j6", "verdict": "maybe"})
    with pytest.raises(ImportRejected) as rejected:
        import_verdicts(dataset_name=dataset.name, source=jsonl(rows))
    assert [(error.line, error.field) for error in rejected.value.report.errors] == [(10_001, "verdict")]
    assert not Verdict.objects.exists()

    rows.pop()
    report = import_verdicts(dataset_name=dataset.name, source=jsonl(rows))
    assert report.verdicts_created == 10_000 and Verdict.objects.count() == 10_000


def test_skip_invalid_imports_the_rest_and_writes_the_rejects_with_their_reasons(tmp_path):
    dataset = build_dataset(questions=1, completions_per_question=2, name="skipping-verdicts")
    path = tmp_path / "verdicts.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"question_id": "q0", "completion_id": "c0", "verifier": "j", "verdict": None}),
                json.dumps({"question_id": "q0", "completion_id": "c1", "verifier": "j", "verdict": "nope"}),
                "{not json",
            ]
        )
        + "\n"
    )
    report = import_verdicts(dataset_name=dataset.name, source=path, skip_invalid=True)
    assert report.verdicts_created == 1 and report.rejected_lines == 2
    assert stored("j") == {("q0", "c0"): "inconclusive"}
    rejects = [json.loads(line) for line in open(report.rejects_path)]
    assert [entry["line"] for entry in rejects] == [2, 3]
    assert "not a verdict" in rejects[0]["errors"][0]["reason"]


def test_a_completions_file_with_a_column_per_judge_as_csv(tmp_path):
    dataset = build_dataset(questions=2, completions_per_question=1, name="wide-verdicts")
    path = tmp_path / "judged.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "completion_id", "completion", "gpt-judge", "other-judge"])
        writer.writerow(["q0", "c0", "text", "true", "false"])
        writer.writerow(["q1", "c0", "text", "inconclusive", ""])  # an empty cell: no verdict of that judge
    out = io.StringIO()
    call_command(
        "import_verdicts", str(path), dataset=dataset.name, verdict_columns=["gpt-judge", "other-judge"], stdout=out
    )
    assert "verdicts: 3 written" in out.getvalue()
    assert stored("gpt-judge") == {("q0", "c0"): "correct", ("q1", "c0"): "inconclusive"}
    assert stored("other-judge") == {("q0", "c0"): "incorrect"}


def test_parquet_and_the_command_reject_with_a_nonzero_exit(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    dataset = build_dataset(questions=1, completions_per_question=2, name="parquet-verdicts")
    path = tmp_path / "verdicts.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {"question_id": "q0", "completion_id": "c0", "verifier": "pq-judge", "verdict": "correct"},
                {"question_id": "q0", "completion_id": "c1", "verifier": "pq-judge", "verdict": "incorrect"},
            ]
        ),
        path,
    )
    call_command("import_verdicts", str(path), dataset=dataset.name, stdout=io.StringIO())
    assert stored("pq-judge") == {("q0", "c0"): "correct", ("q0", "c1"): "incorrect"}
    with pytest.raises(CommandError) as failed:
        call_command("import_verdicts", str(path), dataset="no such dataset", stderr=io.StringIO())
    assert failed.value.returncode == 1


def test_a_name_of_a_computed_verifier_cannot_take_imported_verdicts_and_an_external_one_cannot_run():
    dataset = build_dataset(questions=1, completions_per_question=1, name="names-verdicts")
    VerifierConfig.objects.create(name="rules", kind=VerifierConfig.Kind.RULE)
    row = {"question_id": "q0", "completion_id": "c0", "verifier": "rules", "verdict": "correct"}
    with pytest.raises(ImportRejected) as rejected:
        import_verdicts(dataset_name=dataset.name, source=jsonl([row]))
    assert "imported verdicts need a name of their own" in rejected.value.report.errors[0].reason

    import_verdicts(dataset_name=dataset.name, source=jsonl([{**row, "verifier": "harness"}]))
    with pytest.raises(runs.RunRequestError, match="imported from elsewhere"):
        runs.create_run(verifier=VerifierConfig.objects.get(name="harness"), dataset=dataset)


def test_imported_verdicts_move_the_projects_figures_as_a_rebuild_counts_them():
    dataset = build_dataset(questions=3, completions_per_question=2, name="tallied-verdicts")
    project = annotation_services.create_project(dataset=dataset, kind="correctness", seed=1, labels_per_item=1)
    import_verdicts(dataset_name=dataset.name, source=jsonl(long_rows(dataset)))
    kept = aggregates.all_kept_tallies(project)
    aggregates.rebuild(project)
    assert kept == aggregates.all_kept_tallies(project)
    judge = VerifierConfig.objects.get(name="judge-a")
    assert kept[f"vv|{judge.pk}"] == 6


def test_a_verdict_file_is_recognised_by_the_import_entry_point(tmp_path):
    dataset = build_dataset(questions=1, completions_per_question=2, name="detected-verdicts")
    path = tmp_path / "from-harness.jsonl"
    path.write_text(
        json.dumps({"question_id": "q0", "completion_id": "c1", "verifier": "harness", "verdict": "correct"}) + "\n"
    )
    report = import_jsonl(dataset_name=dataset.name, source=str(path))
    assert report.format == "verdicts" and report.verdicts_created == 1


@pytest.mark.parametrize(
    ("value", "status"),
    [
        (True, "correct"),
        (False, "incorrect"),
        (None, "inconclusive"),
        ("Correct", "correct"),
        (" incorrect ", "incorrect"),
        ("null", "inconclusive"),
        (1, "correct"),
        (0, "incorrect"),
        (2, None),
        ("maybe", None),
        (0.5, None),
    ],
)
def test_what_a_verdict_value_means(value, status):
    assert verdict_status(value) == status


def test_a_verdict_file_uploaded_through_the_api_is_an_import_job_of_the_dataset(
    researcher, api_client_for, django_capture_on_commit_callbacks
):
    dataset = build_dataset(questions=2, completions_per_question=1, name="uploaded-verdicts")
    source = jsonl(long_rows(dataset))
    client = api_client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/datasets/import/", {"file": source, "dataset": dataset.name}, format="multipart")
    assert response.status_code == 202, response.content
    job = client.get(response.json()["url"]).json()
    assert job["status"] == "succeeded", job
    assert job["report"]["format"] == "verdicts" and job["report"]["verdicts_created"] == 4
    assert sorted(job["report"]["verifiers_created"]) == ["judge-a", "judge-b"]


def test_another_workspaces_dataset_is_not_found(make_user):
    from core import roles
    from core.models import Workspace, WorkspaceMember

    dataset = build_dataset(questions=1, completions_per_question=1, name="guarded-verdicts")
    outsider = make_user(roles.RESEARCHER)
    WorkspaceMember.objects.filter(user=outsider).delete()
    WorkspaceMember.objects.create(workspace=Workspace.objects.create(name="Elsewhere"), user=outsider)
    row = {"question_id": "q0", "completion_id": "c0", "verifier": "spy", "verdict": "correct"}
    with pytest.raises(ImportRejected) as rejected:
        import_verdicts(dataset_name=dataset.name, source=jsonl([row]), created_by=outsider)
    assert "no dataset named" in rejected.value.report.errors[0].reason
    assert not Verdict.objects.exists()


def test_the_api_makes_no_imported_verdict_configuration_and_changes_no_kind_to_or_from_it(researcher, api_client_for):
    dataset = build_dataset(questions=1, completions_per_question=1, name="api-kinds")
    client = api_client_for(researcher)
    made = client.post("/api/grading/verifiers/", {"name": "fake-external", "kind": "external"}, format="json")
    assert made.status_code == 400 and "importing a verdict file" in made.json()["kind"][0]
    import_verdicts(
        dataset_name=dataset.name,
        source=jsonl([{"question_id": "q0", "completion_id": "c0", "verifier": "harness", "verdict": "correct"}]),
    )
    harness = VerifierConfig.objects.get(name="harness")
    changed = client.patch(f"/api/grading/verifiers/{harness.pk}/", {"kind": "rule"}, format="json")
    assert changed.status_code == 400 and "keeps its kind" in changed.json()["kind"][0]
    assert VerifierConfig.objects.get(pk=harness.pk).kind == "external"
