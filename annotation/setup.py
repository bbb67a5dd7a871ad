"""A new project's items, created in the background: a job kind of core.jobs.runner ("project-setup").

`start_project` creates the project at once, marked `preparing` (nobody is given work from it), with a job that
creates its items. The job writes every item (with COPY), the project's tallies (aggregates.items_added) and the
end of `preparing` in one transaction, in chunks that report progress (items created / total) and honour a cancel
between them. It is all or nothing: a killed worker or a cancel leaves no item behind, and a restart (or the sweep's
takeover) starts over; `copy_new_items` skips subjects the project already has (under the project's row lock), so
even a second pass cannot duplicate one.
"""

from __future__ import annotations

import random

from django.db import transaction

from core.jobs import runner
from core.jobs.runner import Execution, JobKind

from . import services
from .models import AnnotationProject, ProjectSetupJob

CHUNK = 10000


def start_project(
    *,
    dataset,
    kind: str,
    name: str = "",
    created_by=None,
    subject_ids: list[int] | None = None,
    seed: int | None = None,
    enqueue: bool = True,
    **settings,
) -> tuple[AnnotationProject, ProjectSetupJob]:
    """Create a project (preparing) and queue the job that creates its items; returns both. The caller may add
    members and guidelines in the same transaction: the job is queued when it commits."""
    services.check_project_request(kind, settings)
    with transaction.atomic():
        project = AnnotationProject.objects.create(
            dataset=dataset,
            kind=kind,
            name=name or f"{dataset.name} {kind}",
            created_by=created_by,
            preparing=True,
            **settings,
        )
        job = queue_setup(project, created_by=created_by, subject_ids=subject_ids, seed=seed, enqueue=enqueue)
    return project, job


def queue_setup(
    project: AnnotationProject,
    *,
    created_by=None,
    subject_ids: list[int] | None = None,
    seed: int | None = None,
    enqueue: bool = True,
) -> ProjectSetupJob:
    """Queue the job that creates the items of a project saved with `preparing` set (the admin's add form)."""
    job = ProjectSetupJob.objects.create(
        project=project,
        created_by=created_by,
        seed=seed,
        subject_ids=None if subject_ids is None else [int(pk) for pk in subject_ids],
    )
    if enqueue:
        runner.enqueue(job)
    return job


def active_setup(project: AnnotationProject) -> ProjectSetupJob | None:
    """The project's latest setup job, when the project is still preparing."""
    if not project.preparing:
        return None
    return project.setup_jobs.order_by("-id").first()


def _start(job: ProjectSetupJob, now) -> list[str]:
    job.started_at, job.progress_done, job.progress_total = now, 0, 0
    return ["started_at", "progress_done", "progress_total"]


def _reset(job: ProjectSetupJob) -> list[str]:
    job.items_created = 0
    return ["items_created"]


def _execute(execution: Execution) -> None:
    job: ProjectSetupJob = execution.job
    project = AnnotationProject.objects.get(pk=job.project_id)
    subject_ids_of = project.subject_kind.subject_ids
    if subject_ids_of is None:
        raise runner.JobFailed(f"{project.get_kind_display()} projects are not made from a dataset's rows")
    ids = subject_ids_of(project.dataset_id, job.subject_ids)
    total = len(ids)
    execution.beat(done=0, total=total)
    rng = random.Random(job.seed)
    created = 0
    with transaction.atomic():
        # Lock the project: a second execution (a takeover racing a slow worker) waits here, then finds the items.
        AnnotationProject.objects.select_for_update().filter(pk=project.pk).first()
        for start in range(0, total, CHUNK):
            execution.check()
            created += services.copy_new_items(project, subject_ids=ids[start : start + CHUNK], rng=rng)
            execution.beat(done=min(start + CHUNK, total), total=total)
        execution.check()
        AnnotationProject.objects.filter(pk=project.pk).update(preparing=False)
        execution.succeed(progress_done=total, progress_total=total, items_created=created)


SETUP = runner.register(
    JobKind(
        name="project-setup",
        title="Project setup",
        model=ProjectSetupJob,
        execute=_execute,
        resumable=False,
        on_start=_start,
        reset=_reset,
        noun="setup",
        workspace_paths=("project__dataset__workspace",),
    )
)
