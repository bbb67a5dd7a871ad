"""A competition's page: researchers reach a proofs import's problems, rubrics and proofs from the pages, and make a
grading project with its graders there; its graders then find it on their proof-grading page."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse

from annotation.models import ProjectMember
from core import roles
from grading.models import Competition
from verifybench.services import import_jsonl

pytestmark = pytest.mark.django_db

PROBLEMS = [
    {
        "problem_idx": index,
        "problem": f"Prove statement number {index}.",
        "points": 7,
        "grading_scheme": [
            {"title": f"Setup {index}", "points": 3, "desc": "Sets up."},
            {"title": f"Finish {index}", "points": 4, "desc": "Finishes."},
        ],
        "sample_solution": "A proof.",
    }
    for index in (1, 2)
]
PROOFS = [
    {"problem_idx": problem, "model_name": model, "model_config": {}, "idx_answer": run, "answer": f"Proof {run}."}
    for problem in (1, 2)
    for model in ("model-a", "model-b")
    for run in (0, 1)
]


@pytest.fixture
def competition(researcher) -> Competition:
    source = io.BytesIO("".join(json.dumps(row) + "\n" for row in [*PROBLEMS, *PROOFS]).encode())
    source.name = "olympiad.jsonl"
    import_jsonl(dataset_name="Page Olympiad", source=source, created_by=researcher)  # no format: it is recognised
    return Competition.objects.get(name="Page Olympiad")


def test_the_pages_lead_from_the_dataset_and_the_proof_home_to_the_competition(client, researcher, competition):
    client.force_login(researcher)
    dataset_page = client.get(reverse("dataset-detail", args=[competition.dataset_id])).content.decode()
    page_url = reverse("proof-competition", args=[competition.pk])
    assert page_url in dataset_page
    assert page_url in client.get(reverse("proof-home")).content.decode()
    assert page_url in client.get(reverse("proof-leaderboard", args=[competition.pk])).content.decode()

    page = client.get(page_url)
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count('data-testid="competition-problem"') == 2
    assert "Setup 1" in text and "Finish 2" in text and "version 1" in text
    assert "2 problems, 8 model proofs" in text
    assert "model-a, model-b" in text


def test_a_grading_project_is_made_on_the_page_and_its_graders_find_it(client, make_user, researcher, competition):
    graders = [make_user(roles.ANNOTATOR) for _ in range(3)]
    adjudicator = make_user(roles.ADJUDICATOR)
    client.force_login(researcher)
    first_problem = competition.problems.get(problem_idx="1")
    response = client.post(
        reverse("proof-competition", args=[competition.pk]),
        {
            "name": "Olympiad, problem 1",
            "threshold": "1.5",
            "problems": [first_problem.pk],
            "graders": [grader.pk for grader in graders],
            "adjudicators": [adjudicator.pk],
        },
    )
    assert response.status_code == 302
    project = competition.dataset.annotation_projects.get(name="Olympiad, problem 1")
    assert response["Location"] == reverse("dashboard-project", args=[project.pk])
    assert project.kind == "proof_grade" and project.agreement_threshold == 1.5
    assert project.items.count() == 4  # the four proofs of problem 1
    members = set(ProjectMember.objects.filter(project=project).values_list("user_id", "role"))
    assert {(grader.pk, ProjectMember.Role.ANNOTATOR) for grader in graders} <= members
    assert (adjudicator.pk, ProjectMember.Role.ADJUDICATOR) in members

    client.force_login(graders[0])
    home = client.get(reverse("proof-home")).content.decode()
    assert "Olympiad, problem 1" in home and reverse("proof-next", args=[project.pk]) in home
    task = client.post(reverse("proof-next", args=[project.pk]))
    assert task.status_code == 302 and "/grading/tasks/" in task["Location"]


def test_a_project_needs_problems_and_two_graders_and_says_so(client, make_user, researcher, competition):
    client.force_login(researcher)
    url = reverse("proof-competition", args=[competition.pk])
    response = client.post(url, {"name": "Empty", "threshold": "1"})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()
    lone = make_user(roles.ANNOTATOR)
    problems = list(competition.problems.values_list("pk", flat=True))
    response = client.post(url, {"name": "Alone", "threshold": "1", "problems": problems, "graders": [lone.pk]})
    assert response.status_code == 400 and "graded by two graders" in response.content.decode()
    assert not competition.dataset.annotation_projects.exists()
    # no grader yet is allowed: they are added later on the members page
    assert client.post(url, {"name": "Later", "threshold": "1", "problems": problems}).status_code == 302


def test_only_researchers_of_its_workspace_reach_the_competition(client, make_user, competition):
    from core.models import Workspace, WorkspaceMember

    outsider = make_user(roles.RESEARCHER)
    WorkspaceMember.objects.filter(user=outsider).delete()
    other = Workspace.objects.create(name="Elsewhere")
    WorkspaceMember.objects.create(workspace=other, user=outsider)
    client.force_login(outsider)
    url = reverse("proof-competition", args=[competition.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"name": "x", "threshold": "1", "problems": []}).status_code == 404
    client.force_login(make_user(roles.ANNOTATOR))
    assert client.get(url).status_code == 403


def test_a_grading_projects_dashboard_offers_no_verification_run(client, researcher, competition):
    from grading.models import VerifierConfig

    VerifierConfig.objects.create(name="rules", kind=VerifierConfig.Kind.RULE)
    client.force_login(researcher)
    problems = list(competition.problems.values_list("pk", flat=True))
    response = client.post(
        reverse("proof-competition", args=[competition.pk]), {"name": "No runs", "threshold": "1", "problems": problems}
    )
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="section-leaderboard"' in page
    assert 'data-testid="section-runs"' not in page and "Start a verification run" not in page
