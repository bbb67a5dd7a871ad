"""Imports as background jobs: an upload is stored, then imported by a worker with progress, cancel and restart.

An import runs `services.import_jsonl` in one transaction: it is all or nothing, so a killed or cancelled import has
written nothing, and resuming it starts over from the stored upload. The report (line by line) is kept on the job;
a file of skipped lines (`skip_invalid`) is kept beside the upload and served by the job's API, never by its path.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction

from core import events, workspaces
from core.jobs import runner
from core.jobs.runner import EventDetails, Execution, JobKind

from . import services, tasks
from .importing.sources import FILE_TYPES
from .models import Dataset, ImportJob

logger = logging.getLogger(__name__)

IMPORT_FINISHED = events.declare("import.finished", "An import ended and its rows are in the dataset")
IMPORT_FAILED = events.declare("import.failed", "An import was rejected or failed; nothing was written")
# The counts of an import's report that an event carries (the full report is at /api/imports/{id}/).
REPORT_COUNTS = (
    "lines",
    "questions_created",
    "questions_unchanged",
    "completions_created",
    "completions_unchanged",
    "references_created",
    "prior_labels_created",
    "prior_labels_unchanged",
    "rejected_lines",
    "error_count",
    "conflict_count",
    "unlabeled_completions",
)


class UploadTooLarge(ValueError):
    pass


def upload_dir() -> Path:
    root = Path(settings.IMPORT_UPLOAD_DIR)
    root.mkdir(parents=True, exist_ok=True)
    return root


def create_import(
    *,
    uploaded,
    dataset_name: str,
    fmt: str = "",
    file_type: str = "",
    skip_invalid: bool = False,
    created_by=None,
    workspace=None,
    enqueue: bool = True,
) -> ImportJob:
    """Store an uploaded file (a file object with a name) and queue its import into the workspace's dataset of that
    name (created there when new; refused when the name belongs to another workspace)."""
    if not dataset_name.strip():
        raise services.ImportRequestError("a dataset name is required")
    workspace = workspace or workspaces.default_workspace()
    clash = services.dataset_name_clash(dataset_name.strip(), workspace)
    if clash:
        raise services.ImportRequestError(clash)
    if fmt and fmt not in services.import_format_names():
        raise services.ImportRequestError(
            f"unknown format {fmt!r}; choose one of {', '.join(services.import_format_names())}"
        )
    if file_type and file_type not in FILE_TYPES:
        raise services.ImportRequestError(f"unknown file type {file_type!r}; choose one of {', '.join(FILE_TYPES)}")
    name = f"{uuid.uuid4().hex}.upload"
    target = upload_dir() / name
    limit = settings.IMPORT_MAX_UPLOAD_BYTES
    size = 0
    with open(target, "wb") as out:
        for chunk in uploaded.chunks() if hasattr(uploaded, "chunks") else iter(lambda: uploaded.read(1 << 20), b""):
            size += len(chunk)
            if size > limit:
                out.close()
                target.unlink(missing_ok=True)
                raise UploadTooLarge(
                    f"the file is larger than the upload limit of {limit:,} bytes (IMPORT_MAX_UPLOAD_BYTES)"
                )
            out.write(chunk)
    job = ImportJob.objects.create(
        dataset_name=dataset_name.strip(),
        workspace=workspace,
        format=fmt,
        file_type=file_type,
        skip_invalid=skip_invalid,
        source_name=Path(getattr(uploaded, "name", "") or "upload").name[:500],
        upload_path=name,
        size=size,
        created_by=created_by,
    )
    if enqueue:
        runner.enqueue(job)
    return job


def _start(job: ImportJob, now) -> list[str]:
    job.started_at, job.progress_done, job.progress_total = now, 0, job.size
    return ["started_at", "progress_done", "progress_total"]


def _forget_result(job: ImportJob) -> list[str]:
    if job.rejects_path:
        (upload_dir() / job.rejects_path).unlink(missing_ok=True)
    job.report, job.rejects_path = None, ""
    return ["report", "rejects_path"]


def _execute(execution: Execution) -> None:
    job: ImportJob = execution.job
    source = upload_dir() / job.upload_path
    if not job.upload_path or not source.is_file():
        raise runner.JobFailed("the uploaded file is no longer on the server; upload it again")
    rejects = f"{job.upload_path}.rejects.jsonl" if job.skip_invalid else ""
    succeeded = []

    def succeed(report) -> None:
        execution.succeed(
            report=_public(report.to_dict()),
            dataset_id=report.dataset_id,
            progress_done=job.size,
            rejects_path=rejects if report.rejects_path else "",
        )
        succeeded.append(True)

    try:
        report = services.import_jsonl(
            dataset_name=job.dataset_name,
            source=source,
            fmt=job.format or None,
            skip_invalid=job.skip_invalid,
            rejects_path=upload_dir() / rejects if rejects else None,
            created_by=job.created_by,
            workspace=job.workspace,
            source_name=job.source_name,
            file_type=job.file_type or None,
            on_progress=lambda done, total: execution.beat(done=done, total=total or job.size),
            before_commit=succeed,
        )
        if not succeeded:  # a whole-file importer (e.g. MathArena proofs) commits on its own
            succeed(report)
    except services.ImportRejected as rejected:
        with transaction.atomic():
            locked = execution.owned(honour_cancel=False)
            locked.report = _public(rejected.report.to_dict())
            locked.save(update_fields=["report"])
        raise runner.JobFailed(rejected.report.summary().splitlines()[0]) from None
    source.unlink(missing_ok=True)
    _compute_search_documents_soon()


def _compute_search_documents_soon() -> None:
    """Send the task that computes the search documents of the committed rows (until then the search reads their
    texts). A broker that cannot be reached only delays them until the periodic task."""
    try:
        tasks.index_search_documents.delay()
    except Exception:
        logger.warning(
            "the search documents task could not reach the broker; the periodic task computes them", exc_info=True
        )


def _public(report: dict) -> dict:
    """The report as users see it: the rejects file by name only, never by its path on the server."""
    if report.get("rejects_path"):
        report["rejects_path"] = Path(report["rejects_path"]).name
    return report


def rejects_file(job: ImportJob) -> Path | None:
    if not job.rejects_path:
        return None
    path = upload_dir() / job.rejects_path
    return path if path.is_file() else None


def _describe(job: ImportJob) -> EventDetails:
    dataset_id = job.dataset_id
    if dataset_id is None:  # a rejected import into an existing dataset of its workspace still concerns it
        dataset_id = (
            Dataset.objects.filter(name=job.dataset_name, workspace_id=job.workspace_id)
            .values_list("pk", flat=True)
            .first()
        )
    report = job.report or {}
    data = {
        "import": {
            "id": job.pk,
            "url": f"/api/imports/{job.pk}/",
            "dataset": {"id": dataset_id, "name": job.dataset_name},
            "source_name": job.source_name,
            "format": report.get("format") or job.format,
            "file_type": report.get("file_type") or job.file_type,
            "skip_invalid": job.skip_invalid,
            "counts": {key: report[key] for key in REPORT_COUNTS if key in report},
        }
    }
    return EventDetails(data, dataset_id=dataset_id, workspace_id=job.workspace_id)


IMPORT = runner.register(
    JobKind(
        name="import",
        title="Import",
        model=ImportJob,
        execute=_execute,
        resumable=False,
        on_start=_start,
        reset=_forget_result,
        stale_setting="IMPORT_STALE_SECONDS",
        workspace_paths=("workspace",),
        events={ImportJob.Status.SUCCEEDED: IMPORT_FINISHED, ImportJob.Status.FAILED: IMPORT_FAILED},
        describe=_describe,
    )
)
