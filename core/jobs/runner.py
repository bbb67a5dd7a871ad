"""One runner for every background job: claim, heartbeat, progress, cancel, resume, restart, and recovery.

A job kind (verification run, export, import) is a concrete `BackgroundJob` model plus an `execute` function,
registered here by the app that owns it (`register`). Everything else is shared:

- `run(kind, job_id, attempt)` claims the job for one execution (core.jobs.protocol), keeps its heartbeat fresh from a
  thread while `execute` works (so a long chunk or a large zip never looks dead), and records how it ended. `execute`
  reports progress with `Execution.beat` and marks success itself, in the transaction that makes its result
  visible (an export's rename, a run's last chunk, an import's commit).
- `cancel` stops a queued job at once and a running one at its next check; `resume` queues a stopped job again as a
  new attempt that goes on from what is done (kinds that cannot go on start over); `restart` starts over.
- `sweep` takes over jobs whose heartbeat went stale (their worker died) and queues again jobs whose message was
  lost; workers run it when they start and every `JOB_SWEEP_SECONDS` (Celery beat), and a worker process busy with a
  job runs it from that job's heartbeat thread as often (a beat message waits behind long jobs in a busy worker, so
  dead jobs would wait for a live one to end). A takeover re-reads the job under lock, so two sweeps never take
  over the same death twice. A job taken over too many times is failed instead, so a job that kills its worker
  cannot loop forever.
- A kind that names `events` has its ends told to `core.events` subscribers (webhooks): a success once the
  transaction that marks it commits, a failure once it is recorded, with the common fields of the job and what the
  kind's `describe` adds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from .. import events
from . import protocol
from .protocol import Cancelled, Superseded

logger = logging.getLogger(__name__)

MAX_AUTOMATIC_ATTEMPTS = 5
# A queued job's message is sent right after its transaction commits; the sweep sends it only if it is still unsent
# this long after (so it never races the first send).
SEND_GRACE_SECONDS = 5.0


class JobRequestError(ValueError):
    """A job action that cannot be carried out now; the message says why."""


class JobFailed(Exception):
    """The job ended without its result; the message is shown as the job's error."""


@dataclass(frozen=True)
class EventDetails:
    """What a kind adds to the event of a job's end: its own data, and the project, dataset and workspace it
    concerns."""

    data: dict[str, Any]
    project_id: int | None = None
    dataset_id: int | None = None
    workspace_id: int | None = None


@dataclass(frozen=True)
class JobKind:
    name: str  # "verification-run", "export", "import"
    title: str  # "Verification run"
    model: Any  # a concrete BackgroundJob model
    execute: Callable[[Execution], None]
    # Whether `resume` goes on from what is done (a run skips verified completions); otherwise it starts over.
    resumable: bool = False
    # Sets the kind's own fields when an execution starts (beyond status, token and heartbeat); returns their names.
    on_start: Callable[[Any, Any], list[str]] = lambda job, now: []
    # Resets the kind's own fields (and files) before a start from scratch; returns their names.
    reset: Callable[[Any], list[str]] = lambda job: []
    stale_setting: str = "JOB_STALE_SECONDS"
    # A kind whose work splits into parts that other worker processes may take (a run's chunks): `help(job_id,
    # attempt)` does parts of the job's current attempt until none is left; the execution asks for helpers with
    # `call_helpers`. A helper that finds the job finished, or on another attempt, does nothing.
    help: Callable[[int, int], None] | None = None
    # Lookups from the job model to the workspace it belongs to (any of them); researchers see the jobs of their
    # workspaces, and a kind that names none is seen by admins only.
    workspace_paths: tuple[str, ...] = ()
    noun: str = ""  # how messages name one job ("run 12"); the title in lower case when empty
    extra: dict = field(default_factory=dict)
    # The declared core.events name announced when a job ends in a status ("succeeded", "failed"); none when absent.
    events: Mapping[str, str] = field(default_factory=dict)
    describe: Callable[[Any], EventDetails] = lambda job: EventDetails({})

    @property
    def stale_after(self) -> timedelta:
        seconds = getattr(settings, self.stale_setting, None) or getattr(settings, "JOB_STALE_SECONDS", None)
        return timedelta(seconds=float(seconds or 120))

    def __post_init__(self):
        if not self.noun:
            object.__setattr__(self, "noun", self.title.lower())


_KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    _KINDS[kind.name] = kind
    return kind


def _time(value) -> str | None:
    return value.isoformat() if value else None


def announce(kind: JobKind, job) -> None:
    """Tell core.events subscribers how the job ended, if its kind names an event for that (after commit)."""
    name = kind.events.get(job.status)
    if not name:
        return
    details = kind.describe(job)
    common = {
        "kind": kind.name,
        "id": job.pk,
        "status": job.status,
        "attempt": job.attempt,
        "error": job.error,
        "progress": {"done": job.progress_done, "total": job.progress_total},
        "created_by": job.created_by.get_username() if job.created_by_id else None,
        "created_at": _time(job.created_at),
        "started_at": _time(job.started_at),
        "finished_at": _time(job.finished_at),
    }
    events.emit(
        name,
        {"job": common, **details.data},
        project_id=details.project_id,
        dataset_id=details.dataset_id,
        workspace_id=details.workspace_id,
    )


def visible_jobs(kind: JobKind, user):
    """The jobs of a kind that `user` may see and act on: those of their workspaces (every one for an admin)."""
    from django.db.models import Q

    from core import workspaces

    jobs = kind.model.objects.all()
    if workspaces.visible_ids(user) is None:
        return jobs
    condition = Q(pk__in=[])
    for path in kind.workspace_paths:
        condition |= workspaces.condition(user, path)
    return jobs.filter(condition)


def get_kind(name: str) -> JobKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise JobRequestError(f"unknown job kind {name!r}; known kinds: {', '.join(_KINDS)}") from None


def kinds() -> list[JobKind]:
    return list(_KINDS.values())


def kind_of(job) -> JobKind:
    for kind in _KINDS.values():
        if isinstance(job, kind.model):
            return kind
    raise JobRequestError(f"{type(job).__name__} is not a registered job kind")


# -- one execution ----------------------------------------------------------------------------------------------------


class Execution:
    """What `execute` works with: the job as claimed, progress reports, and the ownership checks."""

    def __init__(self, kind: JobKind, job, token: str):
        self.kind, self.job, self.token = kind, job, token
        self.model = kind.model
        self._progress: dict[str, int] = {}
        self._lost = threading.Event()
        self._done = threading.Event()
        self._heart: threading.Thread | None = None

    # progress and checks

    def beat(self, *, done: int | None = None, total: int | None = None, **fields) -> None:
        """Record progress (and any of the kind's own fields) with the heartbeat; raise when taken over or cancelled.

        Inside a long transaction (an import), the row is not written here: the heartbeat thread writes the progress
        on its own connection so that others see it move."""
        if done is not None:
            self._progress["progress_done"] = done
        if total is not None:
            self._progress["progress_total"] = total
        if self._lost.is_set():
            raise Superseded
        if connection.in_atomic_block and self._heart is not None:
            return
        protocol.beat(self.model, self.job.pk, self.token, **self._progress, **fields)

    def check(self) -> None:
        """Raise Cancelled when someone asked the job to stop, Superseded when another execution owns it."""
        if self._lost.is_set():
            raise Superseded
        state = self.model.objects.filter(pk=self.job.pk).values_list("run_token", "cancel_requested").first()
        if state is None or state[0] != self.token:
            raise Superseded
        if state[1]:
            raise Cancelled

    def owned(self, *, honour_cancel: bool = True):
        """The job row locked in the current transaction, while this execution still owns it."""
        return protocol.owned(self.model, self.job.pk, self.token, honour_cancel=honour_cancel)

    def succeed(self, **fields) -> None:
        """Mark the job succeeded (inside the caller's transaction, when it has one)."""
        with transaction.atomic():
            locked = self.owned(honour_cancel=False)
            locked.status, locked.finished_at = self.model.Status.SUCCEEDED, timezone.now()
            locked.heartbeat_at = locked.finished_at
            for name, value in {**self._progress, **fields}.items():
                setattr(locked, name, value)
            locked.note("succeeded")
            locked.save()
            self.job = locked
            announce(self.kind, locked)

    # the heartbeat thread

    def start_heart(self) -> None:
        # Another connection cannot see rows of an open transaction (e.g. a test's), so no thread then.
        if connection.in_atomic_block:
            return
        self._heart = threading.Thread(
            target=self._beat_forever, name=f"heartbeat-{self.kind.name}-{self.job.pk}", daemon=True
        )
        self._heart.start()

    def stop_heart(self) -> None:
        self._done.set()
        if self._heart is not None:
            self._heart.join(timeout=10)

    def _beat_forever(self) -> None:
        interval = max(0.2, self.kind.stale_after.total_seconds() / 6)
        try:
            while not self._done.wait(interval):
                try:
                    written = self.model.objects.filter(pk=self.job.pk, run_token=self.token).update(
                        heartbeat_at=timezone.now(), **self._progress
                    )
                except Exception:  # a database hiccup: the next beat tries again
                    logger.warning("%s %s: heartbeat failed", self.kind.name, self.job.pk, exc_info=True)
                    close_old_connections()
                    continue
                if not written:
                    self._lost.set()
                    return
                # after this job's own heartbeat, so a slow sweep never makes the job itself look stale
                _sweep_from_a_busy_worker()
        finally:
            connection.close()


