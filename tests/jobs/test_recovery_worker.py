"""Real workers are SIGKILLed in the middle of an export and of a verification run; a fresh worker finishes both
with no action from anyone, and each result exists exactly once.

Recovery comes from the sweep (core.jobs.runner.sweep), which Celery beat runs in the workers every
JOB_SWEEP_SECONDS and every worker runs when it starts: a job whose heartbeat is older than its kind's limit is
resumed as a new attempt, so the killed worker's message, redelivered by Redis much later, claims nothing.
"""

import io
import json
import socket
import subprocess
import time
import uuid
import zipfile
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from grading import runs
from grading.models import Verdict, VerificationRun
from reports import services
from reports.exports import runner
from reports.models import ExportJob
from tests.grading.test_runs import make_dataset, rule_verifier
from tests.waiting import wait_for
from verifybench.models import Completion


def finished(model, pk):
    return model.objects.filter(pk=pk, status__in=model.FINISHED).first()


def quick_recovery(export_root) -> dict[str, str]:
    """A worker's settings for tests: exports in `export_root`, jobs stale after 2 s, a sweep every second."""
    export_root.mkdir(parents=True, exist_ok=True)
    return {
        "EXPORT_ROOT": str(export_root),
        "EXPORT_STALE_SECONDS": "2",
        "VERIFICATION_STALE_SECONDS": "2",
        "JOB_SWEEP_SECONDS": "1",
    }


@pytest.mark.worker
def test_a_killed_workers_export_and_run_finish_by_themselves_exactly_once(
    celery_worker_factory, verifybench_data, export_root
):
    env = quick_recovery(export_root)
    first, second = celery_worker_factory(env, beat=True), celery_worker_factory(env)
    dataset = make_dataset("recovery", questions=10, per_question=4)
    export = services.create_export(
        project=verifybench_data.project,
        format="verifybench-hard",
        file_types=["jsonl", "parquet"],
        options={"chunk_size": 2, "chunk_delay": 0.4},
    )
    run = runs.create_run(verifier=rule_verifier(), dataset=dataset, chunk_size=4, options={"chunk_delay": 0.4})
    wait_for(lambda: ExportJob.objects.get(pk=export.pk).progress_done >= 4, what="the export to get going")
    wait_for(lambda: VerificationRun.objects.get(pk=run.pk).progress_done >= 8, what="the run to get going")
    first.kill()
    second.kill()

    export.refresh_from_db()
    run.refresh_from_db()
    assert export.status == run.status == "running"
    assert 0 < export.progress_done < 21 and 0 < run.progress_done < 40
    assert services.export_bundle(export) is None

    celery_worker_factory(env, beat=True)  # a supervisor starts a worker again; nobody touches the jobs
    export = wait_for(lambda: finished(ExportJob, export.pk), what="the export to finish by itself", timeout=90)
    run = wait_for(lambda: finished(VerificationRun, run.pk), what="the run to finish by itself", timeout=90)

    assert export.status == "succeeded", export.error
    assert export.attempt >= 2 and "taken over" in [entry["event"] for entry in export.log]
    assert sorted(path.name for path in export_root.iterdir()) == [runner.final_name(export)]
    with zipfile.ZipFile(services.export_bundle(export)) as bundle:
        lines = bundle.read("verifybench_hard.jsonl").decode().splitlines()
        assert len(lines) == 21 and len(set(lines)) == 21

    assert run.status == "succeeded", run.error
    assert run.attempt >= 2 and run.progress_done == run.progress_total == 40
    completions = Completion.objects.filter(question__dataset=dataset).count()
    assert Verdict.objects.filter(verifier=run.verifier).count() == completions == 40


