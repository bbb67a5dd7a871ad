"""Real workers are SIGKILLed in the middle of an export and of a verification run; a fresh worker finishes both
with no action from anyone, and each result exists exactly once.

Recovery comes from the sweep (core.jobs.runner.sweep), which Celery beat runs in the workers every
JOB_SWEEP_SECONDS and every worker runs when it starts: a job whose heartbeat is older than its kind's limit is
resumed as a new attempt, so the killed worker's message, redelivered by Redis much later, claims nothing.
"""

import zipfile

import pytest

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


@pytest.mark.worker
def test_a_killed_workers_export_and_run_finish_by_themselves_exactly_once(
    celery_worker_factory, verifybench_data, export_root
):
    export_root.mkdir(parents=True, exist_ok=True)
    env = {
        "EXPORT_ROOT": str(export_root),
        "EXPORT_STALE_SECONDS": "2",
        "VERIFICATION_STALE_SECONDS": "2",
        "JOB_SWEEP_SECONDS": "1",
    }
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
