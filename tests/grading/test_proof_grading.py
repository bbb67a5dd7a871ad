"""Proof grading through the app: rubric versions, the grade endpoint, the 2+1 protocol, adjudication,
MathArena import and export, leaderboards."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.core.management import call_command

from annotation import services as annotation_services
from annotation import workflow
from annotation.models import Label
from core import roles
from grading.models import ModelInfo, Rubric, RubricInUseError
from grading.proofs import scoring as proof_scoring
from grading.proofs import services as proof_services
from grading.proofs.importing import import_matharena_proofs
from reports.exports import get_export_format
from reports.exports import matharena_rows as proof_export
from reports.exports.matharena_proofs import plan_matharena_proofs
from verifybench.services import ImportRejected

pytestmark = pytest.mark.django_db

TWO_CHAINS = {
    "max_points": 7,
    "chains": [
        {
            "key": "amgm",
            "title": "AM-GM",
            "checkpoints": [
                {"key": "a1", "title": "Product is one", "points": 2},
                {"key": "a2", "title": "Apply AM-GM", "points": 3, "allow_partial": True},
                {"key": "a3", "title": "Equality", "points": 2, "allow_partial": True},
            ],
        },
        {
            "key": "clear",
            "title": "Clear denominators",
            "checkpoints": [
                {"key": "b1", "title": "Polynomial form", "points": 3},
                {"key": "b2", "title": "Prove it", "points": 4, "allow_partial": True},
            ],
        },
    ],
    "deductions": [
        {"key": "d_sign", "title": "Sign error", "kind": "penalty", "amount": 1},
        {"key": "d_circ", "title": "Circular", "kind": "cap", "amount": 2},
    ],
    "zero_credit": [{"title": "Equality case only"}],
}


@pytest.fixture
def competition():
    return proof_services.get_or_create_competition("Test Olympiad", date=__import__("datetime").date(2025, 3, 1))


@pytest.fixture
def problem(competition):
    return proof_services.add_problem(
        competition, problem_idx=1, statement="Prove $a/b+b/c+c/a \\ge 3$.", solutions=["AM-GM."], rubric=TWO_CHAINS
    )


@pytest.fixture
def graders(make_user):
    return [make_user(roles.ANNOTATOR, username=f"grader{n}") for n in (1, 2, 3)]


@pytest.fixture
def project(problem, graders, adjudicator):
    proof_services.add_submission(problem, model_name="model-x", text="By AM-GM the sum is at least 3.")
    return proof_services.create_proof_project(
        name="Test proofs", competition=problem.competition, graders=graders, adjudicators=[adjudicator], seed=1
    )


def full_marks():
    return {"chain": "amgm", "awarded": {"a1": 2, "a2": 3, "a3": 2}, "deductions": [], "justifications": {}}


def grade_as(api_client_for, project, user, body):
    task = annotation_services.next_task(project, user)
    response = api_client_for(user).post(f"/api/grading/tasks/{task.pk}/grade/", body, format="json")
    return task, response


# ---------------------------------------------------------------- rubrics


def test_rubric_in_use_is_immutable_and_an_edit_makes_a_new_version(problem, project, graders, api_client_for):
    first = problem.latest_rubric()
    edited = json.loads(json.dumps(TWO_CHAINS))
    edited["deductions"][0]["amount"] = 2
    assert proof_services.save_rubric(problem, edited).pk == first.pk  # unused: edited in place
    first.refresh_from_db()
    assert first.version == 1 and first.spec["deductions"][0]["amount"] == 2

    _, response = grade_as(api_client_for, project, graders[0], full_marks())
    assert response.status_code == 201 and response.json()["rubric"] == {"id": first.pk, "version": 1}

    second = proof_services.save_rubric(problem, TWO_CHAINS)
    assert (second.version, second.pk != first.pk) == (2, True)
    first.refresh_from_db()
    assert first.spec["deductions"][0]["amount"] == 2
    first.spec = TWO_CHAINS
    with pytest.raises(RubricInUseError):
        first.save()
    with pytest.raises(RubricInUseError):
        Rubric.objects.get(pk=first.pk).delete()
    label = Label.objects.get(annotator=graders[0])
    assert label.details["rubric_id"] == first.pk


def test_malformed_rubrics_are_refused_by_the_api_with_every_error(problem, researcher, annotator, api_client_for):
    bad = {
        "max_points": 7,
        "chains": [
            {
                "key": "c",
                "title": "C",
                "checkpoints": [{"key": "x", "title": "X", "points": 3}, {"key": "x", "title": "X again", "points": 2}],
            }
        ],
        "deductions": [{"key": "d", "title": "D", "kind": "bonus", "amount": 1}],
    }
    response = api_client_for(researcher).post(
        "/api/grading/rubrics/", {"problem": problem.pk, "spec": bad}, format="json"
    )
    assert response.status_code == 400
    errors = " | ".join(response.json()["errors"])
    assert "used more than once" in errors and "every chain must reach exactly 7" in errors
    assert "kind must be 'penalty' or 'cap'" in errors
    missing = api_client_for(researcher).post(
        "/api/grading/rubrics/", {"problem": problem.pk, "spec": {"chains": [{"title": "no key"}]}}, format="json"
    )
    assert missing.status_code == 400 and "malformed rubric" in missing.json()["errors"][0]
    refused = api_client_for(annotator).post(
        "/api/grading/rubrics/", {"problem": problem.pk, "spec": TWO_CHAINS}, format="json"
    )
    assert refused.status_code == 403
    assert Rubric.objects.filter(problem=problem).count() == 1

    rubric = problem.latest_rubric()
    shown = api_client_for(researcher).get(f"/api/grading/rubrics/{rubric.pk}/").json()
    assert shown["version"] == 1 and shown["spec"]["chains"][1]["key"] == "clear"
    revised = api_client_for(researcher).post(
        f"/api/grading/rubrics/{rubric.pk}/revise/", {"spec": {**TWO_CHAINS, "zero_credit": []}}, format="json"
    )
    assert revised.status_code == 201 and revised.json()["version"] == 1  # unused: edited in place


def test_a_rubric_is_shown_only_to_its_graders_and_researchers(project, graders, annotator, researcher, api_client_for):
    rubric = project.dataset.competition.problems.get().latest_rubric()
    url = f"/api/grading/rubrics/{rubric.pk}/"
    assert api_client_for(annotator).get(url).status_code == 404  # not a member of a project grading it
    assert api_client_for(graders[0]).get(url).json()["spec"]["max_points"] == 7
    assert api_client_for(researcher).get(url).status_code == 200
    assert api_client_for(None).get(url).status_code in (401, 403)


# ---------------------------------------------------------------- grading


def test_the_server_computes_the_score_and_refuses_bare_totals(project, graders, api_client_for):
    grader = graders[0]
    task = annotation_services.next_task(project, grader)
    client = api_client_for(grader)
    bare = client.post(f"/api/grading/tasks/{task.pk}/grade/", {"score": 7}, format="json")
    assert bare.status_code == 400
    generic = client.post(f"/api/tasks/{task.pk}/submit/", {"value": 7}, format="json")
    assert generic.status_code == 400 and f"/api/grading/tasks/{task.pk}/grade/" in generic.json()["detail"]

    body = {
        "chain": "clear",
        "awarded": {"b1": 3, "b2": 2},
        "deductions": ["d_sign"],
        "justifications": {"b2": "Only the two-variable case.", "d_sign": "Divides by a - b."},
    }
    response = client.post(f"/api/grading/tasks/{task.pk}/grade/", body, format="json")
    assert response.status_code == 201
    data = response.json()
    assert (data["score"], data["chain_total"], data["max_points"]) == (4, 5, 7)
    assert [line["awarded"] for line in data["breakdown"]] == [3, 2]
    label = Label.objects.get(task=task)
    assert label.value == 4.0 and label.details["chain"] == "clear"
    assert label.details["justifications"]["d_sign"] == "Divides by a - b."
    assert client.get(f"/api/tasks/{task.pk}/").json()["submission"]["anonymous_id"].startswith("P-")
    assert "model-x" not in json.dumps(client.get(f"/api/grading/tasks/{task.pk}/").json())


def test_justifications_are_required_and_every_error_is_returned(project, graders, api_client_for):
    grader = graders[0]
    task = annotation_services.next_task(project, grader)
    client = api_client_for(grader)
    body = {"chain": "amgm", "awarded": {"a1": 0, "a2": 1, "a3": 9}, "deductions": ["d_circ", "nope"]}
    response = client.post(f"/api/grading/tasks/{task.pk}/grade/", body, format="json")
    errors = response.json()["errors"]
    assert response.status_code == 400
    assert any("a3" in e for e in errors) and any("unknown deduction 'nope'" in e for e in errors)

    body = {"chain": "amgm", "awarded": {"a2": 1}, "deductions": ["d_circ"]}
    errors = client.post(f"/api/grading/tasks/{task.pk}/grade/", body, format="json").json()["errors"]
    assert any("only 1 of 3" in e for e in errors) and any("d_circ" in e for e in errors)
    zero = client.post(f"/api/grading/tasks/{task.pk}/grade/", {"chain": "amgm", "awarded": {}}, format="json")
    assert zero.status_code == 400 and "zero needs a written justification" in " ".join(zero.json()["errors"])
    assert not Label.objects.filter(task=task).exists()
    ok = client.post(
        f"/api/grading/tasks/{task.pk}/grade/",
        {"chain": "amgm", "awarded": {}, "justifications": {"overall": "Restates the problem."}},
        format="json",
    )
    assert ok.status_code == 201 and ok.json()["score"] == 0


def test_two_graders_three_points_apart_bring_a_third_and_the_final_is_the_median(project, graders, api_client_for):
    seven = full_marks()
    four = {
        "chain": "amgm",
        "awarded": {"a1": 2, "a2": 2, "a3": 0},
        "justifications": {"a2": "The AM-GM step skips positivity."},
    }
    five = {"chain": "amgm", "awarded": {"a1": 2, "a2": 3, "a3": 0}}
    grade_as(api_client_for, project, graders[0], seven)
    task, response = grade_as(api_client_for, project, graders[1], four)
    assert response.json()["item_state"] == workflow.NEEDS_TIEBREAK
    task, response = grade_as(api_client_for, project, graders[2], five)
    assert response.status_code == 201
    item = task.item
    item.refresh_from_db()
    assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, "majority", 5.0)


def test_agreeing_graders_give_the_mean(project, graders, api_client_for):
    grade_as(api_client_for, project, graders[0], full_marks())
    task, _ = grade_as(
        api_client_for,
        project,
        graders[1],
        {"chain": "amgm", "awarded": {"a1": 2, "a2": 3, "a3": 1}, "justifications": {"a3": "Equality case asserted."}},
    )
    task.item.refresh_from_db()
    assert (task.item.resolution, task.item.final_value) == ("agreement", 6.5)


def test_an_adjudicator_decides_with_a_rationale_when_no_pair_agrees(project, graders, adjudicator, api_client_for):
    grade_as(api_client_for, project, graders[0], full_marks())
    grade_as(api_client_for, project, graders[1], {"chain": "clear", "awarded": {"b1": 3}, "justifications": {}})
    task, _ = grade_as(
        api_client_for,
        project,
        graders[2],
        {"chain": "amgm", "awarded": {}, "justifications": {"overall": "No argument."}},
    )
    item = task.item
    item.refresh_from_db()
    assert item.state == workflow.NEEDS_ADJUDICATION
    client = api_client_for(adjudicator)
    review = client.get(f"/api/grading/items/{item.pk}/").json()
    assert [label["score"] for label in review["labels"]] == [7.0, 3.0, 0.0]
    assert review["labels"][2]["details"]["justifications"]["overall"] == "No argument."
    assert (
        client.post(f"/api/grading/items/{item.pk}/decide/", {"score": 9, "rationale": "x"}, format="json").status_code
        == 400
    )
    assert (
        client.post(f"/api/grading/items/{item.pk}/decide/", {"score": 4, "rationale": " "}, format="json").status_code
        == 400
    )
    decided = client.post(
        f"/api/grading/items/{item.pk}/decide/",
        {"score": 4, "rationale": "The polynomial form is right but unproved."},
        format="json",
    )
    assert decided.status_code == 200 and decided.json()["final_value"] == 4.0
    assert (
        api_client_for(graders[0])
        .post(f"/api/grading/items/{item.pk}/decide/", {"score": 1, "rationale": "r"}, format="json")
        .status_code
        == 404
    )


# ---------------------------------------------------------------- import, export, leaderboard

PROBLEM_LINE = {
    "problem_idx": 1,
    "problem": "Show that $n^3-n$ is divisible by 6.",
    "points": 7,
    "grading_scheme": [
        {"title": "Factor", "points": 2, "desc": "(n-1)n(n+1)"},
        {"title": "Conclude", "points": 5, "desc": "2 and 3 divide it"},
    ],
    "sample_solution": "Three consecutive integers.",
}


def output_line(model, run, text="Factor as (n-1)n(n+1); done."):
    return {
        "problem_idx": 1,
        "model_name": model,
        "model_config": {"temperature": 0.7},
        "idx_answer": run,
        "answer": text,
    }


def write_jsonl(path, rows):
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def test_import_grade_export_round_trip_in_matharena_format(tmp_path, graders, adjudicator, api_client_for):
    source = write_jsonl(tmp_path / "proofs.jsonl", [PROBLEM_LINE, output_line("m-a", 0), output_line("m-b", 0)])
    call_command(
        "import_jsonl", str(source), "--dataset", "Cubes 2025", "--format", "matharena-proofs", stdout=io.StringIO()
    )
    competition = proof_services.get_or_create_competition("Cubes 2025")
    problem = competition.problems.get()
    assert problem.latest_rubric().spec["chains"][0]["checkpoints"][1]["points"] == 5
    project = proof_services.create_proof_project(name="Cubes", competition=competition, graders=graders[:2])
    for grader in graders[:2]:
        for _ in range(2):
            grade_as(
                api_client_for,
                project,
                grader,
                {"chain": "main", "awarded": {"c1": 2, "c2": 4}, "justifications": {"c2": "Misses 3."}},
            )

    export_format = get_export_format("matharena-proofs")
    plan = plan_matharena_proofs(project, export_format.clean_options({}))
    rows = [row.data for chunk in plan.chunks for row in chunk]
    assert plan.total == 2 and [row["model_name"] for row in rows] == ["m-a", "m-b"]
    row = rows[0]
    assert list(row) == list(proof_export.column_names())
    assert (row["problem_idx"], row["idx_answer"], row["points_judge_1"], row["max_points_judge_2"]) == (1, 0, 6, 7)
    assert row["grading_details_judge_1"][1] == {
        "title": "Conclude",
        "desc": "Misses 3.",
        "points": 4,
        "max_points": 5,
        "grading_scheme_desc": "2 and 3 divide it",
    }
    assert (row["points_judge_3"], row["final_points"], row["final_method"]) == (None, 6, "mean_of_two")

    again = import_matharena_proofs(competition_name="Cubes 2025", source=source)
    assert (again.problems_unchanged, again.submissions_unchanged, again.changed_anything) == (1, 2, False)


def test_pure_row_builder_lists_deductions_and_empty_judge_slots():
    spec = proof_scoring.rubric_from_dict(TWO_CHAINS)
    grade = proof_export.JudgeGrade(
        total=1,
        max_points=7,
        rubric=spec,
        details={
            "chain": "clear",
            "awarded": {"b1": 3},
            "deductions": ["d_circ"],
            "justifications": {"d_circ": "Assumes the claim."},
        },
    )
    row = proof_export.matharena_graded_row(
        problem_idx="2",
        problem="p",
        model_name="m",
        model_config={},
        idx_answer=3,
        answer="a",
        judges=[grade],
        final_points=1.0,
        resolution="adjudication",
    )
    assert row["grading_details_judge_1"][-1] == {
        "title": "Circular",
        "desc": "Assumes the claim.",
        "points": 0,
        "max_points": 0,
        "grading_scheme_desc": "deduction: cap at 2/7",
    }
    assert row["grading_details_judge_1"][1]["points"] == 0
    assert (row["problem_idx"], row["final_points"], row["final_method"], row["points_judge_2"]) == (
        2,
        1,
        "adjudication",
        None,
    )
    with pytest.raises(ValueError):
        proof_export.matharena_graded_row(
            problem_idx=1,
            problem="p",
            model_name="m",
            model_config={},
            idx_answer=0,
            answer="a",
            judges=[grade] * 4,
            final_points=1,
            resolution="agreement",
        )


def test_an_invalid_line_rejects_the_whole_proof_file(tmp_path):
    bad_scheme = {**PROBLEM_LINE, "problem_idx": 2, "grading_scheme": [{"title": "All", "points": 6}]}
    source = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            PROBLEM_LINE,
            bad_scheme,
            output_line("m", 0),
            "{not json",
            output_line("m", 0),
            {**output_line("m", 1), "problem_idx": 9},
        ],
    )
    with pytest.raises(ImportRejected) as rejected:
        import_matharena_proofs(competition_name="Broken", source=source)
    text = str(rejected.value.report.summary())
    assert "line 2: grading_scheme" in text and "line 4" in text and "line 5: idx_answer" in text
    assert "line 6: problem_idx" in text and "Nothing was written" in text
    assert not proof_services.Competition.objects.filter(name="Broken").exists()
    report = import_matharena_proofs(
        competition_name="Partly", source=source, skip_invalid=True, rejects_path=tmp_path / "rejects.jsonl"
    )
    assert (report.problems_created, report.submissions_created, report.rejected_lines) == (1, 1, 4)
    assert len((tmp_path / "rejects.jsonl").read_text().splitlines()) == 4


def test_leaderboard_api_and_csv(project, problem, graders, researcher, annotator, api_client_for):
    proof_services.add_submission(problem, model_name="model-y", text="Late proof.", run_index=0)
    proof_services.add_submissions_to_project(project, problem.submissions.all())
    ModelInfo.objects.create(name="model-y", release_date=problem.competition.date.replace(year=2026))
    for grader in graders[:2]:
        grade_as(api_client_for, project, grader, full_marks())
        grade_as(api_client_for, project, grader, {"chain": "clear", "awarded": {"b1": 3}, "justifications": {}})
    competition = problem.competition
    client = api_client_for(researcher)
    board = client.get(f"/api/grading/competitions/{competition.pk}/leaderboard/").json()
    by_model = {entry["model"]: entry for entry in board["entries"]}
    scores = sorted(round(entry["score"], 2) for entry in by_model.values())
    assert scores == [round(300 / 7, 2), 100.0]
    assert by_model["model-y"]["released_after_competition"] is True
    assert by_model["model-x"]["released_after_competition"] is None
    response = client.get(f"/api/grading/competitions/{competition.pk}/leaderboard/?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {row["model"] for row in rows} == {"model-x", "model-y"} and "problem_1" in rows[0]
    assert api_client_for(annotator).get(f"/api/grading/competitions/{competition.pk}/leaderboard/").status_code == 403


# ---------------------------------------------------------------- pages


def test_conflict_page_shows_both_gradings_and_records_the_decision(
    project, graders, adjudicator, api_client_for, client
):
    grade_as(api_client_for, project, graders[0], full_marks())
    grade_as(
        api_client_for,
        project,
        graders[1],
        {"chain": "clear", "awarded": {"b1": 3}, "justifications": {}, "note": "Second half missing."},
    )
    task, _ = grade_as(
        api_client_for,
        project,
        graders[2],
        {"chain": "amgm", "awarded": {}, "justifications": {"overall": "No <b>argument</b>."}},
    )
    item = task.item
    client.force_login(adjudicator)
    page = client.get(f"/grading/items/{item.pk}/")
    html = page.content.decode()
    assert page.status_code == 200 and html.count('data-testid="grading"') == 3
    assert "Second half missing." in html and "No &lt;b&gt;argument&lt;/b&gt;." in html and "model-x" not in html
    refused = client.post(f"/grading/items/{item.pk}/", {"score": "4", "rationale": ""})
    assert refused.status_code == 400
    decided = client.post(f"/grading/items/{item.pk}/", {"score": "4", "rationale": "Half the polynomial proof."})
    assert decided.status_code == 302
    item.refresh_from_db()
    assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, "adjudication", 4.0)
    client.force_login(graders[0])
    assert client.get(f"/grading/items/{item.pk}/").status_code == 404


def test_grading_page_refuses_missing_justifications_and_leaderboard_pages_render(project, graders, researcher, client):
    client.force_login(graders[0])
    response = client.post(f"/grading/projects/{project.pk}/next/")
    assert response.status_code == 302
    grade_url = response["Location"]
    page = client.get(grade_url)
    assert page.status_code == 200 and 'id="proof-rubric"' in page.content.decode()
    refused = client.post(grade_url, {"chain": "amgm", "points-a1": "2", "points-a2": "1", "points-a3": "0"})
    assert refused.status_code == 400 and "only 1 of 3" in refused.content.decode()
    saved = client.post(
        grade_url,
        {
            "chain": "amgm",
            "points-a1": "2",
            "points-a2": "1",
            "points-a3": "0",
            "justification-a2": "Half done.",
            "total": "7",
        },
    )
    assert saved.status_code == 302
    assert Label.objects.get(annotator=graders[0]).value == 3.0
    client.force_login(researcher)
    competition = project.dataset.competition
    assert client.get(f"/grading/competitions/{competition.pk}/leaderboard/").status_code == 200
    csv_page = client.get(f"/grading/competitions/{competition.pk}/leaderboard.csv")
    assert csv_page.status_code == 200 and csv_page.content.decode().startswith("rank,model,score")


def test_export_job_writes_the_matharena_proof_bundle(project, graders, api_client_for, tmp_path, settings):
    from reports import services as data_services
    from reports.exports import read_rows

    settings.EXPORT_ROOT = str(tmp_path)
    proofs_format = get_export_format("matharena-proofs")
    empty = proofs_format.preview_of(project, proofs_format.clean_options({}))
    assert (
        empty.rows == 0
        and empty.reason == "MathArena proofs (graded) reads proofs with a final score; this project has none yet."
    )
    with pytest.raises(data_services.ExportRequestError, match="Nothing to export: MathArena proofs"):
        data_services.create_export(project=project, format="matharena-proofs", enqueue=False)
    grade_as(api_client_for, project, graders[0], full_marks())
    grade_as(api_client_for, project, graders[1], full_marks())
    with pytest.raises(data_services.ExportRequestError):
        data_services.create_export(project=project, format="verifybench", enqueue=False)
    job = data_services.create_export(
        project=project, format="matharena-proofs", file_types=["jsonl", "csv", "parquet"], enqueue=False
    )
    job = data_services.run_export_now(job)
    assert job.status == "succeeded", job.error
    counted = proofs_format.preview_of(project, proofs_format.clean_options({}))
    assert counted.exact and counted.rows == job.manifest["counts"]["rows"] == 1
    # a proof bundle counts points, not correct and incorrect labels
    counts = job.manifest["counts"]
    assert (counts["by_score"], counts["points"], counts["max_points"]) == ({"7": 1}, 7, 7)
    assert counts["by_label"] == {"correct": 0, "incorrect": 0}

    columns = get_export_format("matharena-proofs").columns
    with zipfile.ZipFile(data_services.export_bundle(job)) as bundle:
        bundle.extractall(tmp_path / "out")
    card = next((tmp_path / "out").rglob("README.md")).read_text()
    assert "1 graded proof, 7 of 7 points (100.0% of the points); 7 points: 1." in card
    assert "graded against its problem's rubric" in card and "labelled correct or incorrect" not in card
    paths = sorted((tmp_path / "out").rglob("matharena_proofs.*"))
    assert [path.suffix for path in paths] == [".csv", ".jsonl", ".parquet"]
    for path in paths:
        rows = read_rows(path, columns)
        assert rows[0]["final_points"] == 7 and rows[0]["final_method"] == "mean_of_two"
        assert rows[0]["grading_details_judge_2"][0]["max_points"] == 2 and rows[0]["points_judge_3"] is None


def test_the_project_dashboard_shows_the_competitions_leaderboard(
    project, problem, graders, researcher, api_client_for, client
):
    for grader in graders[:2]:
        assert grade_as(api_client_for, project, grader, full_marks())[1].status_code == 201
    client.force_login(researcher)
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    section = html.split('data-testid="section-leaderboard"')[1].split("</section>")[0]
    assert "Leaderboard: Test Olympiad" in section
    assert "model-x" in section and "100.0" in section
    assert f"/grading/competitions/{problem.competition.pk}/leaderboard.csv" in section


def test_correctness_dashboards_have_no_leaderboard(researcher, client):
    from verifybench.models import Dataset

    dataset = Dataset.objects.create(name="plain")
    plain = annotation_services.create_project(dataset=dataset, kind="correctness")
    client.force_login(researcher)
    assert 'data-testid="section-leaderboard"' not in client.get(f"/projects/{plain.pk}/dashboard/").content.decode()
