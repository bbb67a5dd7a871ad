"""Celery tasks of the shared core: run any registered background job, and recover jobs whose worker died."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_init, worker_ready

from core.jobs import runner


@shared_task(name="core.run_job")
def run_job(kind: str, job_id: int, attempt: int | None = None) -> str | None:
    """Run one job of a registered kind. Safe to deliver twice, late, or after the worker died (acks_late): a finished
    job, a job owned by a live execution or a message of an earlier attempt is left alone."""
    job = runner.run(kind, job_id, attempt)
    return job.status if job is not None else None


@shared_task(name="core.help_job")
def help_job(kind: str, job_id: int, attempt: int) -> None:
    """Do parts of a running job that splits its work (a verification run's chunks) beside its own execution."""
    runner.help_with(kind, job_id, attempt)


@shared_task(name="core.sweep_stale_jobs")
def sweep_stale_jobs() -> dict:
    report = runner.sweep()
    return {"resumed": report.resumed, "requeued": report.requeued, "failed": report.failed}


@worker_ready.connect
def _sweep_when_a_worker_starts(**kwargs) -> None:
    sweep_stale_jobs.delay()


@worker_init.connect
def _sweep_while_busy(**kwargs) -> None:
    # Beat's sweep is a message: in a worker whose processes all run long jobs it waits for one of them to end.
    runner.sweep_while_busy()


runner.set_dispatcher(lambda kind, job_id, attempt: run_job.delay(kind, job_id, attempt))


def _ask_for_help(kind: str, job_id: int, attempt: int) -> None:
    # Tasks that run in the caller (eager mode) have no other worker to help: the execution does every part itself.
    if not help_job.app.conf.task_always_eager:
        help_job.delay(kind, job_id, attempt)


runner.set_helper_dispatcher(_ask_for_help)


# Names under which earlier versions queued their jobs; messages already in a broker still run.
@shared_task(name="grading.run_verification")
def run_verification(run_id: int, attempt: int | None = None) -> str | None:
    return run_job("verification-run", run_id, attempt)


@shared_task(name="verifybench.run_export")
def run_export(job_id: int, attempt: int | None = None) -> str | None:
    return run_job("export", job_id, attempt)
