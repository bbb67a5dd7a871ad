"""A new project's items are created by a background job: preparing until complete, all or nothing, restartable,
with the project's tallies equal to the ones recomputed from its items."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import aggregates, services, setup
from annotation.models import AnnotationProject, Item, ProjectMember, ProjectSetupJob
from core.jobs import runner
from tests.annotation.conftest import build_dataset
from verifybench.models import Completion

pytestmark = pytest.mark.django_db


def kept_equals_rebuilt(project) -> bool:
    rebuilt = {key: count for key, count in aggregates.computed_with_moments(project).items() if count}
    return aggregates.project_tallies(project) == rebuilt


def test_the_job_creates_every_item_and_opens_the_project(corpus, researcher):
    project, job = setup.start_project(
        dataset=corpus, kind="correctness", name="setup", created_by=researcher, seed=3, enqueue=False
    )
    assert project.preparing and project.items.count() == 0 and job.status == "queued"

    job = runner.run("project-setup", job.pk)
    project.refresh_from_db()
    completions = corpus.questions.values_list("completions__pk", flat=True)
    assert job.status == "succeeded" and not project.preparing
    assert (job.progress_done, job.progress_total, job.items_created) == (6, 6, 6)
    assert sorted(project.items.values_list("subject_id", flat=True)) == sorted(completions)
    assert kept_equals_rebuilt(project)
    assert aggregates.project_tallies(project)  # the items were counted
    for item in project.items.all():  # as services.add_items would have made them
        completion = Completion.objects.select_related("question").get(pk=item.subject_id)
        assert (item.answer_type, item.state, item.required_labels, item.label_count) == (
            completion.question.answer_type,
            "pending",
            project.labels_per_item,
            0,
        )
        assert 0 <= item.random_key < 1 and item.created_at is not None


def test_chosen_subjects_only(corpus):
    chosen = list(corpus.questions.values_list("completions__pk", flat=True)[:2])
    project, job = setup.start_project(dataset=corpus, kind="correctness", subject_ids=chosen, enqueue=False)
    runner.run("project-setup", job.pk)
    assert sorted(project.items.values_list("subject_id", flat=True)) == sorted(chosen)


def test_nobody_is_given_work_while_the_project_is_preparing(corpus, make_user):
    annotator = make_user("annotator")
    project, job = setup.start_project(dataset=corpus, kind="correctness", enqueue=False)
    services.add_member(project, annotator, ProjectMember.Role.ANNOTATOR)
    with pytest.raises(services.WorkflowError, match="being prepared"):
        services.next_task(project, annotator)
    runner.run("project-setup", job.pk)
    project.refresh_from_db()
    assert services.next_task(project, annotator) is not None


def test_a_cancel_part_way_leaves_no_item_and_a_restart_creates_each_once(corpus, monkeypatch):
    project, job = setup.start_project(dataset=corpus, kind="correctness", seed=1, enqueue=False)
    monkeypatch.setattr(setup, "CHUNK", 2)
    real_copy = services.copy_new_items
    calls = []

    def add_then_cancel(*args, **kwargs):
        created = real_copy(*args, **kwargs)
        calls.append(created)
        if len(calls) == 2:  # someone presses Cancel while the third chunk is next
            ProjectSetupJob.objects.filter(pk=job.pk).update(cancel_requested=True)
        return created

    monkeypatch.setattr(services, "copy_new_items", add_then_cancel)
    job = runner.run("project-setup", job.pk)
    project.refresh_from_db()
    assert job.status == "cancelled" and calls == [2, 2]
    assert project.preparing and project.items.count() == 0  # the chunks written were rolled back
    assert aggregates.project_tallies(project) == {}
    assert runner.can(job, "restart") and not runner.can(job, "resume")

    monkeypatch.setattr(services, "copy_new_items", real_copy)
    job = runner.restart(job, enqueue_it=False)
    assert (job.attempt, job.progress_done, job.items_created) == (2, 0, 0)
    job = runner.run("project-setup", job.pk, job.attempt)
    project.refresh_from_db()
    assert job.status == "succeeded" and not project.preparing
    assert project.items.count() == 6 == len(set(project.items.values_list("subject_id", flat=True)))
    assert kept_equals_rebuilt(project)


def test_a_setup_whose_worker_died_is_taken_over_and_finishes(corpus):
    project, job = setup.start_project(dataset=corpus, kind="correctness", enqueue=False)
    long_ago = timezone.now() - runner.get_kind("project-setup").stale_after * 2
    ProjectSetupJob.objects.filter(pk=job.pk).update(
        status="running", run_token="dead", heartbeat_at=long_ago, started_at=long_ago
    )
    report = runner.sweep(enqueue_it=False)
    assert ("project-setup", job.pk) in report.resumed
    job = runner.run("project-setup", job.pk)
    assert job.status == "succeeded" and job.attempt == 2
    assert Item.objects.filter(project=project).count() == 6
    assert kept_equals_rebuilt(AnnotationProject.objects.get(pk=project.pk))


def test_a_second_run_never_duplicates_items(corpus):
    """Even run twice over (a takeover racing a slow worker), each subject becomes one item."""
    project, job = setup.start_project(dataset=corpus, kind="correctness", enqueue=False)
    runner.run("project-setup", job.pk)
    again = ProjectSetupJob.objects.create(project=project)
    assert runner.run("project-setup", again.pk).status == "succeeded"
    assert project.items.count() == 6 and kept_equals_rebuilt(project)


def test_bad_requests_create_nothing(corpus):
    with pytest.raises(services.InvalidSubmission):
        setup.start_project(dataset=corpus, kind="proof_grade", enqueue=False)
    with pytest.raises(services.InvalidSubmission):
        setup.start_project(dataset=corpus, kind="correctness", aggregation="nonsense", enqueue=False)
    assert not AnnotationProject.objects.exists() and not ProjectSetupJob.objects.exists()


def test_the_api_answers_202_with_the_project_and_its_job(api_client_for, researcher, corpus):
    client = api_client_for(researcher)
    response = client.post(
        "/api/projects/", {"dataset": corpus.name, "kind": "correctness", "name": "api made", "seed": 4}, format="json"
    )
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["project"]["name"] == "api made" and body["project"]["preparing"] is True
    assert body["job"]["kind"] == "project-setup" and body["job"]["status"] == "queued"
    assert response["Location"] == f"/api/jobs/project-setup-{body['job']['id']}/"
    project = AnnotationProject.objects.get(pk=body["project"]["id"])
    assert project.items.count() == 0  # no item is made inside the request

    runner.run("project-setup", body["job"]["id"])
    job = client.get(response["Location"]).json()
    assert job["status"] == "succeeded" and job["progress"]["done"] == job["progress"]["total"] == 6
    assert client.get(f"/api/projects/{project.pk}/").json()["preparing"] is False
    assert project.items.count() == 6


def test_the_page_sends_to_the_setup_which_leads_to_the_project(client, researcher, corpus):
    client.force_login(researcher)
    response = client.post(
        reverse("dashboard-project-new"),
        {
            "name": "Paged",
            "dataset": corpus.pk,
            "kind": "correctness",
            "labels_per_item": 2,
            "tiebreak_annotators": 1,
            "lease_minutes": 30,
        },
    )
    project = AnnotationProject.objects.get(name="Paged")
    job = project.setup_jobs.get()
    assert response.status_code == 302 and response.url == reverse("job-detail", args=["project-setup", job.pk])
    assert project.items.count() == 0 and project.preparing

    page = client.get(response.url).content.decode()
    project_url = reverse("dashboard-project", args=[project.pk])
    assert f'data-follow="{project_url}"' in page and "Items of a new project" in page
    dashboard = client.get(project_url).content.decode()
    assert 'data-testid="project-preparing"' in dashboard

    runner.run("project-setup", job.pk)
    page = client.get(response.url).content.decode()
    assert 'data-testid="setup-items">6 items created' in page and "Open project" in page
    assert 'data-testid="project-preparing"' not in client.get(project_url).content.decode()


def test_a_larger_dataset_in_chunks_reports_its_progress(monkeypatch, researcher):
    dataset = build_dataset(questions=7, completions_per_question=3, name="chunked")
    monkeypatch.setattr(setup, "CHUNK", 4)
    beats = []
    real_beat = runner.Execution.beat

    def beat(self, **kwargs):
        beats.append(kwargs.get("done"))
        return real_beat(self, **kwargs)

    monkeypatch.setattr(runner.Execution, "beat", beat)
    project, job = setup.start_project(dataset=dataset, kind="correctness", enqueue=False)
    runner.run("project-setup", job.pk)
    assert beats == [0, 4, 8, 12, 16, 20, 21]
    assert project.items.count() == 21 and kept_equals_rebuilt(project)


def test_a_dataset_name_with_a_nul_character_is_a_400(api_client_for, researcher, corpus):
    response = api_client_for(researcher).post(
        "/api/projects/", {"dataset": "bad\x00name", "kind": "correctness"}, format="json"
    )
    assert response.status_code == 400 and "dataset" in str(response.json())  # the field is named
    assert not AnnotationProject.objects.exists()


def test_verdicts_recorded_before_the_setup_count_when_it_adds_the_items(corpus):
    from types import SimpleNamespace

    from grading import services as grading_services
    from grading.models import VerifierConfig

    verifier = VerifierConfig.objects.create(name="setup-tally-rule", kind=VerifierConfig.Kind.RULE)
    for completion in Completion.objects.filter(question__dataset=corpus):
        grading_services.record_verdict(
            completion,
            verifier,
            SimpleNamespace(status="incorrect", extracted_answer="", explanation="", reason="", raw_output=""),
        )
    project, job = setup.start_project(dataset=corpus, kind="correctness", enqueue=False)
    runner.run("project-setup", job.pk)
    assert aggregates.project_tallies(project)[f"vv|{verifier.pk}"] == 6
    assert kept_equals_rebuilt(project)