@pytest.mark.worker
def test_a_worker_busy_with_a_long_job_still_takes_over_a_dead_one(
    celery_worker_factory, verifybench_data, export_root
):
    """Beat's sweep is a message that waits behind the job a busy worker runs; the busy worker sweeps from that job's
    heartbeat thread instead, so a dead job is taken over while the long one still runs."""
    env = quick_recovery(export_root)
    celery_worker_factory(env, beat=True)
    dataset = make_dataset("busy", questions=10, per_question=4)
    run = runs.create_run(verifier=rule_verifier(), dataset=dataset, chunk_size=2, options={"chunk_delay": 1.0})
    wait_for(lambda: VerificationRun.objects.get(pk=run.pk).progress_done >= 2, what="the long run to get going")
    export = services.create_export(project=verifybench_data.project, format="verifybench-hard", enqueue=False)
    ExportJob.objects.filter(pk=export.pk).update(
        status="running", run_token="dead", started_at=timezone.now(), heartbeat_at=timezone.now() - timedelta(hours=1)
    )

    wait_for(
        lambda: ExportJob.objects.filter(pk=export.pk, attempt__gte=2).exists(),
        what="the dead export to be taken over",
        timeout=15,
    )
    assert VerificationRun.objects.get(pk=run.pk).status == "running"
    taken_over = [entry for entry in ExportJob.objects.get(pk=export.pk).log if entry["event"] == "taken over"]
    assert len(taken_over) == 1
    export = wait_for(lambda: finished(ExportJob, export.pk), what="the export to finish once the run has", timeout=90)
    assert export.status == "succeeded", export.error


# -- the default recovery bound, for every long job kind ---------------------------------------------------------------


