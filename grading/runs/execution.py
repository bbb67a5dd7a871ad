"""A run's execution, and the helpers that share its chunks.

The execution (claimed by the shared runner, core.jobs.runner) counts what is already verified, plans the rest into
chunks (grading.runs.chunks) and sets the run's progress, all under the run's row lock; then it asks other worker
processes for help (`core.help_job`, one message per chunk beyond its own, up to VERIFICATION_HELPERS) and works on
the chunks itself. When nothing is left to claim it waits for the chunks other workers still hold, takes over those
whose worker died, and ends the run: failed when judge calls failed (a resume retries them), succeeded otherwise.
One worker process is therefore enough for any run, and every process added takes a share of the chunks. A helper
works only for the attempt that asked it, and stops when the run is cancelled or taken over.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core import events
from core.jobs import runner
from core.jobs.protocol import Cancelled, Superseded
from core.jobs.runner import EventDetails, Execution, JobKind

from ..models import RunChunk, VerificationRun, VerifierConfig
from . import chunks as chunk_store
from .pipeline import RunWorker
from .requests import clean_options
from .scope import COUNT_KEYS, scope_counts, scope_filter

WAIT_SECONDS = 0.1  # how often the coordinating process looks whether the helpers finished the last chunks


def stale_after() -> timedelta:
    return VERIFICATION_RUN.stale_after


def _verifier(run: VerificationRun) -> VerifierConfig:
    return VerifierConfig.objects.select_related("template", "cascade_judge__template").get(pk=run.verifier_id)


def _start_fresh(run: VerificationRun, now) -> list[str]:
    run.started_at = run.started_at or now
    return ["started_at"]


def _start_over(run: VerificationRun) -> list[str]:
    chunk_store.forget(run)
    run.redo_from, run.counts = timezone.now(), {}
    return ["redo_from", "counts"]


def _plan(execution: Execution) -> int:
    """Count what is done, plan the rest, and set the progress, under the run's lock (a helper's commit waits for
    it, so each verdict is counted once: either here or by its commit). Returns the chunks planned."""
    run = execution.job
    with transaction.atomic():
        locked = execution.owned()
        counts = scope_counts(run)
        locked.progress_total = scope_filter(run).count()
        locked.counts = counts
        locked.progress_done = sum(counts[key] for key in COUNT_KEYS if key != "failed")
        locked.heartbeat_at = timezone.now()
        locked.save(update_fields=["progress_total", "counts", "progress_done", "heartbeat_at"])
        chunk_store.plan(run, run.chunk_size, stale_after())
        planned = RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).count()
    execution.job = locked
    return planned


def _execute(execution: Execution) -> None:
    run = execution.job
    planned = _plan(execution)
    verifier = _verifier(run)
    helpers = min(max(0, planned - 1), int(getattr(settings, "VERIFICATION_HELPERS", 32)))
    runner.call_helpers(run, helpers)
    worker = RunWorker(
        run,
        verifier,
        stale_after=stale_after(),
        check=execution.check,
        delay=clean_options(run.options).get("chunk_delay", 0.0),
    )
    while True:
        worker.work()
        if not chunk_store.live_chunks(run.pk, stale_after()).exists():
            if not RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).exists():
                break
            continue  # a chunk whose worker died: take it over
        execution.check()
        time.sleep(WAIT_SECONDS)
    with transaction.atomic():
        failed = int(execution.owned().counts.get("failed", 0))
        if failed:
            raise runner.JobFailed(f"{failed} judge call(s) failed; resume the run to try them again")
        execution.succeed()


def _help(run_id: int, attempt: int) -> None:
    run = VerificationRun.objects.filter(pk=run_id).first()
    if run is None or run.attempt != attempt or run.status != VerificationRun.Status.RUNNING:
        return

    def check() -> None:
        state = VerificationRun.objects.filter(pk=run_id).values_list("attempt", "status", "cancel_requested").first()
        if state is None or state[0] != attempt or state[1] != VerificationRun.Status.RUNNING:
            raise Superseded
        if state[2]:
            raise Cancelled

    worker = RunWorker(
        run,
        _verifier(run),
        stale_after=stale_after(),
        check=check,
        delay=clean_options(run.options).get("chunk_delay", 0.0),
    )
    try:
        worker.work()
    except (Cancelled, Superseded):
        return


def execute_run(run_id: int, attempt: int | None = None) -> VerificationRun | None:
    """Run a queued (or dead) run to its end in this process; returns it as it ended. Safe to call twice."""
    return runner.run(VERIFICATION_RUN.name, run_id, attempt)


def claim(run_id: int, attempt: int | None = None):
    """Take the run for this execution: (run, token), or None when it is finished or someone else's."""
    from core.jobs import protocol

    return protocol.claim(VerificationRun, run_id, attempt, stale_after=stale_after(), on_claim=_start_fresh)


RUN_FINISHED = events.declare("run.finished", "A verification run verified every completion in its scope")
RUN_FAILED = events.declare("run.failed", "A verification run stopped on an error (resume it to go on)")


def _describe(run: VerificationRun) -> EventDetails:
    dataset_id = run.dataset_id if run.dataset_id is not None else (run.project.dataset_id if run.project else None)
    data = {
        "run": {
            "id": run.pk,
            "url": f"/api/grading/runs/{run.pk}/",
            "verifier": {"id": run.verifier_id, "name": run.verifier.name, "kind": run.verifier.kind},
            "dataset": dataset_id,
            "project": run.project_id,
            "total": run.total,
            "done": run.done,
            "counts": {str(key): int(run.counts.get(key, 0)) for key in COUNT_KEYS},
        }
    }
    return EventDetails(data, project_id=run.project_id, dataset_id=dataset_id)


VERIFICATION_RUN = runner.register(
    JobKind(
        name="verification-run",
        title="Verification run",
        noun="run",
        model=VerificationRun,
        execute=_execute,
        resumable=True,
        on_start=_start_fresh,
        reset=_start_over,
        stale_setting="VERIFICATION_STALE_SECONDS",
        workspace_paths=("dataset__workspace", "project__dataset__workspace"),
        help=_help,
        events={VerificationRun.Status.SUCCEEDED: RUN_FINISHED, VerificationRun.Status.FAILED: RUN_FAILED},
        describe=_describe,
    )
)
