"""Running jobs: cancellation between chunks, failures, stale files of killed runs, restarts, late messages."""

from datetime import timedelta

import pytest
from django.utils import timezone

from reports import services
from reports.exports import ExportFormat, ExportPlan, builders, register_export_format, runner, unregister_export_format
from reports.models import ExportJob


@pytest.fixture
def temporary_format():
    names = []

    def register(name, plan):
        names.append(name)
        return register_export_format(
            ExportFormat(
                name=name,
                title=name,
                columns=builders.VERIFYBENCH_COLUMNS,
                plan=plan,
            )
        )

    yield register
    for name in names:
        unregister_export_format(name)


def job_files(root):
    return sorted(path.name for path in root.iterdir()) if root.exists() else []


def test_cancel_between_chunks_ends_cancelled_without_a_bundle(verifybench_data, export_root, temporary_format):
    def plan(project, options):
        natural = builders.plan_natural(project, options)

        def chunks():
            for number, chunk in enumerate(natural.chunks):
                if number == 1:
                    services.cancel_export(ExportJob.objects.get(project=project))
                yield chunk

        return ExportPlan(total=natural.total, chunks=chunks())

    temporary_format("cancel-test", plan)
    job = services.create_export(
        project=verifybench_data.project,
        format="cancel-test",
        file_types=["jsonl", "parquet"],
        options={"chunk_size": 3},
        enqueue=False,
    )
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.CANCELLED
    assert job.cancel_requested and job.bundle_path == "" and job.manifest is None
    assert 0 < job.progress_done < job.progress_total
    assert job_files(export_root) == []
    assert services.export_bundle(job) is None


def test_a_queued_job_is_cancelled_at_once_and_never_runs(verifybench_data, export_root):
    job = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    job = services.cancel_export(job)
    assert job.status == ExportJob.Status.CANCELLED
    assert services.run_export_now(job).status == ExportJob.Status.CANCELLED
    with pytest.raises(services.ExportRequestError, match="already ended"):
        services.cancel_export(job)
    assert job_files(export_root) == []


def test_a_failing_builder_marks_the_job_failed_and_leaves_no_file(verifybench_data, export_root, temporary_format):
    def plan(project, options):
        natural = builders.plan_natural(project, options)

        def chunks():
            for number, chunk in enumerate(natural.chunks):
                if number == 2:
                    raise RuntimeError("the database went away")
                yield chunk

        return ExportPlan(total=natural.total, chunks=chunks())

    temporary_format("failing-test", plan)
    job = services.create_export(
        project=verifybench_data.project,
        format="failing-test",
        file_types=["csv", "parquet"],
        options={"chunk_size": 2},
        enqueue=False,
    )
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.FAILED
    assert "RuntimeError: the database went away" in job.error
    assert job_files(export_root) == []
    assert services.export_bundle(job) is None


def test_a_rerun_of_a_killed_job_removes_its_stale_files_first(verifybench_data, export_root):
    job = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    export_root.mkdir(parents=True, exist_ok=True)
    stale_work = export_root / f".export-{job.pk}-deadbeef.work"
    stale_work.mkdir()
    (stale_work / "verifybench_hard.jsonl").write_text('{"half": ')
    (export_root / f".export-{job.pk}-deadbeef.zip.part").write_bytes(b"PK\x03\x04")
    (export_root / runner.final_name(job)).write_bytes(b"renamed but never marked succeeded")
    other = export_root / f".export-{job.pk + 1000}-cafe.zip.part"
    other.write_bytes(b"another job's file")
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.RUNNING, run_token="deadbeef", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.SUCCEEDED
    assert job_files(export_root) == sorted([runner.final_name(job), other.name])
    assert services.export_bundle(job).read_bytes()[:2] == b"PK"
    assert job.manifest["counts"]["rows"] == 21


def test_a_message_for_a_live_run_or_an_old_attempt_is_ignored(verifybench_data, export_root):
    job = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.RUNNING, run_token="live", heartbeat_at=timezone.now()
    )
    assert runner.run_job(job.pk).status == ExportJob.Status.RUNNING
    assert ExportJob.objects.get(pk=job.pk).run_token == "live"
    with pytest.raises(services.ExportRequestError, match="is running"):
        services.restart_export(job)
    job = services.restart_export(job, force=True)
    assert (job.status, job.attempt) == (ExportJob.Status.QUEUED, 2)
    assert runner.run_job(job.pk, attempt=1).status == ExportJob.Status.QUEUED
    assert runner.run_job(job.pk, attempt=2).status == ExportJob.Status.SUCCEEDED
    with pytest.raises(services.ExportRequestError, match="has succeeded"):
        services.restart_export(job)


def test_a_superseded_run_stops_without_touching_the_job(verifybench_data, export_root, temporary_format):
    def plan(project, options):
        natural = builders.plan_natural(project, options)

        def chunks():
            for number, chunk in enumerate(natural.chunks):
                if number == 1:
                    ExportJob.objects.filter(project=project).update(run_token="someone-else")
                yield chunk

        return ExportPlan(total=natural.total, chunks=chunks())

    temporary_format("superseded-test", plan)
    job = services.create_export(
        project=verifybench_data.project, format="superseded-test", options={"chunk_size": 4}, enqueue=False
    )
    job = services.run_export_now(job)
    assert (job.status, job.run_token) == (ExportJob.Status.RUNNING, "someone-else")
    assert job_files(export_root) == []


def test_a_failed_job_can_be_restarted(verifybench_data, export_root):
    job = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status=ExportJob.Status.FAILED, error="boom")
    job = services.restart_export(ExportJob.objects.get(pk=job.pk))
    assert (job.status, job.error, job.attempt) == (ExportJob.Status.QUEUED, "", 2)
    assert services.run_export_now(job).status == ExportJob.Status.SUCCEEDED