def _note(kind: JobKind, job_id: int, event: str, **details) -> None:
    with transaction.atomic():
        job = kind.model.objects.select_for_update().filter(pk=job_id).first()
        if job is not None:
            job.save(update_fields=job.note(event, **details))


def _fail(kind: JobKind, job_id: int, token: str, error: str) -> None:
    if protocol.finish(kind.model, job_id, token, kind.model.Status.FAILED, error):
        _note(kind, job_id, "failed")
        _announce_stored(kind, job_id)


def _announce_stored(kind: JobKind, job_id: int) -> None:
    job = kind.model.objects.filter(pk=job_id).select_related("created_by").first()
    if job is not None:
        announce(kind, job)


def run(kind_name: str, job_id: int, attempt: int | None = None):
    """Run a waiting job (or one whose execution died) in this process to its end; return it as it ended.

    Safe to call twice, late, or for a job someone else owns: those calls claim nothing and return the job."""
    kind = get_kind(kind_name)
    claimed = protocol.claim(kind.model, job_id, attempt, stale_after=kind.stale_after, on_claim=kind.on_start)
    if claimed is None:
        return kind.model.objects.filter(pk=job_id).first()
    job, token = claimed
    _note(kind, job.pk, "started")
    execution = Execution(kind, job, token)
    execution.start_heart()
    try:
        kind.execute(execution)
    except Cancelled:
        protocol.finish(kind.model, job.pk, token, kind.model.Status.CANCELLED)
        _note(kind, job.pk, "cancelled")
    except Superseded:
        logger.info("%s %s: execution %s was superseded", kind.name, job.pk, token)
    except JobFailed as exc:
        _fail(kind, job.pk, token, str(exc))
    except Exception as exc:
        logger.exception("%s %s failed", kind.name, job.pk)
        _fail(kind, job.pk, token, f"{type(exc).__name__}: {exc}")
    finally:
        execution.stop_heart()
    return kind.model.objects.get(pk=job.pk)


# -- requests ---------------------------------------------------------------------------------------------------------


Dispatcher = Callable[[str, int, int], None]
_dispatch: list[Dispatcher] = []


def set_dispatcher(dispatch: Dispatcher) -> None:
    """How queued jobs reach a worker: `dispatch(kind_name, job_id, attempt)`; core.tasks sets the Celery one."""
    _dispatch[:] = [dispatch]


_help_dispatch: list[Dispatcher] = []


def set_helper_dispatcher(dispatch: Dispatcher) -> None:
    """How requests for help reach other workers: `dispatch(kind_name, job_id, attempt)`; core.tasks sets it."""
    _help_dispatch[:] = [dispatch]


def call_helpers(job, count: int) -> int:
    """Ask up to `count` other worker processes to help with the job's current attempt; returns how many were asked
    (none when no dispatcher is set, e.g. when tasks run in the caller)."""
    if not _help_dispatch or count <= 0:
        return 0
    kind = kind_of(job)
    if kind.help is None:
        raise RuntimeError(f"{kind.name} jobs cannot be helped")
    for _ in range(count):
        _help_dispatch[0](kind.name, job.pk, job.attempt)
    return count


def help_with(kind_name: str, job_id: int, attempt: int) -> None:
    """Do parts of a job as a helper (in a worker, from a help request)."""
    kind = get_kind(kind_name)
    if kind.help is None:
        return
    try:
        kind.help(job_id, attempt)
    finally:
        close_old_connections()


