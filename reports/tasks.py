"""Celery tasks of the reports."""
from celery import shared_task

from .exports import runner


@shared_task(name="reports.run_export")
def run_export(job_id: int, attempt: int | None = None) -> str | None:
    """Build and publish the bundle of an ExportJob. Safe to deliver twice: a finished job, a job owned by a live
    run or a message of an earlier attempt is left alone."""
    job = runner.run_job(job_id, attempt)
    return job.status if job is not None else None
