"""The shared job runner: resume and restart for every kind, the sweep that takes over dead jobs, one API shape and
one set of pages for every kind."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core.jobs import runner
from grading import runs
from grading.models import Verdict
from reports import services
from reports.models import ExportJob
from tests.grading.test_runs import make_dataset, rule_verifier


def run_now(job):
    return runner.run(runner.kind_of(job).name, job.pk, job.attempt)


def make_dead(job, *, minutes: int = 30):
    """What a worker killed mid-job leaves: running, owned by a token nobody holds, a heartbeat long ago."""
    type(job).objects.filter(pk=job.pk).update(
        status="running",
        run_token="dead",
        started_at=timezone.now(),
        heartbeat_at=timezone.now() - timedelta(minutes=minutes),
    )
    job.refresh_from_db()
    return job


@pytest.mark.django_db
def test_a_restarted_run_verifies_its_whole_scope_again_and_a_resumed_one_only_what_is_missing():
    dataset = make_dataset("restart", questions=2, per_question=2)
    run = run_now(runs.create_run(verifier=rule_verifier(), dataset=dataset, enqueue=False))
    first = dict(Verdict.objects.filter(verifier=run.verifier).values_list("completion_id", "updated_at"))
    assert run.status == "succeeded" and run.done == 4

    resumed = run_now(runs.resume_run(run, enqueue=False))
    assert resumed.attempt == 2 and resumed.done == 4
    assert dict(Verdict.objects.filter(verifier=run.verifier).values_list("completion_id", "updated_at")) == first

    restarted = runs.restart_run(resumed, enqueue=False)
    assert restarted.redo_from is not None and restarted.progress_done == 0 and restarted.counts == {}
    restarted = run_now(restarted)
    again = dict(Verdict.objects.filter(verifier=run.verifier).values_list("completion_id", "updated_at"))
    assert restarted.status == "succeeded" and restarted.attempt == 3 and restarted.done == 4
    assert set(again) == set(first) and all(again[pk] > first[pk] for pk in first)
    assert Verdict.objects.filter(verifier=run.verifier).count() == 4


@pytest.mark.django_db
def test_an_export_cannot_go_on_midway_so_resuming_it_starts_over(verifybench_data, export_root):
    job = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    job = make_dead(job)
    resumed = runner.resume(job, enqueue_it=False)
    assert (resumed.status, resumed.attempt, resumed.progress_done) == ("queued", 2, 0)
    assert run_now(resumed).status == "succeeded"
    with pytest.raises(runner.JobRequestError, match="has succeeded"):
        runner.restart(resumed)


@pytest.mark.django_db
def test_the_sweep_takes_over_dead_jobs_of_every_kind_and_leaves_live_ones(
    verifybench_data, export_root, django_capture_on_commit_callbacks
):
    dataset = make_dataset("sweep", questions=1, per_question=2)
    dead_run = make_dead(runs.create_run(verifier=rule_verifier(), dataset=dataset, enqueue=False))
    dead_export = make_dead(
        services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    )
    live_export = services.create_export(project=verifybench_data.project, format="mumath", enqueue=False)
    ExportJob.objects.filter(pk=live_export.pk).update(status="running", run_token="alive", heartbeat_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):  # eager: the queued attempts run at once
        report = runner.sweep()
    assert sorted(report.resumed) == sorted([("verification-run", dead_run.pk), ("export", dead_export.pk)])
    dead_run.refresh_from_db()
    dead_export.refresh_from_db()
    assert (dead_run.status, dead_run.attempt) == ("succeeded", 2)
    assert [entry["event"] for entry in dead_run.log] == ["taken over", "started", "succeeded"]
    assert (dead_export.status, dead_export.attempt) == ("succeeded", 2)
    assert ExportJob.objects.get(pk=live_export.pk).run_token == "alive"


@pytest.mark.django_db
def test_the_sweep_queues_again_a_job_nobody_started_and_fails_one_that_keeps_killing_its_worker(
    verifybench_data, export_root
):
    forgotten = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    ExportJob.objects.filter(pk=forgotten.pk).update(created_at=timezone.now() - timedelta(hours=1))
    doomed = make_dead(services.create_export(project=verifybench_data.project, format="mumath", enqueue=False))
    ExportJob.objects.filter(pk=doomed.pk).update(attempt=runner.MAX_AUTOMATIC_ATTEMPTS)
    report = runner.sweep(enqueue_it=False)
    assert report.requeued == [("export", forgotten.pk)] and report.failed == [("export", doomed.pk)]
    doomed.refresh_from_db()
    assert doomed.status == "failed" and "worker died" in doomed.error


@pytest.mark.django_db
def test_two_sweeps_that_saw_the_same_dead_job_take_it_over_once(verifybench_data, export_root):
    dead = make_dead(services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False))
    seen_dead_before = timezone.now() - timedelta(seconds=30)
    taken = runner.resume(dead, force=True, enqueue_it=False, reason="dead", dead_before=seen_dead_before)
    assert (taken.status, taken.attempt) == ("queued", 2)
    with pytest.raises(runner.JobRequestError, match="taken over or heard from"):
        runner.resume(dead, force=True, enqueue_it=False, reason="dead", dead_before=seen_dead_before)
    ExportJob.objects.filter(pk=dead.pk).update(status="running", run_token="alive", heartbeat_at=timezone.now())
    with pytest.raises(runner.JobRequestError, match="taken over or heard from"):
        runner.resume(dead, force=True, enqueue_it=False, reason="dead", dead_before=seen_dead_before)
    assert ExportJob.objects.get(pk=dead.pk).attempt == 2


@pytest.mark.django_db
def test_one_api_for_jobs_of_every_kind(researcher, annotator, api_client_for, verifybench_data, export_root):
    dataset = make_dataset("api", questions=1, per_question=2)
    run = run_now(runs.create_run(verifier=rule_verifier(), dataset=dataset, enqueue=False))
    export = make_dead(
        services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    )
    client = api_client_for(researcher)
    listed = client.get("/api/jobs/").json()
    assert {(job["kind"], job["id"]) for job in listed} == {("verification-run", run.pk), ("export", export.pk)}
    assert all(set(job) >= {"status", "attempt", "progress", "actions", "error"} for job in listed)
    assert client.get("/api/jobs/?kind=export").json()[0]["actions"] == {
        "cancel": True,
        "resume": False,
        "restart": True,
    }

    restarted = client.post(f"/api/jobs/export-{export.pk}/restart/", {}, format="json")
    assert restarted.status_code == 200 and restarted.json()["attempt"] == 2
    assert client.post(f"/api/jobs/export-{export.pk}/restart/", {}, format="json").status_code == 409
    assert client.get(f"/api/exports/{export.pk}/").json()["job"]["status"] in ("queued", "succeeded")
    assert client.post(f"/api/grading/runs/{run.pk}/restart/", {}, format="json").json()["attempt"] == 2
    assert client.get("/api/jobs/nonsense-1/").status_code == 404
    assert client.get(f"/api/jobs/export-{export.pk + 99}/").status_code == 404
    assert api_client_for(annotator).get("/api/jobs/").status_code == 403


@pytest.mark.django_db
def test_a_dead_export_is_restarted_from_its_page(
    client, researcher, annotator, verifybench_data, export_root, django_capture_on_commit_callbacks
):
    export = make_dead(
        services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    )
    client.force_login(researcher)
    page = client.get(reverse("job-detail", args=["export", export.pk])).content.decode()
    assert f'action="{reverse("job-action", args=["export", export.pk, "restart"])}"' in page
    listing = client.get(reverse("jobs") + "?kind=export").content.decode()
    assert f'id="job-export-{export.pk}"' in listing
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("job-action", args=["export", export.pk, "restart"]))
    assert response.status_code == 302
    export.refresh_from_db()
    assert (export.status, export.attempt) == ("succeeded", 2)
    client.force_login(annotator)
    assert client.get(reverse("jobs")).status_code == 404
    assert client.post(reverse("job-action", args=["export", export.pk, "restart"])).status_code == 404