def publish(kind: JobKind, job_id: int, attempt: int) -> bool:
    """Send the job's message to the broker and note it; a broker that cannot be reached leaves the job stored and
    unsent (its `dispatched_at` empty), and the sweep sends it once the broker answers. Returns whether it was sent."""
    try:
        _dispatch[0](kind.name, job_id, attempt)
    except Exception:
        logger.warning(
            "%s %s: its message could not reach the broker; it stays queued and is sent again by the next sweep",
            kind.name,
            job_id,
            exc_info=True,
        )
        return False
    kind.model.objects.filter(pk=job_id, attempt=attempt, status=kind.model.Status.QUEUED).update(
        dispatched_at=timezone.now()
    )
    return True


def enqueue(job) -> None:
    """Queue the job's current attempt once the surrounding transaction commits. The job row is the outbox: its
    message is sent after the commit, and one the broker did not take is sent by the sweep."""
    if not _dispatch:
        raise RuntimeError("no job dispatcher is set; core.tasks sets it when the core app is ready")
    kind = kind_of(job)
    job_id, attempt = job.pk, job.attempt
    transaction.on_commit(lambda: publish(kind, job_id, attempt))


def cancel(job):
    """Ask a job to stop: a queued job is cancelled at once, a running one stops at its next check."""
    kind = kind_of(job)
    return protocol.request_cancel(kind.model, job.pk, JobRequestError, kind.noun)


def _again(job, *, force: bool, from_scratch: bool, enqueue_it: bool, reason: str = "", dead_before: Any = None):
    kind = kind_of(job)
    with transaction.atomic():
        job = kind.model.objects.select_for_update().get(pk=job.pk)
        if dead_before is not None and not (
            job.status == kind.model.Status.RUNNING and job.heartbeat_at is not None and job.heartbeat_at < dead_before
        ):
            raise JobRequestError(f"{kind.noun} {job.pk} was taken over or heard from meanwhile")
        if job.status == kind.model.Status.RUNNING and not force and protocol.is_alive(job, kind.stale_after):
            raise JobRequestError(f"{kind.noun} {job.pk} is running; cancel it, or wait until it has stopped")
        if job.status == kind.model.Status.QUEUED and not force:
            raise JobRequestError(f"{kind.noun} {job.pk} is already queued")
        if from_scratch and job.status == kind.model.Status.SUCCEEDED and not kind.resumable:
            raise JobRequestError(f"{kind.noun} {job.pk} has succeeded; start a new one instead")
        fields = ["attempt", "status", "cancel_requested", "run_token", "error", "finished_at", "dispatched_at"]
        job.attempt += 1
        job.status, job.cancel_requested, job.run_token = kind.model.Status.QUEUED, False, ""
        job.dispatched_at = None
        # the heartbeat dates the queueing, so the sweep only queues it again if nobody starts it in time
        job.error, job.finished_at, job.heartbeat_at = "", None, timezone.now()
        fields.append("heartbeat_at")
        event = "taken over" if reason else ("restarted" if from_scratch or not kind.resumable else "resumed")
        fields += job.note(event, **({"reason": reason} if reason else {}))
        if from_scratch or not kind.resumable:
            job.progress_done = 0
            fields += ["progress_done", *kind.reset(job)]
        job.save(update_fields=list(dict.fromkeys(fields)))
        if enqueue_it:
            enqueue(job)
    return job


def resume(job, *, force: bool = False, enqueue_it: bool = True, reason: str = "", dead_before: Any = None):
    """Queue a stopped (failed, cancelled, dead) job again as a new attempt. A resumable kind goes on from what is
    done; the others start over. `force` takes over a job that looks alive (its worker is known to be gone);
    `dead_before` takes it over only if it is still running with no heartbeat since then."""
    return _again(job, force=force, from_scratch=False, enqueue_it=enqueue_it, reason=reason, dead_before=dead_before)


def restart(job, *, force: bool = False, enqueue_it: bool = True):
    """Run a job again from the start as a new attempt."""
    return _again(job, force=force, from_scratch=True, enqueue_it=enqueue_it)