def write_rows(path, count: int, prefix: str) -> None:
    with open(path, "w") as out:
        for index in range(count):
            row = {
                "question_id": f"{prefix}-q{index // 5}",
                "question": f"What is {index // 5} + 1?",
                "reference_answer": str(index // 5 + 1),
                "completion": f"We add one. The answer is $\\\\boxed{{{index // 5 + 1 + index % 2}}}$.",
                "model": f"model-{index % 3}",
            }
            out.write(json.dumps(row) + "\n")


def kill_when_running(celery_worker_factory, model, pk, env):
    """Start a worker, let it take the job, and kill it (SIGKILL) as soon as the job is running."""
    worker = celery_worker_factory(env)
    wait_for(
        lambda: model.objects.filter(pk=pk, status="running").exists(), what=f"{model.__name__} to start", timeout=30
    )
    worker.kill()
    assert model.objects.get(pk=pk).status == "running", f"the {model.__name__} ended before its worker was killed"
    return time.monotonic()


@pytest.mark.worker
def test_every_long_job_kind_is_taken_over_within_a_minute_by_default_and_done_once(
    celery_worker_factory, verifybench_data, export_root, tmp_path
):
    """With the default thresholds (a heartbeat every 5 s, stale after 30 s, a sweep every 10 s), an import, a
    project setup, a verification run and an export whose worker is killed while they run are all taken over within
    60 s of the kill, by a worker nobody told about them, and each result exists once."""
    from annotation import setup
    from annotation.models import AnnotationProject, Item, ProjectSetupJob
    from verifybench import imports
    from verifybench.models import Dataset, ImportJob
    from verifybench.services import import_jsonl

    export_root.mkdir(parents=True, exist_ok=True)
    env = {"EXPORT_ROOT": str(export_root), "IMPORT_UPLOAD_DIR": str(tmp_path / "uploads")}
    source = tmp_path / "big.jsonl"
    write_rows(source, 60_000, "setup")
    report = import_jsonl(dataset_name="setup-source", source=str(source), fmt="mathlabel")
    setup_source = Dataset.objects.get(pk=report.dataset_id)

    killed = {}
    upload = tmp_path / "upload.jsonl"
    write_rows(upload, 60_000, "imported")
    with override_settings(IMPORT_UPLOAD_DIR=tmp_path / "uploads"), open(upload, "rb") as uploaded:
        job = imports.create_import(uploaded=uploaded, dataset_name="imported", fmt="mathlabel")
    killed["import"] = kill_when_running(celery_worker_factory, ImportJob, job.pk, env)
    project, setup_job = setup.start_project(dataset=setup_source, kind="correctness", name="taken over", seed=3)
    killed["setup"] = kill_when_running(celery_worker_factory, ProjectSetupJob, setup_job.pk, env)
    run = runs.create_run(
        verifier=rule_verifier(), dataset=setup_source, models=["model-0"], chunk_size=500, options={"chunk_delay": 0.1}
    )
    killed["run"] = kill_when_running(celery_worker_factory, VerificationRun, run.pk, env)
    export = services.create_export(
        project=verifybench_data.project, format="verifybench-hard", options={"chunk_size": 2, "chunk_delay": 0.4}
    )
    killed["export"] = kill_when_running(celery_worker_factory, ExportJob, export.pk, env)

    celery_worker_factory(env, beat=True)  # a supervisor starts a worker; nobody touches the jobs
    jobs = {
        "import": (ImportJob, job.pk),
        "setup": (ProjectSetupJob, setup_job.pk),
        "run": (VerificationRun, run.pk),
        "export": (ExportJob, export.pk),
    }
    for name, (model, pk) in jobs.items():
        wait_for(
            lambda model=model, pk=pk: model.objects.filter(pk=pk, attempt__gte=2).exists(),
            what=f"the {name} to be taken over",
            timeout=max(1.0, 60 - (time.monotonic() - killed[name])),
        )
    for name, (model, pk) in jobs.items():
        ended = wait_for(lambda model=model, pk=pk: finished(model, pk), what=f"the {name} to finish", timeout=180)
        assert ended.status == "succeeded", (name, ended.error)
        assert "taken over" in [entry["event"] for entry in ended.log], name

    imported = Dataset.objects.get(name="imported")
    assert Completion.objects.filter(question__dataset=imported).count() == 60_000
    assert ImportJob.objects.count() == 1
    project = AnnotationProject.objects.get(pk=project.pk)
    items = Item.objects.filter(project=project)
    assert not project.preparing and items.count() == items.values("subject_id").distinct().count() == 60_000
    run = VerificationRun.objects.get(pk=run.pk)
    assert Verdict.objects.filter(verifier=run.verifier).count() == run.progress_done == 20_000
    assert sorted(path.name for path in export_root.iterdir()) == [
        runner.final_name(ExportJob.objects.get(pk=export.pk))
    ]


@pytest.mark.worker
def test_an_import_sent_while_the_broker_is_down_runs_once_it_is_back(
    transactional_db, tmp_path, researcher, api_client_for
):
    """A private Redis the test stops: the upload is answered 202 and its job kept, not a 500; once Redis is back,
    the sweep of a worker sends the job's message, and the file is imported exactly once."""
    from django.test import override_settings as settings_override

    from config.celery import app
    from tests.conftest import WorkerProcess, _forget_broker_connections
    from verifybench.models import Dataset, ImportJob

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    broker = f"redis://127.0.0.1:{port}/0"

    def redis():
        return subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    queue = f"outage-{uuid.uuid4().hex[:8]}"
    saved = {key: app.conf.get(key) for key in ("task_always_eager", "broker_url", "task_default_queue")}
    app.conf.update(
        task_always_eager=False,
        broker_url=broker,
        task_default_queue=queue,
        broker_connection_retry=False,
        broker_transport_options={"max_retries": 1},
    )
    _forget_broker_connections(app)
    server = redis()
    worker = None
    try:
        wait_for(lambda: _answers(port), what="the private Redis to start", timeout=10)
        server.terminate()
        server.wait(timeout=10)
        row = {"question_id": "q1", "question": "1+1?", "reference_answer": "2", "completion": "2", "model": "m"}
        data = io.BytesIO((json.dumps(row) + "\n").encode())
        data.name = "outage.jsonl"
        with settings_override(IMPORT_UPLOAD_DIR=tmp_path):
            response = api_client_for(researcher).post(
                "/api/datasets/import/", {"file": data, "dataset": "after-outage"}, format="multipart"
            )
        assert response.status_code == 202, response.content
        job = ImportJob.objects.get()
        assert job.status == "queued" and job.dispatched_at is None

        server = redis()
        wait_for(lambda: _answers(port), what="the private Redis to come back", timeout=10)
        worker = WorkerProcess(
            queue,
            {"CELERY_BROKER_URL": broker, "IMPORT_UPLOAD_DIR": str(tmp_path), "JOB_SWEEP_SECONDS": "1"},
            beat=True,
            name=queue,
        ).start()
        job = wait_for(lambda: finished(ImportJob, job.pk), what="the import to run after the outage", timeout=60)
        assert job.status == "succeeded", job.error
        assert ImportJob.objects.count() == 1 and Dataset.objects.filter(name="after-outage").count() == 1
        assert Completion.objects.filter(question__dataset__name="after-outage").count() == 1
    finally:
        if worker is not None:
            worker.stop()
        server.terminate()
        app.conf.update(saved)
        _forget_broker_connections(app)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False
