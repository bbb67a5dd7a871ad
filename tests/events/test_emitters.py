"""Each app tells core.events when its work is done: imports (verifybench), runs (grading), exports (reports), and
adjudications and project completion (annotation)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import completion, services
from annotation.models import Item, ProjectCompletion
from core.jobs import runner
from grading import runs
from reports import services as export_services
from tests.grading.test_runs import make_dataset, rule_verifier
from tests.jobs.test_runner import make_dead
from verifybench import imports

pytestmark = pytest.mark.django_db

ROW = {"question_id": "e-1", "question": "1+1?", "reference_answer": "2", "completion": "\\boxed{2}", "model": "m"}


def names(heard) -> list[str]:
    return [event.name for event in heard]


def label_next(project, users, values) -> Item:
    """The first user claims the next item and each user labels it (a started item is served first)."""
    item = None
    for user, value in zip(users, values):
        task = services.next_task(project, user)
        assert item is None or task.item_id == item.pk
        item = task.item
        services.submit_label(task, user, value=value)
    item.refresh_from_db()
    return item


def test_an_import_announces_that_it_finished_or_failed(heard, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    upload = SimpleUploadedFile("rows.jsonl", (json.dumps(ROW) + "\n").encode())
    with django_capture_on_commit_callbacks(execute=True):
        job = imports.create_import(uploaded=upload, dataset_name="events", enqueue=False)
        runner.run("import", job.pk, job.attempt)
    job.refresh_from_db()
    assert names(heard) == ["import.finished"]
    event = heard[0]
    assert event.dataset_id == job.dataset_id and event.project_id is None
    assert event.data["job"]["kind"] == "import" and event.data["job"]["status"] == "succeeded"
    assert event.data["import"]["dataset"] == {"id": job.dataset_id, "name": "events"}
    assert event.data["import"]["counts"]["completions_created"] == 1
    json.dumps(event.data)  # JSON-ready

    broken = SimpleUploadedFile("broken.jsonl", b'{"question_id": "e-2"}\n{not json\n')
    with django_capture_on_commit_callbacks(execute=True):
        failed = imports.create_import(uploaded=broken, dataset_name="events", enqueue=False)
        runner.run("import", failed.pk, failed.attempt)
    assert names(heard) == ["import.finished", "import.failed"]
    assert heard[1].dataset_id == job.dataset_id  # an existing dataset, though nothing was written to it
    assert heard[1].data["job"]["error"] and heard[1].data["import"]["counts"]["error_count"] >= 1


def test_a_run_announces_its_end_and_a_run_failed_by_the_sweep_its_failure(heard, django_capture_on_commit_callbacks):
    dataset = make_dataset("events-runs", questions=2, per_question=2)
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.create_run(verifier=rule_verifier(), dataset=dataset, enqueue=False)
        runner.run("verification-run", run.pk, run.attempt)
    assert names(heard) == ["run.finished"]
    assert heard[0].dataset_id == dataset.pk
    assert heard[0].data["run"]["done"] == 4 and sum(heard[0].data["run"]["counts"].values()) == 4

    again = runs.create_run(verifier=rule_verifier("rules-2"), dataset=dataset, enqueue=False)
    again = make_dead(again)
    type(again).objects.filter(pk=again.pk).update(attempt=runner.MAX_AUTOMATIC_ATTEMPTS)
    with django_capture_on_commit_callbacks(execute=True):
        report = runner.sweep(enqueue_it=False)
    assert ("verification-run", again.pk) in report.failed
    assert names(heard) == ["run.finished", "run.failed"]
    assert "worker died" in heard[1].data["job"]["error"]


def test_an_export_announces_that_it_is_ready(heard, verifybench_data, export_root, django_capture_on_commit_callbacks):
    project = verifybench_data.project
    with django_capture_on_commit_callbacks(execute=True):
        job = export_services.create_export(project=project, format="verifybench-hard", enqueue=False)
        runner.run("export", job.pk, job.attempt)
    assert names(heard) == ["export.ready"]
    export = heard[0].data["export"]
    assert heard[0].project_id == project.pk and heard[0].dataset_id == project.dataset_id
    assert export["download_url"] == f"/api/exports/{job.pk}/download/" and export["bundle_sha256"]


def test_a_project_is_announced_complete_once_when_its_last_item_closes_and_again_after_a_reopening(
    heard, make_project, make_user, django_capture_on_commit_callbacks
):
    project, people, judges = make_project(annotators=2, adjudicators=1, tiebreak_annotators=0)
    items = list(Item.objects.filter(project=project).order_by("id"))
    with django_capture_on_commit_callbacks(execute=True):
        for _ in items[:-1]:
            label_next(project, people, [True, True])
    assert names(heard) == []
    with django_capture_on_commit_callbacks(execute=True):
        last = label_next(project, people, [True, False])  # a disagreement: waits for adjudication
    assert names(heard) == [] and last.state == "needs_adjudication"
    with django_capture_on_commit_callbacks(execute=True):
        services.adjudicate(last, judges[0], value=True, rationale="the boxed answer matches")
    assert names(heard) == ["item.adjudicated", "project.completed"]
    adjudicated, completed = heard
    assert adjudicated.data["item"]["id"] == last.pk and adjudicated.data["adjudicator"] == judges[0].username
    assert adjudicated.data["rationale"] == "the boxed answer matches" and adjudicated.data["item"]["final_value"]
    assert completed.project_id == project.pk
    assert completed.data["items"] == {"resolved": len(items), "excluded": 0}
    assert completion.check(project.pk) is False  # recorded once: a second look announces nothing

    researcher = make_user("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        services.bulk_apply(
            project, Item.objects.filter(pk=items[0].pk), "reopen", actor=researcher, rationale="check again"
        )
    assert not ProjectCompletion.objects.filter(project=project).exists()
    extra = make_user("annotator")
    services.add_member(project, extra, "annotator")
    with django_capture_on_commit_callbacks(execute=True):
        label_next(project, [extra], [True])
    assert names(heard) == ["item.adjudicated", "project.completed", "project.completed"]


def test_excluding_the_last_open_items_completes_a_project(
    heard, make_project, make_user, django_capture_on_commit_callbacks
):
    project, people, _ = make_project(annotators=2)
    items = list(Item.objects.filter(project=project).order_by("id"))
    with django_capture_on_commit_callbacks(execute=True):
        labeled = label_next(project, people, [True, True])
        services.bulk_apply(
            project,
            Item.objects.filter(project=project).exclude(pk=labeled.pk),
            "exclude",
            actor=make_user("researcher"),
            rationale="out of scope",
        )
    assert names(heard) == ["project.completed"]
    assert heard[0].data["items"] == {"resolved": 1, "excluded": len(items) - 1}