def can(job, action: str) -> bool:
    """Whether an action is offered for the job as it stands (the request may still be refused under its lock)."""
    kind = kind_of(job)
    active = job.status in (kind.model.Status.QUEUED, kind.model.Status.RUNNING)
    stale = job.status == kind.model.Status.RUNNING and not protocol.is_alive(job, kind.stale_after)
    if action == "cancel":
        return active
    if action == "resume":
        return kind.resumable and (job.status in (kind.model.Status.FAILED, kind.model.Status.CANCELLED) or stale)
    if action == "restart":
        return (
            job.status in (kind.model.Status.FAILED, kind.model.Status.CANCELLED)
            or stale
            or (kind.resumable and job.status == kind.model.Status.SUCCEEDED)
        )
    return False


# -- recovery ---------------------------------------------------------------------------------------------------------


@dataclass
class SweepReport:
    resumed: list[tuple[str, int]] = field(default_factory=list)
    requeued: list[tuple[str, int]] = field(default_factory=list)
    failed: list[tuple[str, int]] = field(default_factory=list)


def sweep(*, enqueue_it: bool = True) -> SweepReport:
    """Take over running jobs whose heartbeat went stale and queue again queued jobs that nobody started."""
    report = SweepReport()
    now = timezone.now()
    grace = timedelta(seconds=SEND_GRACE_SECONDS)
    for kind in kinds():
        Status = kind.model.Status
        stale_before = now - kind.stale_after
        dead = kind.model.objects.filter(status=Status.RUNNING, heartbeat_at__lt=stale_before)
        for job in dead:
            if job.attempt >= MAX_AUTOMATIC_ATTEMPTS:
                failed = kind.model.objects.filter(pk=job.pk, status=Status.RUNNING, heartbeat_at__lt=stale_before)
                if failed.update(
                    status=Status.FAILED,
                    finished_at=now,
                    run_token="",
                    error=(
                        f"stopped after {job.attempt} attempts whose worker died; restart it once the cause is fixed"
                    ),
                ):
                    _note(kind, job.pk, "failed", reason="its worker kept dying")
                    _announce_stored(kind, job.pk)
                    report.failed.append((kind.name, job.pk))
                continue
            try:
                resume(
                    job,
                    force=True,
                    enqueue_it=enqueue_it,
                    reason=f"its worker stopped reporting for over {kind.stale_after.total_seconds():g} s",
                    dead_before=stale_before,
                )
            except JobRequestError:
                continue
            report.resumed.append((kind.name, job.pk))
        # The outbox: jobs whose message never reached the broker (it was down) are sent now; jobs whose message
        # was sent but that nobody started for a long time (a broker that lost its queue) are sent again.
        unsent = kind.model.objects.filter(status=Status.QUEUED, dispatched_at__isnull=True, created_at__lt=now - grace)
        lost_before = now - timedelta(seconds=float(getattr(settings, "JOB_REQUEUE_SECONDS", 600)))
        lost = kind.model.objects.filter(status=Status.QUEUED, dispatched_at__lt=lost_before)
        for job in list(unsent) + list(lost):
            if enqueue_it and not publish(kind, job.pk, job.attempt):
                continue
            report.requeued.append((kind.name, job.pk))
    if report.resumed or report.requeued or report.failed:
        logger.warning(
            "job sweep: resumed %s, queued again %s, failed %s", report.resumed, report.requeued, report.failed
        )
    return report


_busy_sweeps = threading.Event()
_last_busy_sweep = [0.0]
_busy_sweep_lock = threading.Lock()


def sweep_while_busy() -> None:
    """Let this process (a worker's) sweep from its jobs' heartbeat threads; inherited by processes it forks."""
    _busy_sweeps.set()


def _sweep_from_a_busy_worker() -> None:
    """At most one sweep per process every `JOB_SWEEP_SECONDS`, from whichever heartbeat thread comes first."""
    period = float(getattr(settings, "JOB_SWEEP_SECONDS", 10))
    if not _busy_sweeps.is_set() or period <= 0 or not _busy_sweep_lock.acquire(blocking=False):
        return
    try:
        if time.monotonic() - _last_busy_sweep[0] < period:
            return
        _last_busy_sweep[0] = time.monotonic()
        sweep()
    except Exception:  # the database or the broker is away: beat's sweep or the next one here tries again
        logger.warning("job sweep from a busy worker failed", exc_info=True)
        close_old_connections()
    finally:
        _busy_sweep_lock.release()
