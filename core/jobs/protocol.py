"""One execution at a time for long-running job rows (verification runs, exports, imports).

Celery may deliver a task twice, late, or again after a worker died. An execution therefore claims the row with
a fresh `run_token` before working and checks the token whenever it writes: a late message of an earlier
attempt, or a duplicate while the owner's heartbeat is fresh, claims nothing; a run left "running" by a dead
worker can be taken over once its heartbeat is older than the model's staleness limit.

The model needs: `status` (with `Status.RUNNING` and `Status.CANCELLED`), `is_finished`, `attempt`,
`run_token`, `heartbeat_at`, `cancel_requested`, `error`, `finished_at`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone


class Superseded(Exception):
    """Another execution owns the job now; this one must leave it alone."""


class Cancelled(Exception):
    """Someone asked for the job to stop."""


def claim(
    model: Any,
    job_id: int,
    attempt: int | None,
    *,
    stale_after: timedelta,
    on_claim: Callable[[Any, Any], list[str]],
):
    """Take the job for this execution and return (job, token), or None when it is not ours to run.

    `on_claim(job, now)` sets the model's own fields for a fresh start and returns their names.
    """
    now = timezone.now()
    with transaction.atomic():
        job = model.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished:
            return None
        if attempt is not None and attempt != job.attempt:
            return None  # a message of an earlier attempt, delivered late
        if job.status == model.Status.RUNNING and job.heartbeat_at and now - job.heartbeat_at < stale_after:
            return None  # a duplicate delivery while the owning execution is alive
        if job.cancel_requested:
            job.status, job.finished_at = model.Status.CANCELLED, now
            job.save(update_fields=["status", "finished_at"])
            return None
        token = uuid.uuid4().hex
        job.status, job.run_token, job.heartbeat_at, job.error = model.Status.RUNNING, token, now, ""
        job.save(update_fields=["status", "run_token", "heartbeat_at", "error", *on_claim(job, now)])
    return job, token


def owned(model: Any, job_id: int, token: str, *, honour_cancel: bool = True):
    """The job row locked for the current transaction, if this execution still owns it."""
    locked = model.objects.select_for_update().get(pk=job_id)
    if locked.run_token != token:
        raise Superseded
    if honour_cancel and locked.cancel_requested:
        raise Cancelled
    return locked


def beat(model: Any, job_id: int, token: str, **fields) -> None:
    """Record progress and the heartbeat; stop if the job was taken over or cancelled."""
    mine = model.objects.filter(pk=job_id, run_token=token)
    if not mine.update(heartbeat_at=timezone.now(), **fields):
        raise Superseded
    if mine.values_list("cancel_requested", flat=True).first():
        raise Cancelled


def finish(model: Any, job_id: int, token: str, status: str, error: str = "") -> bool:
    """End the execution that holds `token`; False when another execution owns the job now."""
    now = timezone.now()
    written = model.objects.filter(pk=job_id, run_token=token).update(
        status=status, error=error[:10_000], finished_at=now, heartbeat_at=now
    )
    return bool(written)


def request_cancel(model: Any, job_id: int, refused: type[Exception], noun: str):
    """Ask a job to stop: a queued job is cancelled at once, a running one stops at its next check."""
    with transaction.atomic():
        job = model.objects.select_for_update().get(pk=job_id)
        if job.is_finished:
            raise refused(f"{noun} {job.pk} has already ended ({job.status})")
        job.cancel_requested = True
        fields = ["cancel_requested"]
        if job.status == model.Status.QUEUED:
            job.status, job.finished_at = model.Status.CANCELLED, timezone.now()
            fields += ["status", "finished_at"]
        job.save(update_fields=fields)
    return job


def is_alive(job, stale_after: timedelta) -> bool:
    """Whether a running job's owner has reported recently enough to be left alone."""
    return bool(job.heartbeat_at) and timezone.now() - job.heartbeat_at < stale_after
