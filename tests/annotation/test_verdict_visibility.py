"""Automatic verdicts reach annotators only when the project says so; adjudicators see them unless hidden from all."""

import pytest

from annotation import services
from annotation.models import AnnotationProject, ProjectMember
from grading.models import Verdict, VerifierConfig
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

SECRET_VERIFIER = "verifier-named-zebra"


@pytest.fixture
def project(db, adjudicator):
    dataset = Dataset.objects.create(name="verdicts")
    question = Question.objects.create(dataset=dataset, external_id="q", text="What is 2+2?", content_hash="h")
    ReferenceAnswer.objects.create(question=question, final_answer="4")
    completion = Completion.objects.create(
        question=question, external_id="c", model_name="m", text="It is $\\boxed{4}$.", content_hash="h"
    )
    verifier = VerifierConfig.objects.create(name=SECRET_VERIFIER, kind="rule")
    Verdict.objects.create(completion=completion, verifier=verifier, status="correct", extracted_answer="4")
    project = services.create_project(dataset=dataset, kind="correctness", seed=1)
    services.add_member(project, adjudicator, ProjectMember.Role.ADJUDICATOR)
    return project


def claim(project, user, client):
    services.add_member(project, user)
    response = client.post(f"/api/projects/{project.pk}/next-task/")
    assert response.status_code == 200
    return response.json()


@pytest.mark.django_db
def test_by_default_annotators_never_see_verdicts_and_adjudicators_do(
    project, annotator, adjudicator, api_client_for, client
):
    assert project.verdict_visibility == AnnotationProject.VerdictVisibility.ADJUDICATORS
    task = claim(project, annotator, api_client_for(annotator))
    assert task["verdicts"] == [] and SECRET_VERIFIER not in str(task)
    client.force_login(annotator)
    page = client.get(f"/projects/{project.pk}/label/")
    assert page.status_code == 200 and SECRET_VERIFIER not in page.content.decode()
    review = api_client_for(adjudicator).get(f"/api/items/{task['item_id']}/").json()
    assert [verdict["verifier"] for verdict in review["verdicts"]] == [SECRET_VERIFIER]


@pytest.mark.django_db
def test_projects_can_show_verdicts_to_annotators(project, annotator, api_client_for):
    project.verdict_visibility = AnnotationProject.VerdictVisibility.EVERYONE
    project.save()
    task = claim(project, annotator, api_client_for(annotator))
    assert [(v["verifier"], v["status"]) for v in task["verdicts"]] == [(SECRET_VERIFIER, "correct")]


@pytest.mark.django_db
def test_projects_can_hide_verdicts_from_everyone(project, annotator, adjudicator, api_client_for):
    project.verdict_visibility = AnnotationProject.VerdictVisibility.NOBODY
    project.save()
    task = claim(project, annotator, api_client_for(annotator))
    assert task["verdicts"] == []
    assert api_client_for(adjudicator).get(f"/api/items/{task['item_id']}/").json()["verdicts"] == []
