import pytest

from annotation import services, workflow
from annotation.models import ProjectMember
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer


@pytest.fixture
def dataset(db):
    dataset = Dataset.objects.create(name="flow")
    for q in range(3):
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{q}",
            text=f"What is {q}+1?",
            answer_type="A1",
            answer_class="A",
            content_hash="x",
        )
        ReferenceAnswer.objects.create(question=question, final_answer=str(q + 1))
        for c in range(2):
            Completion.objects.create(
                question=question, external_id=f"c{c}", model_name="m", text=f"\\boxed{{{q + c}}}", content_hash="y"
            )
    return dataset


def test_two_agree_then_disagree_then_tiebreak(dataset, make_user, api_client_for):
    annotators = [make_user("annotator") for _ in range(3)]
    project = services.create_project(dataset=dataset, kind="correctness", seed=1)
    for user in annotators:
        services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
    client_a, client_b, client_c = (api_client_for(u) for u in annotators)
    response = client_a.post(f"/api/projects/{project.pk}/next-task/")
    assert response.status_code == 200, response.content
    task = response.json()
    assert "model_name" not in task["completion"]
    submit = client_a.post(f"/api/tasks/{task['task_id']}/submit/", {"value": True}, format="json")
    assert submit.status_code == 201, submit.content
    again = client_a.post(f"/api/tasks/{task['task_id']}/submit/", {"value": True}, format="json")
    assert again.status_code == 200
    task_b = client_b.post(f"/api/projects/{project.pk}/next-task/").json()
    assert task_b["item_id"] == task["item_id"]
    assert client_b.post(f"/api/tasks/{task_b['task_id']}/submit/", {"value": False}, format="json").status_code == 201
    item = project.items.get(pk=task["item_id"])
    assert item.state == workflow.NEEDS_TIEBREAK
    task_c = client_c.post(f"/api/projects/{project.pk}/next-task/").json()
    assert task_c["item_id"] == item.pk
    assert client_c.post(f"/api/tasks/{task_c['task_id']}/submit/", {"value": False}, format="json").status_code == 201
    item.refresh_from_db()
    assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_MAJORITY, False)
    assert client_a.get(f"/api/tasks/{task_b['task_id']}/").status_code == 404


def test_progress_reports_agreement(dataset, make_user, api_client_for, researcher):
    annotators = [make_user("annotator") for _ in range(2)]
    project = services.create_project(dataset=dataset, kind="correctness", seed=3)
    for user in annotators:
        services.add_member(project, user)
    for user in annotators:
        while (task := services.next_task(project, user)) is not None:
            services.submit_label(task, user, value=task.item.subject.text.endswith("1}"), seconds_spent=4.0)
    body = api_client_for(researcher).get(f"/api/projects/{project.pk}/progress/").json()
    assert body["by_state"]["resolved"] == 6
    assert body["agreement"]["raw_agreement"] == 1.0
    assert body["agreement"]["items_compared"] == 6
    assert {row["labels"] for row in body["annotators"]} == {6}
