"""Celery tasks of the grading app."""
from celery import shared_task

from . import runs


@shared_task(name="grading.run_verification")
def run_verification(run_id: int, attempt: int | None = None) -> str | None:
    """Verify a VerificationRun's scope chunk by chunk. Safe to deliver twice (acks_late redelivers a message whose
    worker died): a finished run, a run owned by a live execution or a message of an earlier attempt is left alone,
    and a redelivery after the owner died goes on from the completions that still lack a verdict."""
    run = runs.execute_run(run_id, attempt)
    return run.status if run is not None else None
