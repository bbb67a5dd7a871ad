"""Projects created in the Django admin get their items, as those created through the API do."""

import pytest

from annotation.models import AnnotationProject
from verifybench.models import Completion, Dataset, Question


@pytest.fixture
def dataset(db):
    dataset = Dataset.objects.create(name="admin-made")
    for q in range(3):
        question = Question.objects.create(dataset=dataset, external_id=f"q{q}", text="?", content_hash="h")
        for c in range(2):
            Completion.objects.create(
                question=question, external_id=f"c{c}", model_name="m", text="x", content_hash="h"
            )
    return dataset


def form_data(dataset, kind):
    return {
        "name": f"admin {kind}",
        "description": "",
        "dataset": dataset.pk,
        "kind": kind,
        "labels_per_item": 2,
        "tiebreak_annotators": 1,
        "agreement_threshold": 0,
        "verdict_visibility": "adjudicators",
        "lease_minutes": 30,
        "gold_rate": 0,
        "is_active": "on",
        "memberships-TOTAL_FORMS": 0,
        "memberships-INITIAL_FORMS": 0,
        "memberships-MIN_NUM_FORMS": 0,
        "memberships-MAX_NUM_FORMS": 1000,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("kind, expected_items", [("correctness", 6), ("answer_type", 3)])
def test_admin_created_project_gets_its_items(
    admin_client, dataset, kind, expected_items, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as queued:
        response = admin_client.post("/admin/annotation/annotationproject/add/", form_data(dataset, kind))
    assert response.status_code == 302, response.content.decode()[:2000]
    project = AnnotationProject.objects.get(name=f"admin {kind}")
    assert project.preparing and project.items.count() == 0  # the items come from the setup job
    for callback in queued:  # the job runs (eagerly) as it would once the request's transaction commits
        callback()
    project.refresh_from_db()
    assert not project.preparing and project.items.count() == expected_items
    assert project.created_by is not None


@pytest.mark.django_db
def test_admin_refuses_proof_projects_and_kind_changes(admin_client, dataset):
    response = admin_client.post("/admin/annotation/annotationproject/add/", form_data(dataset, "proof_grade"))
    assert response.status_code == 200 and "Proof-grading projects are created" in response.content.decode()
    assert not AnnotationProject.objects.exists()
    admin_client.post("/admin/annotation/annotationproject/add/", form_data(dataset, "correctness"))
    project = AnnotationProject.objects.get()
    changed = admin_client.post(
        f"/admin/annotation/annotationproject/{project.pk}/change/",
        {**form_data(dataset, "answer_type"), "name": "admin correctness"},
    )
    assert changed.status_code == 200 and "cannot change" in changed.content.decode()
    assert AnnotationProject.objects.get().kind == "correctness"
