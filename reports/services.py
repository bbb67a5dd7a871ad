"""Writes and business rules of the reports: the lifecycle of export jobs."""

from __future__ import annotations

from core.jobs import runner as jobs

from .exports import (
    InvalidExportOptions,
    UnknownExportFormat,
    clean_file_types,
    get_export_format,
    nothing_to_export,
    runner,
)
from .models import ExportJob


class ExportRequestError(jobs.JobRequestError):
    """An export request that cannot be carried out; the message says why."""


def create_export(
    *,
    project,
    format: str,  # noqa: A002
    file_types=None,
    options=None,
    created_by=None,
    enqueue: bool = True,
):
    """Validate an export request, create its ExportJob and queue it once the transaction commits.

    A request whose format would write no row from the project's current final labels is refused with the reason,
    and no job is made (the format's preview counts the rows with aggregate queries)."""
    try:
        export_format = get_export_format(format)
        cleaned_types = clean_file_types(file_types)
        cleaned_options = export_format.clean_options(options)
    except (UnknownExportFormat, InvalidExportOptions) as exc:
        raise ExportRequestError(exc.args[0]) from None
    if project.kind != export_format.project_kind:
        raise ExportRequestError(
            f"{format} exports need a {export_format.project_kind} project; project {project.pk} is {project.kind}"
        )
    preview = export_format.preview_of(project, cleaned_options)
    if preview is not None and preview.rows == 0:
        raise ExportRequestError(nothing_to_export(preview.reason))
    job = ExportJob.objects.create(
        project=project,
        format=export_format.name,
        file_types=cleaned_types,
        options=dict(options or {}),
        created_by=created_by,
    )
    if enqueue:
        _enqueue_export(job)
    return job


def _enqueue_export(job) -> None:
    jobs.enqueue(job)


def cancel_export(job):
    """Ask a job to stop. A queued job is cancelled at once; a running one stops after its current chunk."""
    try:
        return jobs.cancel(job)
    except jobs.JobRequestError as exc:
        raise ExportRequestError(str(exc)) from None


def restart_export(job, *, force: bool = False, enqueue: bool = True):
    """Run a failed, cancelled or dead job again from the start, as a new attempt.

    A running job counts as dead when its heartbeat is older than EXPORT_STALE_SECONDS; `force` restarts it anyway
    (for a caller who knows its worker is gone). The new run deletes every file the earlier runs left.
    """
    try:
        return jobs.restart(job, force=force, enqueue_it=enqueue)
    except jobs.JobRequestError as exc:
        raise ExportRequestError(str(exc)) from None


def run_export_now(job):
    """Run an export job in this process (the export command); returns the job as it ended."""
    return runner.run_job(job.pk)


def export_bundle(job):
    """The path of a succeeded job's zip, or None while there is none."""
    return runner.bundle_file(job)
